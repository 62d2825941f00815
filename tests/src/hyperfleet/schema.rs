//! Rust mirrors of the HyperFleet adapter framework's (v0.3.1) `AdapterTaskConfig` and
//! `AdapterConfig`, and the load-time rules it applies (`docs/hyperfleet-framework.md` §2.1–§2.6,
//! §3). Strict where the framework decodes strictly (`KnownFields(true)`: unknown keys are
//! errors); free-form where the framework is (`manifest`, `build`, defaults, condition values);
//! non-strict inside a `source:` mapping (the framework decodes it with a fresh, non-strict
//! decoder).
//!
//! Load order as in the framework: deployment config → version check → task config decode →
//! structural rules (first error only) → semantic rules (all errors). CEL is only *parsed* at load
//! by the framework; this module does not parse CEL (the conformance test does, with the `cel`
//! crate), so [`load`]'s semantic errors leave CEL out.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use super::template;

/// `^[a-z][a-zA-Z0-9_]*$`: names of resources, nested discoveries, preconditions, post actions.
static NAME_RULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z][a-zA-Z0-9_]*$").expect("valid pattern"));

/// The precondition operators that exist (§2.4); nothing else.
pub const OPERATORS: [&str; 8] = [
    "equals",
    "notEquals",
    "in",
    "notIn",
    "contains",
    "greaterThan",
    "lessThan",
    "exists",
];
/// `params[].type` values the framework converts to (§2.3); others fail at run time.
pub const PARAM_TYPES: [&str; 6] = ["string", "int", "int64", "float", "float64", "bool"];
/// Template variables that are always present (§2.1, §2.7).
pub const TEMPLATE_BUILTINS: [&str; 6] = ["adapter", "config", "env", "event", "now", "date"];

// ---------------------------------------------------------------------------------------------
// AdapterTaskConfig
// ---------------------------------------------------------------------------------------------

/// The task config: exactly four top-level keys (§2.2).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    #[serde(default)]
    pub params: Vec<Param>,
    #[serde(default)]
    pub preconditions: Vec<Precondition>,
    #[serde(default)]
    pub resources: Vec<Resource>,
    #[serde(default)]
    pub post: Option<Post>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub source: Option<Source>,
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    #[serde(default)]
    pub required: bool,
    /// Free-form.
    #[serde(default)]
    pub default: Option<Value>,
    #[serde(default)]
    pub description: Option<String>,
}

/// `source:` is a string (`event.id`, `env.X`, `config.x`, `<param>.path`) or a mapping with
/// exactly one of `api_call`, `expression`, `file` (v0.3.1).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Source {
    Path(String),
    Mapping(SourceMapping),
}

/// Decoded non-strictly, as the framework does (unknown keys inside are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct SourceMapping {
    #[serde(default)]
    pub api_call: Option<LooseApiCall>,
    #[serde(default)]
    pub expression: Option<String>,
    #[serde(default)]
    pub file: Option<FileSource>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FileSource {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub trim: Option<bool>,
}

/// An `api_call` decoded strictly (preconditions, post actions).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiCall {
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub timeout: Option<String>,
    #[serde(default)]
    pub retry_attempts: Option<i64>,
    #[serde(default)]
    pub retry_backoff: Option<String>,
    #[serde(default)]
    pub headers: Vec<Header>,
    #[serde(default)]
    pub body: Option<String>,
}

/// The same keys decoded non-strictly (inside a `source:` mapping).
#[derive(Debug, Clone, Deserialize)]
pub struct LooseApiCall {
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub timeout: Option<String>,
    #[serde(default)]
    pub retry_attempts: Option<i64>,
    #[serde(default)]
    pub retry_backoff: Option<String>,
    #[serde(default)]
    pub headers: Vec<LooseHeader>,
    #[serde(default)]
    pub body: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LooseHeader {
    pub name: String,
    pub value: String,
}

impl LooseApiCall {
    fn view(&self) -> ApiCallView<'_> {
        ApiCallView {
            method: &self.method,
            url: &self.url,
            body: self.body.as_deref(),
            headers: self.headers.iter().map(|h| h.value.as_str()).collect(),
        }
    }
}

impl ApiCall {
    fn view(&self) -> ApiCallView<'_> {
        ApiCallView {
            method: &self.method,
            url: &self.url,
            body: self.body.as_deref(),
            headers: self.headers.iter().map(|h| h.value.as_str()).collect(),
        }
    }
}

/// What the rules look at in either kind of `api_call`.
struct ApiCallView<'a> {
    method: &'a str,
    url: &'a str,
    body: Option<&'a str>,
    headers: Vec<&'a str>,
}

impl ApiCallView<'_> {
    fn templates(&self) -> Vec<&str> {
        let mut t = vec![self.url];
        t.extend(self.body);
        t.extend(self.headers.iter().copied());
        t
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Precondition {
    #[serde(default)]
    pub name: String,
    /// Deprecated in v0.3.1 (a load warning).
    #[serde(default)]
    pub api_call: Option<ApiCall>,
    #[serde(default)]
    pub capture: Vec<Capture>,
    #[serde(default)]
    pub conditions: Vec<Criterion>,
    #[serde(default)]
    pub expression: Option<String>,
    #[serde(default)]
    pub log: Option<Log>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub field: Option<String>,
    #[serde(default)]
    pub expression: Option<String>,
    #[serde(default)]
    pub default: Option<Value>,
}

/// One `conditions[]` entry of a precondition.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    #[serde(default)]
    pub field: String,
    #[serde(default)]
    pub operator: String,
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub values: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Log {
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub level: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub transport: Option<Transport>,
    /// Inline map (free-form) or `{ref: <file>}`.
    #[serde(default)]
    pub manifest: Option<Value>,
    #[serde(default)]
    pub discovery: Option<Discovery>,
    #[serde(default)]
    pub nested_discoveries: Vec<NestedDiscovery>,
    #[serde(default)]
    pub recreate_on_change: Option<bool>,
    #[serde(default)]
    pub lifecycle: Option<Lifecycle>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transport {
    #[serde(default)]
    pub client: String,
    #[serde(default)]
    pub maestro: Option<MaestroTransport>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaestroTransport {
    #[serde(default)]
    pub target_cluster: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Discovery {
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub by_name: Option<String>,
    #[serde(default)]
    pub by_selectors: Option<BySelectors>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BySelectors {
    #[serde(default)]
    pub label_selector: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NestedDiscovery {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub discovery: Option<Discovery>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lifecycle {
    #[serde(default)]
    pub create: Option<LifecycleCreate>,
    #[serde(default)]
    pub delete: Option<LifecycleDelete>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifecycleCreate {
    #[serde(default)]
    pub when: Option<When>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifecycleDelete {
    #[serde(default)]
    pub when: Option<When>,
    #[serde(default, rename = "propagationPolicy")]
    pub propagation_policy: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    #[serde(default)]
    pub expression: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Post {
    #[serde(default)]
    pub payloads: Vec<Payload>,
    #[serde(default)]
    pub post_actions: Vec<PostAction>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Payload {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub when: Option<When>,
    /// Free-form.
    #[serde(default)]
    pub build: Option<Value>,
    #[serde(default)]
    pub build_ref: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostAction {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub when: Option<When>,
    #[serde(default)]
    pub api_call: Option<ApiCall>,
    #[serde(default)]
    pub log: Option<Log>,
}

// ---------------------------------------------------------------------------------------------
// AdapterConfig (deployment config, §3.1)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterConfig {
    #[serde(default)]
    pub adapter: AdapterMeta,
    #[serde(default)]
    pub debug_config: Option<bool>,
    #[serde(default)]
    pub log: Option<LogConfig>,
    #[serde(default)]
    pub clients: Clients,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterMeta {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    #[serde(default)]
    pub level: Option<String>,
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub output: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clients {
    #[serde(default)]
    pub hyperfleet_api: Option<HyperfleetApiClient>,
    #[serde(default)]
    pub broker: Option<BrokerClient>,
    #[serde(default)]
    pub kubernetes: Option<KubernetesClient>,
    #[serde(default)]
    pub maestro: Option<MaestroClient>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperfleetApiClient {
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub timeout: Option<String>,
    #[serde(default)]
    pub base_delay: Option<String>,
    #[serde(default)]
    pub max_delay: Option<String>,
    #[serde(default)]
    pub retry_attempts: Option<i64>,
    #[serde(default)]
    pub retry_backoff: Option<String>,
    #[serde(default)]
    pub default_headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub auth: Option<ApiAuth>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiAuth {
    #[serde(default)]
    pub token_path: Option<String>,
    #[serde(default)]
    pub token_cache_ttl: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrokerClient {
    #[serde(default)]
    pub subscription_id: Option<String>,
    #[serde(default)]
    pub topic: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesClient {
    #[serde(default)]
    pub kube_config_path: Option<String>,
    #[serde(default)]
    pub qps: Option<f64>,
    #[serde(default)]
    pub burst: Option<i64>,
    #[serde(default)]
    pub api_version: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaestroClient {
    #[serde(default)]
    pub grpc_server_address: Option<String>,
    #[serde(default)]
    pub http_server_address: Option<String>,
    #[serde(default)]
    pub source_id: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub timeout: Option<String>,
    #[serde(default)]
    pub server_healthiness_timeout: Option<String>,
    #[serde(default)]
    pub retry_attempts: Option<i64>,
    #[serde(default)]
    pub keepalive: Option<MaestroKeepalive>,
    #[serde(default)]
    pub insecure: Option<bool>,
    #[serde(default)]
    pub auth: Option<MaestroAuth>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaestroKeepalive {
    #[serde(default)]
    pub time: Option<String>,
    #[serde(default)]
    pub timeout: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaestroAuth {
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    #[serde(default)]
    pub tls_config: Option<MaestroTls>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaestroTls {
    #[serde(default)]
    pub ca_file: Option<String>,
    #[serde(default)]
    pub cert_file: Option<String>,
    #[serde(default)]
    pub key_file: Option<String>,
    #[serde(default)]
    pub http_ca_file: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Loading and the rules
// ---------------------------------------------------------------------------------------------

/// Why a config does not load, by the stage that refuses it.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// YAML decode (unknown keys, wrong types).
    Decode(String),
    /// Deployment-config validation (`adapter.name is required`, backoff values).
    AdapterConfig(String),
    /// `adapter.version` major.minor differs from the framework's.
    Version(String),
    /// The first structural error (the framework stops at the first).
    Structural(String),
    /// All semantic errors.
    Semantic(Vec<String>),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Decode(e) => write!(f, "failed to parse YAML: {e}"),
            LoadError::AdapterConfig(e) => write!(f, "adapter config validation failed: {e}"),
            LoadError::Version(e) => write!(f, "adapter version validation failed: {e}"),
            LoadError::Structural(e) => write!(f, "task config validation failed: {e}"),
            LoadError::Semantic(e) => write!(
                f,
                "task config semantic validation failed: validation failed with {} error(s):\n  - {}",
                e.len(),
                e.join("\n  - ")
            ),
        }
    }
}

/// What the framework logs but accepts.
#[derive(Debug, Clone, Default)]
pub struct Warnings(pub Vec<String>);

/// YAML text → JSON value (the task config's free-form parts stay JSON values).
pub fn yaml_to_json(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

/// Decodes a task config strictly.
pub fn decode_task_config(text: &str) -> Result<TaskConfig, LoadError> {
    let value = yaml_to_json(text).map_err(LoadError::Decode)?;
    serde_json::from_value(value).map_err(|e| LoadError::Decode(e.to_string()))
}

/// Decodes and validates a deployment config against the framework's version `framework`
/// (e.g. `v0.3.1`).
pub fn load_adapter_config(text: &str, framework: &str) -> Result<AdapterConfig, LoadError> {
    let value = yaml_to_json(text).map_err(LoadError::Decode)?;
    let config: AdapterConfig =
        serde_json::from_value(value).map_err(|e| LoadError::Decode(e.to_string()))?;
    if config.adapter.name.is_empty() {
        return Err(LoadError::AdapterConfig(
            "adapter.name is required".to_owned(),
        ));
    }
    if let Some(api) = &config.clients.hyperfleet_api
        && let Some(backoff) = &api.retry_backoff
        && !["exponential", "linear", "constant"].contains(&backoff.as_str())
    {
        return Err(LoadError::AdapterConfig(format!(
            "clients.hyperfleet_api.retry_backoff {backoff:?} must be exponential, linear or constant"
        )));
    }
    if let Some(version) = config.adapter.version.as_deref().filter(|v| !v.is_empty()) {
        check_version(version, framework)?;
    }
    Ok(config)
}

/// `major.minor` of a semver string with an optional leading `v`.
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let v = version.strip_prefix('v').unwrap_or(version);
    let core = v.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let _patch: u64 = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((major, minor))
}

/// §3.2: when both parse as semver, major.minor must be equal. Not semver: skipped (a warning).
/// Dev builds (`0.0.0-*`, what `go run` stamps) skip the rule.
pub fn check_version(config: &str, framework: &str) -> Result<(), LoadError> {
    if framework.trim_start_matches('v').starts_with("0.0.0-") {
        return Ok(());
    }
    let (Some(c), Some(f)) = (major_minor(config), major_minor(framework)) else {
        return Ok(());
    };
    if c == f {
        return Ok(());
    }
    Err(LoadError::Version(format!(
        "adapter version mismatch: config {config:?} (major.minor={}.{}) != adapter {framework:?} (major.minor={}.{})",
        c.0, c.1, f.0, f.1
    )))
}

/// How a template string is used, for the variable rules.
#[derive(Debug, Clone)]
pub struct TemplateUse {
    /// Where, e.g. `resources[0].manifest`.
    pub location: String,
    pub text: String,
    /// The variables declared for it.
    pub declared: BTreeSet<String>,
}

/// Every CEL expression of the config, with where it is.
#[derive(Debug, Clone)]
pub struct CelUse {
    pub location: String,
    pub expression: String,
}

impl TaskConfig {
    /// Structural rules (§2.1–§2.6); the framework reports only the first, so this returns the
    /// first too. `env` is the deployment's environment (for required `env.*` params).
    pub fn structural(&self, env: &BTreeMap<String, String>) -> Result<(), LoadError> {
        let first = |e: String| Err(LoadError::Structural(e));
        for (i, p) in self.params.iter().enumerate() {
            if p.name.is_empty() {
                return first(format!("params[{i}].name is required"));
            }
            let Some(source) = &p.source else {
                return first(format!("params[{i}].source is required"));
            };
            match source {
                Source::Path(path) if path.is_empty() => {
                    return first(format!("params[{i}].source is required"));
                }
                Source::Path(path) => {
                    if let Some(var) = path.strip_prefix("env.")
                        && p.required
                        && p.default.is_none()
                        && env.get(var).is_none_or(String::is_empty)
                    {
                        return first(format!(
                            "params[{i}]: required environment variable {var} is not set"
                        ));
                    }
                }
                Source::Mapping(m) => {
                    let set = [
                        m.api_call.is_some(),
                        m.expression.is_some(),
                        m.file.is_some(),
                    ]
                    .iter()
                    .filter(|b| **b)
                    .count();
                    if set != 1 {
                        return first(format!(
                            "params[{i}].source: only one of 'api_call', 'expression', or 'file' may be set"
                        ));
                    }
                    if let Some(call) = &m.api_call {
                        check_api_call(&call.view(), &format!("params[{i}].source.api_call"))
                            .or_else(first)?;
                    }
                    if let Some(file) = &m.file
                        && file.path.is_empty()
                    {
                        return first(format!("params[{i}].source.file.path is required"));
                    }
                }
            }
        }
        for (i, pc) in self.preconditions.iter().enumerate() {
            name_rule(&pc.name, &format!("preconditions[{i}].name")).or_else(first)?;
            if pc.api_call.is_none() && pc.conditions.is_empty() && pc.expression.is_none() {
                return first(format!(
                    "preconditions[{i}]: must specify api_call, conditions or expression"
                ));
            }
            if let Some(call) = &pc.api_call {
                check_api_call(&call.view(), &format!("preconditions[{i}].api_call"))
                    .or_else(first)?;
            }
            for (j, c) in pc.capture.iter().enumerate() {
                if c.name.is_empty() {
                    return first(format!("preconditions[{i}].capture[{j}].name is required"));
                }
                if c.field.is_some() == c.expression.is_some() {
                    return first(format!(
                        "preconditions[{i}].capture[{j}]: exactly one of field or expression"
                    ));
                }
            }
            for (j, c) in pc.conditions.iter().enumerate() {
                if c.field.is_empty() {
                    return first(format!(
                        "preconditions[{i}].conditions[{j}].field is required"
                    ));
                }
                if !OPERATORS.contains(&c.operator.as_str()) {
                    return first(format!(
                        "preconditions[{i}].conditions[{j}].operator: invalid operator {:?}, must be one of: {}",
                        c.operator,
                        OPERATORS.join(", ")
                    ));
                }
            }
            if let Some(log) = &pc.log {
                log_rule(log, &format!("preconditions[{i}].log")).or_else(first)?;
            }
        }
        let mut names = BTreeSet::new();
        for (i, r) in self.resources.iter().enumerate() {
            name_rule(&r.name, &format!("resources[{i}].name")).or_else(first)?;
            if !names.insert(r.name.as_str()) {
                return first("resources: contains duplicate name values".to_owned());
            }
            if r.manifest.is_none() {
                return first(format!("resources[{i}].manifest is required"));
            }
            let Some(d) = &r.discovery else {
                return first(format!("resources[{i}].discovery is required"));
            };
            discovery_rule(d, &format!("resources[{i}].discovery")).or_else(first)?;
            if let Some(t) = &r.transport
                && !["kubernetes", "maestro"].contains(&t.client.as_str())
            {
                return first(format!(
                    "resources[{i}].transport.client {:?} must be kubernetes or maestro",
                    t.client
                ));
            }
            for (j, n) in r.nested_discoveries.iter().enumerate() {
                let at = format!("resources[{i}].nested_discoveries[{j}]");
                name_rule(&n.name, &format!("{at}.name")).or_else(first)?;
                let Some(d) = &n.discovery else {
                    return first(format!("{at}.discovery is required"));
                };
                discovery_rule(d, &format!("{at}.discovery")).or_else(first)?;
            }
            if let Some(l) = &r.lifecycle {
                if let Some(c) = &l.create
                    && c.when
                        .as_ref()
                        .and_then(|w| w.expression.as_ref())
                        .is_none()
                {
                    return first(format!(
                        "resources[{i}].lifecycle.create.when.expression is required"
                    ));
                }
                if let Some(d) = &l.delete {
                    if d.when
                        .as_ref()
                        .and_then(|w| w.expression.as_ref())
                        .is_none()
                    {
                        return first(format!(
                            "resources[{i}].lifecycle.delete.when.expression is required"
                        ));
                    }
                    if let Some(p) = &d.propagation_policy
                        && !["Background", "Foreground", "Orphan"].contains(&p.as_str())
                    {
                        return first(format!("invalid propagationPolicy {p:?}"));
                    }
                }
            }
        }
        if let Some(post) = &self.post {
            for (i, p) in post.payloads.iter().enumerate() {
                if p.name.is_empty() {
                    return first(format!("post.payloads[{i}].name is required"));
                }
                match (&p.build, &p.build_ref) {
                    (Some(_), Some(_)) => {
                        return first(format!(
                            "post.payloads[{i}]: 'build' and 'build_ref' are mutually exclusive"
                        ));
                    }
                    (None, None) => {
                        return first(format!(
                            "post.payloads[{i}]: one of 'build' or 'build_ref' is required"
                        ));
                    }
                    _ => {}
                }
                if let Some(w) = &p.when
                    && w.expression.is_none()
                {
                    return first(format!("post.payloads[{i}].when.expression is required"));
                }
            }
            for (i, a) in post.post_actions.iter().enumerate() {
                name_rule(&a.name, &format!("post.post_actions[{i}].name")).or_else(first)?;
                if let Some(w) = &a.when
                    && w.expression.is_none()
                {
                    return first(format!(
                        "post.post_actions[{i}].when.expression is required"
                    ));
                }
                if let Some(call) = &a.api_call {
                    check_api_call(&call.view(), &format!("post.post_actions[{i}].api_call"))
                        .or_else(first)?;
                }
                if let Some(log) = &a.log {
                    log_rule(log, &format!("post.post_actions[{i}].log")).or_else(first)?;
                }
            }
        }
        Ok(())
    }

    /// Semantic rules except CEL parsing: template variables, condition values, transport.
    /// `ref_files` maps a `manifest.ref`/`build_ref` to its text (when the caller resolved it).
    pub fn semantic(&self, ref_files: &BTreeMap<String, String>) -> Vec<String> {
        let mut errors = Vec::new();
        for t in self.templates(ref_files) {
            match template::roots(&t.text) {
                Err(e) => errors.push(format!("{}: template parse error: {e}", t.location)),
                Ok(roots) => {
                    for root in roots {
                        if root == "resources" {
                            errors.push(format!(
                                "{}: template variable \"resources\" is not in the template data (CEL only)",
                                t.location
                            ));
                        } else if !t.declared.contains(&root) {
                            errors.push(format!(
                                "{}: undefined template variable {root:?}",
                                t.location
                            ));
                        }
                    }
                }
            }
        }
        for (i, pc) in self.preconditions.iter().enumerate() {
            for (j, c) in pc.conditions.iter().enumerate() {
                let at = format!("preconditions[{i}].conditions[{j}]");
                let value = c.value.as_ref().or(c.values.as_ref());
                match c.operator.as_str() {
                    "exists" if value.is_some() => {
                        errors.push(format!("{at}: operator exists must have no value"));
                    }
                    "in" | "notIn" if !value.is_some_and(Value::is_array) => {
                        errors.push(format!("{at}: operator {} needs a list", c.operator));
                    }
                    "exists" | "in" | "notIn" => {}
                    _ if value.is_none() => {
                        errors.push(format!("{at}: operator {} needs a value", c.operator));
                    }
                    _ => {}
                }
            }
        }
        for (i, r) in self.resources.iter().enumerate() {
            let client = r
                .transport
                .as_ref()
                .map_or("kubernetes", |t| t.client.as_str());
            if client == "maestro"
                && r.transport
                    .as_ref()
                    .and_then(|t| t.maestro.as_ref())
                    .is_none_or(|m| m.target_cluster.is_empty())
            {
                errors.push(format!(
                    "resources[{i}].transport.maestro.target_cluster is required"
                ));
            }
        }
        errors
    }

    /// Load warnings (deprecations, relative file paths).
    pub fn warnings(&self) -> Warnings {
        let mut w = Vec::new();
        for (i, pc) in self.preconditions.iter().enumerate() {
            if pc.api_call.is_some() {
                w.push(format!("preconditions[{i}].api_call: DEPRECATED: … Move the api_call block to a params entry with source.api_call instead."));
            }
        }
        for (i, p) in self.params.iter().enumerate() {
            if let Some(Source::Mapping(SourceMapping {
                file: Some(file), ..
            })) = &p.source
                && !file.path.starts_with('/')
            {
                w.push(format!(
                    "params[{i}].source.file.path {:?} is relative",
                    file.path
                ));
            }
        }
        Warnings(w)
    }

    /// Names declared for templates outside params (captures, payloads) plus built-ins.
    fn global_declared(&self) -> BTreeSet<String> {
        let mut d: BTreeSet<String> = TEMPLATE_BUILTINS.iter().map(|s| s.to_string()).collect();
        d.extend(self.params.iter().map(|p| p.name.clone()));
        for pc in &self.preconditions {
            d.extend(pc.capture.iter().map(|c| c.name.clone()));
        }
        if let Some(post) = &self.post {
            d.extend(post.payloads.iter().map(|p| p.name.clone()));
        }
        d
    }

    /// Every template the framework renders, with the variables declared for it.
    pub fn templates(&self, ref_files: &BTreeMap<String, String>) -> Vec<TemplateUse> {
        let global = self.global_declared();
        let mut out = Vec::new();
        let mut add = |location: String, text: &str, declared: &BTreeSet<String>| {
            out.push(TemplateUse {
                location,
                text: text.to_owned(),
                declared: declared.clone(),
            });
        };
        let mut earlier: BTreeSet<String> =
            TEMPLATE_BUILTINS.iter().map(|s| s.to_string()).collect();
        for (i, p) in self.params.iter().enumerate() {
            if let Some(Source::Mapping(SourceMapping {
                api_call: Some(call),
                ..
            })) = &p.source
            {
                for t in call.view().templates() {
                    add(format!("params[{i}].source.api_call"), t, &earlier);
                }
            }
            earlier.insert(p.name.clone());
        }
        for (i, pc) in self.preconditions.iter().enumerate() {
            if let Some(call) = &pc.api_call {
                for t in call.view().templates() {
                    add(format!("preconditions[{i}].api_call"), t, &global);
                }
            }
        }
        for (i, r) in self.resources.iter().enumerate() {
            if let Some(manifest) = &r.manifest {
                let at = format!("resources[{i}].manifest");
                match manifest.get("ref").and_then(Value::as_str) {
                    Some(file) if manifest.as_object().is_some_and(|m| m.len() == 1) => {
                        if let Some(text) = ref_files.get(file) {
                            add(at, text, &global);
                        }
                    }
                    _ => {
                        for s in strings_and_keys(manifest) {
                            add(at.clone(), &s, &global);
                        }
                    }
                }
            }
            let mut discoveries: Vec<(String, &Discovery)> = Vec::new();
            if let Some(d) = &r.discovery {
                discoveries.push((format!("resources[{i}].discovery"), d));
            }
            for (j, n) in r.nested_discoveries.iter().enumerate() {
                if let Some(d) = &n.discovery {
                    discoveries.push((format!("resources[{i}].nested_discoveries[{j}]"), d));
                }
            }
            for (at, d) in discoveries {
                for s in d.namespace.iter().chain(d.by_name.iter()) {
                    add(at.clone(), s, &global);
                }
                if let Some(sel) = &d.by_selectors {
                    for (k, v) in &sel.label_selector {
                        add(at.clone(), k, &global);
                        add(at.clone(), v, &global);
                    }
                }
            }
            if let Some(m) = r.transport.as_ref().and_then(|t| t.maestro.as_ref()) {
                add(
                    format!("resources[{i}].transport.maestro.target_cluster"),
                    &m.target_cluster,
                    &global,
                );
            }
        }
        if let Some(post) = &self.post {
            for (i, p) in post.payloads.iter().enumerate() {
                let at = format!("post.payloads[{i}].build");
                let build = match (&p.build, &p.build_ref) {
                    (Some(b), _) => Some(b.clone()),
                    (None, Some(file)) => ref_files.get(file).and_then(|t| yaml_to_json(t).ok()),
                    _ => None,
                };
                if let Some(build) = build {
                    for s in build_strings(&build) {
                        add(at.clone(), &s, &global);
                    }
                }
            }
            for (i, a) in post.post_actions.iter().enumerate() {
                if let Some(call) = &a.api_call {
                    for t in call.view().templates() {
                        add(format!("post.post_actions[{i}].api_call"), t, &global);
                    }
                }
            }
        }
        out
    }

    /// Every CEL expression of the config, with where it is.
    pub fn cel_expressions(&self) -> Vec<CelUse> {
        let mut out = Vec::new();
        let mut add = |location: String, expression: &str| {
            out.push(CelUse {
                location,
                expression: expression.to_owned(),
            })
        };
        for (i, p) in self.params.iter().enumerate() {
            if let Some(Source::Mapping(SourceMapping {
                expression: Some(e),
                ..
            })) = &p.source
            {
                add(format!("params[{i}].source.expression"), e);
            }
        }
        for (i, pc) in self.preconditions.iter().enumerate() {
            if let Some(e) = &pc.expression {
                add(format!("preconditions[{i}].expression"), e);
            }
            for (j, c) in pc.capture.iter().enumerate() {
                if let Some(e) = &c.expression {
                    add(format!("preconditions[{i}].capture[{j}].expression"), e);
                }
            }
        }
        for (i, r) in self.resources.iter().enumerate() {
            if let Some(l) = &r.lifecycle {
                for (what, w) in [
                    ("create", l.create.as_ref().and_then(|c| c.when.as_ref())),
                    ("delete", l.delete.as_ref().and_then(|d| d.when.as_ref())),
                ] {
                    if let Some(e) = w.and_then(|w| w.expression.as_ref()) {
                        add(
                            format!("resources[{i}].lifecycle.{what}.when.expression"),
                            e,
                        );
                    }
                }
            }
        }
        if let Some(post) = &self.post {
            for (i, p) in post.payloads.iter().enumerate() {
                if let Some(e) = p.when.as_ref().and_then(|w| w.expression.as_ref()) {
                    add(format!("post.payloads[{i}].when.expression"), e);
                }
                if let Some(build) = &p.build {
                    let mut defs = Vec::new();
                    value_definitions(build, &format!("post.payloads[{i}].build"), &mut defs);
                    for (at, e) in defs {
                        add(at, &e);
                    }
                }
            }
            for (i, a) in post.post_actions.iter().enumerate() {
                if let Some(e) = a.when.as_ref().and_then(|w| w.expression.as_ref()) {
                    add(format!("post.post_actions[{i}].when.expression"), e);
                }
            }
        }
        out
    }
}

/// A map that is a value definition in a payload build (§2.6).
pub fn is_value_definition(map: &serde_json::Map<String, Value>) -> bool {
    map.contains_key("field") || map.contains_key("expression")
}

fn value_definitions(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if is_value_definition(m) => {
            if let Some(e) = m.get("expression").and_then(Value::as_str) {
                out.push((at.to_owned(), e.to_owned()));
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                value_definitions(v, &format!("{at}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                value_definitions(v, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The template strings of a payload build: keys, and string values outside value definitions.
fn build_strings(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) if is_value_definition(m) => {}
            Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    walk(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::String(s) => out.push(s.clone()),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

/// Every string and key in a free-form value (a manifest is rendered as one text).
pub fn strings_and_keys(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    walk(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::String(s) => out.push(s.clone()),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

fn name_rule(name: &str, at: &str) -> Result<(), String> {
    if NAME_RULE.is_match(name) {
        Ok(())
    } else {
        Err(format!(
            "{at} {name:?}: must start with lowercase letter and contain only letters, numbers, underscores (no hyphens)"
        ))
    }
}

fn log_rule(log: &Log, at: &str) -> Result<(), String> {
    match log.level.as_deref() {
        None | Some("debug" | "info" | "warning" | "error") => Ok(()),
        Some(other) => Err(format!(
            "{at}.level {other:?} must be debug, info, warning or error"
        )),
    }
}

fn discovery_rule(d: &Discovery, at: &str) -> Result<(), String> {
    match (&d.by_name, &d.by_selectors) {
        (Some(name), None) if !name.is_empty() => Ok(()),
        (None, Some(sel)) if !sel.label_selector.is_empty() => Ok(()),
        (None, Some(_)) => Err(format!(
            "{at}.by_selectors.label_selector needs at least one entry"
        )),
        _ => Err(format!("{at}: exactly one of by_name or by_selectors")),
    }
}

fn check_api_call(call: &ApiCallView<'_>, at: &str) -> Result<(), String> {
    if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&call.method) {
        return Err(format!(
            "{at}.method {:?} must be one of GET POST PUT PATCH DELETE",
            call.method
        ));
    }
    if call.url.is_empty() {
        return Err(format!("{at}.url is required"));
    }
    Ok(())
}
