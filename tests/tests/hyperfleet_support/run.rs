//! One event through the framework's pipeline (`docs/hyperfleet-framework.md` §1): params →
//! preconditions → resources → post (payload build, post actions), emulated over a task config
//! with a fake HyperFleet API (GET answers) and a fake transport (what discovery returns after the
//! apply). Emulated: param sources (`event.`, `env.`, `config.`, `<param>.`, `api_call`,
//! `expression`), `type` conversion, required/default, preconditions with `expression` and
//! `conditions` (dot paths), `lifecycle.create.when`, the execution metadata `adapter`, payload
//! `when` and build rules (§2.6), post-action `when`, URL prefixing with a base URL. Not
//! emulated (the run fails, naming it): `file` sources, precondition `api_call`/captures,
//! JSONPath fields, `build_ref`, `manifest.ref`, deletion, nested discoveries.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use cel::Value as CelValue;
use jiff::Timestamp;
use serde_json::{Map, Value, json};
use testbed::hyperfleet::schema::{self, Source, SourceMapping, TaskConfig};
use testbed::hyperfleet::template;

use super::cel_env::{CelError, Evaluation, Numbers, to_cel};

/// Answers a GET (prefixed URL): the JSON body, or an error text (non-2xx).
pub type Api<'a> = &'a dyn Fn(&str, &str) -> Result<Value, String>;
/// Applies a rendered manifest (resource name, manifest) and returns what discovery finds
/// right after, or the apply error.
pub type Transport<'a> = &'a dyn Fn(&str, &Value) -> Result<Option<Value>, String>;

/// What the harness provides the run with.
pub struct World<'a> {
    pub adapter_name: String,
    pub adapter_version: String,
    /// `clients.hyperfleet_api.base_url` is set (relative URLs get the API prefix).
    pub base_url: bool,
    pub env: BTreeMap<String, String>,
    /// The CloudEvent `data`.
    pub event: Value,
    pub api: Api<'a>,
    pub transport: Transport<'a>,
    pub now: Timestamp,
    /// Every CEL expression evaluated, across runs.
    pub evaluated: Arc<Mutex<BTreeSet<String>>>,
}

/// A request a post action sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub method: String,
    pub url: String,
    pub body: Option<String>,
}

/// What the event did.
#[derive(Debug, Default)]
pub struct Run {
    /// The event stopped before post (a required param failed): nothing reported.
    pub stopped: Option<String>,
    pub params: Map<String, Value>,
    /// Rendered manifests by resource name.
    pub manifests: BTreeMap<String, Value>,
    pub adapter: Value,
    /// Built payloads (as JSON values) by name.
    pub payloads: BTreeMap<String, Value>,
    pub sent: Vec<Sent>,
    /// WARN logs of the framework (value definitions that fell back to default/null) and
    /// serialisation traps: each is a failure for our config.
    pub warnings: Vec<String>,
    /// Errors of the post phase (payload build, post action).
    pub post_errors: Vec<String>,
}

fn dot_path<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    let mut cur = root;
    for seg in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(seg)?,
            Value::Array(items) => items.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Go `%v` of a JSON value (for `type: string`).
fn go_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => template::go_float(n.as_f64().unwrap_or_default()),
        other => other.to_string(),
    }
}

fn convert(name: &str, v: Value, type_: &str) -> Result<Value, String> {
    let fail =
        |why: String| format!("failed to convert parameter '{name}' to type '{type_}': {why}");
    match type_ {
        "string" => Ok(Value::String(go_string(&v))),
        "int" | "int64" => match &v {
            Value::Number(n) => Ok(json!(
                n.as_i64().unwrap_or(n.as_f64().unwrap_or(0.0) as i64)
            )),
            Value::String(s) => s
                .trim()
                .parse::<i64>()
                .map(|i| json!(i))
                .map_err(|e| fail(e.to_string())),
            Value::Bool(b) => Ok(json!(i64::from(*b))),
            other => Err(fail(format!("cannot convert {other}"))),
        },
        "float" | "float64" => match &v {
            Value::Number(n) => Ok(json!(n.as_f64().unwrap_or_default())),
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .map(|f| json!(f))
                .map_err(|e| fail(e.to_string())),
            other => Err(fail(format!("cannot convert {other}"))),
        },
        "bool" => match &v {
            Value::Bool(b) => Ok(json!(b)),
            Value::String(s) => s
                .parse::<bool>()
                .map(|b| json!(b))
                .map_err(|e| fail(e.to_string())),
            other => Err(fail(format!("cannot convert {other}"))),
        },
        other => Err(fail(format!(
            "unsupported type: {other} (supported: string, int, int64, float, float64, bool)"
        ))),
    }
}

fn prefixed(url: &str, base_url: bool) -> String {
    if !base_url || url.starts_with("http://") || url.starts_with("https://") {
        return url.to_owned();
    }
    let rel = url.trim_start_matches('/');
    if rel.starts_with("api/") {
        format!("/{rel}")
    } else {
        format!("/api/hyperfleet/v1/{rel}")
    }
}

impl World<'_> {
    /// The template data: params (and payloads) plus `adapter{name,version}`, `config`, `env`,
    /// `event`.
    fn template_data(&self, vars: &Map<String, Value>) -> Value {
        let mut data = vars.clone();
        data.insert(
            "adapter".into(),
            json!({"name": self.adapter_name, "version": self.adapter_version}),
        );
        data.insert("config".into(), json!({}));
        data.insert("env".into(), json!(self.env));
        data.insert("event".into(), self.event.clone());
        Value::Object(data)
    }

    fn render(&self, text: &str, vars: &Map<String, Value>) -> Result<String, String> {
        template::render(text, &self.template_data(vars), self.now)
    }

    /// CEL variables: params, `adapter` (metadata), `resources`, `event`, `env`.
    fn cel(
        &self,
        params: &Map<String, Value>,
        adapter: &Value,
        resources: &Map<String, Value>,
    ) -> Evaluation {
        let mut vars: Vec<(String, CelValue)> = params
            .iter()
            .map(|(k, v)| (k.clone(), to_cel(v, Numbers::Int)))
            .collect();
        vars.push(("adapter".into(), to_cel(adapter, Numbers::Int)));
        vars.push((
            "resources".into(),
            to_cel(&Value::Object(resources.clone()), Numbers::Int),
        ));
        vars.push(("event".into(), to_cel(&self.event, Numbers::Float)));
        vars.push(("env".into(), to_cel(&json!(self.env), Numbers::Int)));
        let mut evaluation = Evaluation::new(vars, self.now);
        evaluation.log = Arc::clone(&self.evaluated);
        evaluation
    }

    /// Runs one event.
    pub fn run(&self, config: &TaskConfig) -> Run {
        let mut run = Run::default();
        let event = template::floats(&self.event);
        let mut adapter = json!({
            "executionStatus": "success", "resourcesSkipped": false, "skipReason": "",
            "errorReason": "", "errorMessage": "", "executionError": null, "resourceErrors": {},
        });
        let mut resources = Map::new();
        // 1. params
        for p in &config.params {
            let value = self.param(p, &run.params, &event, &adapter);
            let value = match value {
                Ok(Some(v)) if !v.is_null() && v != json!("") => Ok(Some(v)),
                Ok(_) => Ok(p.default.clone()),
                Err(e) if !p.required => {
                    if p.default.is_none() {
                        run.warnings.push(format!("param {}: {e}", p.name));
                    }
                    Ok(p.default.clone())
                }
                Err(e) => Err(e),
            };
            match value {
                Ok(Some(v)) => {
                    run.params.insert(p.name.clone(), v);
                }
                Ok(None) if p.required => {
                    run.stopped = Some(format!("required param {} has no value", p.name));
                    return run;
                }
                Ok(None) => {}
                Err(e) => {
                    run.stopped = Some(format!("required param {} failed: {e}", p.name));
                    return run;
                }
            }
        }
        // 2. preconditions
        for pc in &config.preconditions {
            if pc.api_call.is_some() || !pc.capture.is_empty() {
                run.stopped = Some(format!(
                    "precondition {}: api_call/capture is deprecated and not emulated",
                    pc.name
                ));
                return run;
            }
            let met = if !pc.conditions.is_empty() {
                self.criteria(pc, &run.params, &adapter)
            } else if let Some(e) = &pc.expression {
                match self.cel(&run.params, &adapter, &resources).eval(e) {
                    Ok(CelValue::Bool(b)) => Ok(b),
                    Ok(other) => Err(format!("expression is not a bool: {other:?}")),
                    Err(e) => Err(format!("CEL error: {e}")),
                }
            } else {
                Ok(true)
            };
            match met {
                Ok(true) => {}
                Ok(false) => {
                    adapter["resourcesSkipped"] = json!(true);
                    adapter["skipReason"] = json!(format!("precondition '{}' not met", pc.name));
                    break;
                }
                Err(e) => {
                    adapter["resourcesSkipped"] = json!(true);
                    adapter["skipReason"] =
                        json!(format!("precondition '{}' not met: {e}", pc.name));
                    break;
                }
            }
        }
        // 3. resources
        if adapter["resourcesSkipped"] != true {
            for r in &config.resources {
                if let Err(e) = self.resource(
                    r,
                    &run.params,
                    &mut adapter,
                    &mut resources,
                    &mut run.manifests,
                ) {
                    adapter["executionStatus"] = json!("failed");
                    adapter["errorReason"] = json!("ResourceFailed");
                    adapter["errorMessage"] = json!(e);
                    adapter["executionError"] =
                        json!({"phase": "resources", "step": r.name, "message": e});
                    break;
                }
            }
        }
        run.adapter = adapter.clone();
        // 4. post
        let Some(post) = &config.post else {
            return run;
        };
        let eval = self.cel(&run.params, &adapter, &resources);
        let mut vars = run.params.clone();
        let mut built = BTreeMap::new();
        for p in &post.payloads {
            if let Some(e) = p.when.as_ref().and_then(|w| w.expression.as_ref()) {
                match eval.eval(e) {
                    Ok(CelValue::Bool(true)) => {}
                    Ok(CelValue::Bool(false)) => continue,
                    other => {
                        run.post_errors
                            .push(format!("payload {} when: {other:?}", p.name));
                        return run;
                    }
                }
            }
            let Some(build) = &p.build else {
                run.post_errors
                    .push(format!("payload {}: build_ref is not emulated", p.name));
                return run;
            };
            match self.build(build, &vars, &eval, &mut run.warnings) {
                Ok(v) => {
                    vars.insert(p.name.clone(), Value::String(v.to_string()));
                    built.insert(p.name.clone(), v);
                }
                Err(e) => {
                    run.post_errors.push(format!("payload {}: {e}", p.name));
                    return run;
                }
            }
        }
        run.warnings.extend(
            eval.notes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        run.payloads = built;
        for a in &post.post_actions {
            if let Some(e) = a.when.as_ref().and_then(|w| w.expression.as_ref()) {
                match eval.eval(e) {
                    Ok(CelValue::Bool(true)) => {}
                    Ok(CelValue::Bool(false)) => continue,
                    other => {
                        run.post_errors
                            .push(format!("post action {} when: {other:?}", a.name));
                        return run;
                    }
                }
            }
            let Some(call) = &a.api_call else { continue };
            // A body that references a payload that was not built: skipped.
            if let Some(body) = &call.body
                && let Ok(roots) = template::roots(body)
                && post
                    .payloads
                    .iter()
                    .any(|p| roots.contains(&p.name) && !run.payloads.contains_key(&p.name))
            {
                continue;
            }
            let rendered = self.render(&call.url, &vars).and_then(|url| {
                let body = call
                    .body
                    .as_ref()
                    .map(|b| self.render(b, &vars))
                    .transpose()?;
                Ok((url, body))
            });
            match rendered {
                Ok((url, body)) => run.sent.push(Sent {
                    method: call.method.clone(),
                    url: prefixed(&url, self.base_url),
                    body,
                }),
                Err(e) => {
                    run.post_errors.push(format!("post action {}: {e}", a.name));
                    return run;
                }
            }
        }
        run
    }

    fn param(
        &self,
        p: &schema::Param,
        params: &Map<String, Value>,
        event: &Value,
        adapter: &Value,
    ) -> Result<Option<Value>, String> {
        let typed = |v: Option<Value>| -> Result<Option<Value>, String> {
            match (v, &p.type_) {
                (Some(v), Some(t)) if !v.is_null() => convert(&p.name, v, t).map(Some),
                (v, _) => Ok(v),
            }
        };
        match p.source.as_ref() {
            None => Err("no source".into()),
            Some(Source::Path(path)) => {
                if let Some(var) = path.strip_prefix("env.") {
                    return typed(self.env.get(var).map(|v| json!(v)));
                }
                if let Some(rest) = path.strip_prefix("event.") {
                    return typed(dot_path(event, rest).cloned());
                }
                if path.starts_with("config.") {
                    return Err("config.* sources are not emulated".into());
                }
                let (head, rest) = path.split_once('.').unwrap_or((path, ""));
                if let Some(earlier) = params.get(head) {
                    let v = if rest.is_empty() {
                        Some(earlier.clone())
                    } else {
                        dot_path(earlier, rest).cloned()
                    };
                    return typed(v);
                }
                typed(dot_path(event, path).cloned())
            }
            Some(Source::Mapping(SourceMapping {
                api_call: Some(call),
                ..
            })) => {
                let url = self.render(&call.url, params)?;
                let body = (self.api)(&call.method, &prefixed(&url, self.base_url))?;
                Ok(Some(template::floats(&body)))
            }
            Some(Source::Mapping(SourceMapping {
                expression: Some(e),
                ..
            })) => {
                let eval = self.cel(params, adapter, &Map::new());
                let value = eval.eval_json(e).map_err(|e| e.to_string())?;
                let notes = eval.notes.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if notes.is_empty() {
                    Ok(Some(value))
                } else {
                    Err(notes.join("; "))
                }
            }
            Some(Source::Mapping(_)) => Err("file sources are not emulated".into()),
        }
    }

    fn criteria(
        &self,
        pc: &schema::Precondition,
        params: &Map<String, Value>,
        adapter: &Value,
    ) -> Result<bool, String> {
        let mut scope = params.clone();
        scope.insert("adapter".into(), adapter.clone());
        scope.insert("event".into(), self.event.clone());
        scope.insert("env".into(), json!(self.env));
        let scope = Value::Object(scope);
        for c in &pc.conditions {
            if c.field.starts_with('{') || c.field.starts_with('$') {
                return Err(format!("JSONPath field {:?} is not emulated", c.field));
            }
            let actual = dot_path(&scope, &c.field);
            let want = c.value.as_ref().or(c.values.as_ref());
            let eq =
                |a: &Value, b: &Value| a == b || (a.as_f64().is_some() && a.as_f64() == b.as_f64());
            let ok = match (c.operator.as_str(), actual, want) {
                ("exists", a, _) => a.is_some_and(|a| !a.is_null()),
                ("equals", Some(a), Some(w)) => eq(a, w),
                ("notEquals", a, Some(w)) => a.is_none_or(|a| !eq(a, w)),
                ("in", Some(a), Some(Value::Array(ws))) => ws.iter().any(|w| eq(a, w)),
                ("notIn", a, Some(Value::Array(ws))) => {
                    a.is_none_or(|a| !ws.iter().any(|w| eq(a, w)))
                }
                ("contains", Some(Value::String(a)), Some(Value::String(w))) => {
                    a.contains(w.as_str())
                }
                ("contains", Some(Value::Array(a)), Some(w)) => a.iter().any(|x| eq(x, w)),
                ("greaterThan", Some(a), Some(w)) => a.as_f64() > w.as_f64(),
                ("lessThan", Some(a), Some(w)) => a.as_f64() < w.as_f64(),
                _ => false,
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn resource(
        &self,
        r: &schema::Resource,
        params: &Map<String, Value>,
        adapter: &mut Value,
        resources: &mut Map<String, Value>,
        manifests: &mut BTreeMap<String, Value>,
    ) -> Result<(), String> {
        if !r.nested_discoveries.is_empty() {
            return Err("nested discoveries are not emulated".into());
        }
        let manifest = r.manifest.as_ref().ok_or("no manifest")?;
        if manifest.get("ref").is_some() {
            return Err("manifest.ref is not emulated".into());
        }
        let rendered = render_value(manifest, &|s| self.render(s, params))?;
        manifests.insert(r.name.clone(), rendered.clone());
        if let Some(l) = &r.lifecycle {
            if l.delete.is_some() {
                return Err("lifecycle.delete is not emulated".into());
            }
            if let Some(e) = l
                .create
                .as_ref()
                .and_then(|c| c.when.as_ref())
                .and_then(|w| w.expression.as_ref())
            {
                let go = matches!(
                    self.cel(params, adapter, resources).eval(e),
                    Ok(CelValue::Bool(true))
                );
                if !go {
                    adapter["resourcesSkipped"] = json!(true);
                    adapter["skipReason"] = json!(format!(
                        "{}: lifecycle.create.when condition evaluated to false",
                        r.name
                    ));
                    return Ok(());
                }
            }
        }
        if let Some(d) = &r.discovery {
            if let Some(by_name) = &d.by_name {
                let name = self.render(by_name, params)?;
                if rendered["metadata"]["name"] != json!(name) {
                    return Err(format!(
                        "discovery.by_name renders {name:?} but the manifest is named {}",
                        rendered["metadata"]["name"]
                    ));
                }
            }
            if let Some(ns) = &d.namespace {
                self.render(ns, params)?;
            }
        }
        match (self.transport)(&r.name, &rendered)? {
            Some(found) => {
                resources.insert(r.name.clone(), found);
                Ok(())
            }
            None => Err(format!("{}: discovery found nothing after apply", r.name)),
        }
    }

    /// §2.6: value definitions → CEL/path result (runtime error → default or null, with a
    /// WARN); other maps and lists recurse; strings are templates; the rest passes through.
    fn build(
        &self,
        v: &Value,
        vars: &Map<String, Value>,
        eval: &Evaluation,
        warnings: &mut Vec<String>,
    ) -> Result<Value, String> {
        Ok(match v {
            Value::Object(m) if schema::is_value_definition(m) => {
                let result = if let Some(e) = m.get("expression").and_then(Value::as_str) {
                    match eval.eval_json(e) {
                        Ok(v) => Ok(v),
                        Err(CelError::Hard(e)) => return Err(e),
                        Err(CelError::Soft(e)) => Err(e),
                    }
                } else {
                    Err(format!(
                        "field value definitions ({:?}) are not emulated",
                        m.get("field")
                    ))
                };
                match result {
                    // Go `nil` (`optional.none()`): the default, else null, without a WARN.
                    Ok(Value::Null) => m.get("default").cloned().unwrap_or(Value::Null),
                    Ok(v) => v,
                    Err(e) => {
                        warnings.push(format!(
                            "value definition {}: {e}; using the default",
                            Value::Object(m.clone())
                        ));
                        m.get("default").cloned().unwrap_or(Value::Null)
                    }
                }
            }
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, v) in m {
                    out.insert(self.render(k, vars)?, self.build(v, vars, eval, warnings)?);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| self.build(i, vars, eval, warnings))
                    .collect::<Result<_, _>>()?,
            ),
            Value::String(s) => Value::String(self.render(s, vars)?),
            other => other.clone(),
        })
    }
}

/// Renders every string and key of a manifest (a templated scalar stays a string, §2.5).
pub fn render_value(
    v: &Value,
    render: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Value, String> {
    Ok(match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(render(k)?, render_value(v, render)?);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| render_value(i, render))
                .collect::<Result<_, _>>()?,
        ),
        Value::String(s) => Value::String(render(s)?),
        other => other.clone(),
    })
}
