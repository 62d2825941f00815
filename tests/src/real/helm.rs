//! The real Helm CLI of the kit (`HELM_BIN`, v3.21.4) and what the Helm suite does with its output
//! on the kit's real API server: the releases of `manifests/helm/` as Helm command lines, the
//! rendered documents, server-side apply of each, and a listing of a namespace's objects.
//!
//! Helm runs with its cache, config and data homes in a temporary directory of its own (no user
//! state, no repositories, nothing fetched) and the kit's admin kubeconfig. Charts are local
//! directories: rendering, linting and installing need no network.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, bail};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::{Discovery, Scope, verbs};
use serde_json::Value;

/// The field manager of this suite's server-side applies.
pub const FIELD_MANAGER: &str = "hypershift-helm-suite";

/// The repository root (the parent of the `tests` crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A file or directory of the repository, by its path from the root.
pub fn repo_path(rel: &str) -> PathBuf {
    repo_root().join(rel)
}

/// One Helm release as its command line gives it: chart, namespace, values files (in order),
/// `--set-file` and `--set` pairs. The same release renders, lints, installs and upgrades.
#[derive(Debug, Clone)]
pub struct Release {
    pub name: String,
    pub chart: PathBuf,
    pub namespace: String,
    pub values: Vec<PathBuf>,
    pub set_files: Vec<(String, PathBuf)>,
    pub sets: Vec<(String, String)>,
}

impl Release {
    /// A release of `chart` (a path from the repository root) in `namespace`.
    pub fn new(name: &str, chart: &str, namespace: &str) -> Self {
        Self {
            name: name.to_owned(),
            chart: repo_path(chart),
            namespace: namespace.to_owned(),
            values: Vec::new(),
            set_files: Vec::new(),
            sets: Vec::new(),
        }
    }

    /// Adds `-f <file>`.
    #[must_use]
    pub fn values(mut self, file: impl Into<PathBuf>) -> Self {
        self.values.push(file.into());
        self
    }

    /// Adds (or replaces) `--set-file <key>=<file>`.
    #[must_use]
    pub fn set_file(mut self, key: &str, file: impl Into<PathBuf>) -> Self {
        self.set_files.retain(|(k, _)| k != key);
        self.set_files.push((key.to_owned(), file.into()));
        self
    }

    /// Adds `--set <key>=<value>`.
    #[must_use]
    pub fn set(mut self, key: &str, value: &str) -> Self {
        self.sets.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The values arguments: `-f`, `--set-file`, `--set`, in that order (later ones win).
    fn value_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for file in &self.values {
            args.extend(["-f".to_owned(), file.display().to_string()]);
        }
        for (key, file) in &self.set_files {
            args.extend(["--set-file".to_owned(), format!("{key}={}", file.display())]);
        }
        for (key, value) in &self.sets {
            args.extend(["--set".to_owned(), format!("{key}={value}")]);
        }
        args
    }
}

/// The kit's `helm` with homes of its own.
#[derive(Debug)]
pub struct Helm {
    bin: PathBuf,
    kubeconfig: PathBuf,
    home: tempfile::TempDir,
}

impl Helm {
    /// `bin` is the kit's `HELM_BIN`, `kubeconfig` the cluster `install` talks to.
    ///
    /// # Errors
    /// When the temporary homes cannot be made.
    pub fn new(bin: &Path, kubeconfig: &Path) -> anyhow::Result<Self> {
        Ok(Self {
            bin: bin.to_path_buf(),
            kubeconfig: kubeconfig.to_path_buf(),
            home: tempfile::Builder::new().prefix("helm-home-").tempdir()?,
        })
    }

    /// `helm <args>` as given; the output whatever the exit status.
    ///
    /// # Errors
    /// When `helm` cannot be started.
    pub fn run(&self, args: &[String]) -> anyhow::Result<Output> {
        let home = self.home.path();
        Command::new(&self.bin)
            .args(args)
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"))
            .env("KUBECONFIG", &self.kubeconfig)
            .env_remove("HELM_NAMESPACE")
            .env_remove("HELM_KUBECONTEXT")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.bin.display()))
    }

    /// `helm <args>`, its stdout when it succeeded.
    ///
    /// # Errors
    /// When it exits non-zero: the error has its stderr.
    pub fn ok(&self, args: &[String]) -> anyhow::Result<String> {
        let out = self.run(args)?;
        if !out.status.success() {
            bail!(
                "helm {} failed: {}",
                args.first().map_or("", String::as_str),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `helm <verb> <release> <chart> -n <ns> <values…> [extra…]` (template, install, upgrade).
    fn release_args(verb: &str, release: &Release, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            verb.to_owned(),
            release.name.clone(),
            release.chart.display().to_string(),
            "--namespace".to_owned(),
            release.namespace.clone(),
        ];
        args.extend(release.value_args());
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    }

    /// `helm template`: the rendered manifest.
    ///
    /// # Errors
    /// When Helm refuses (the message has the chart's own words).
    pub fn template(&self, release: &Release) -> anyhow::Result<String> {
        self.ok(&Self::release_args("template", release, &[]))
    }

    /// `helm template`, the raw output (for refusals).
    ///
    /// # Errors
    /// When `helm` cannot be started.
    pub fn try_template(&self, release: &Release) -> anyhow::Result<Output> {
        self.run(&Self::release_args("template", release, &[]))
    }

    /// `helm lint --strict` of the release's chart with its values.
    ///
    /// # Errors
    /// When the lint fails (or warns: `--strict`).
    pub fn lint(&self, release: &Release) -> anyhow::Result<String> {
        let mut args = vec![
            "lint".to_owned(),
            "--strict".to_owned(),
            release.chart.display().to_string(),
            "--namespace".to_owned(),
            release.namespace.clone(),
        ];
        args.extend(release.value_args());
        self.ok(&args)
    }

    /// `helm install` (no `--wait`: the kit has no kubelet, so the framework's Pods stay Pending).
    ///
    /// # Errors
    /// When Helm or the API server refuses.
    pub fn install(&self, release: &Release) -> anyhow::Result<String> {
        self.ok(&Self::release_args("install", release, &[]))
    }

    /// `helm install`, the raw output (for refusals).
    ///
    /// # Errors
    /// When `helm` cannot be started.
    pub fn try_install(&self, release: &Release) -> anyhow::Result<Output> {
        self.run(&Self::release_args("install", release, &[]))
    }

    /// `helm upgrade` with exactly the values given (no `--reuse-values`), the raw output.
    ///
    /// # Errors
    /// When `helm` cannot be started.
    pub fn upgrade(&self, release: &Release) -> anyhow::Result<Output> {
        self.run(&Self::release_args("upgrade", release, &[]))
    }

    /// `helm uninstall <release> -n <ns>`.
    ///
    /// # Errors
    /// When Helm refuses.
    pub fn uninstall(&self, release: &Release) -> anyhow::Result<String> {
        self.ok(&[
            "uninstall".to_owned(),
            release.name.clone(),
            "--namespace".to_owned(),
            release.namespace.clone(),
        ])
    }

    /// The release's current revision (`helm history`'s last line), `None` when there is none.
    ///
    /// # Errors
    /// When `helm` cannot be started or its JSON is unreadable.
    pub fn revision(&self, release: &Release) -> anyhow::Result<Option<u64>> {
        let out = self.run(&[
            "history".to_owned(),
            release.name.clone(),
            "--namespace".to_owned(),
            release.namespace.clone(),
            "--output".to_owned(),
            "json".to_owned(),
        ])?;
        if !out.status.success() {
            return Ok(None);
        }
        let history: Vec<Value> = serde_json::from_slice(&out.stdout)?;
        Ok(history.iter().filter_map(|r| r["revision"].as_u64()).max())
    }
}

/// The documents of a rendered manifest, empty ones skipped.
///
/// # Errors
/// When it is not YAML.
pub fn documents(manifest: &str) -> anyhow::Result<Vec<Value>> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(manifest).context("rendered manifest")?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// `kind/name` of a document.
pub fn kind_name(doc: &Value) -> String {
    format!(
        "{}/{}",
        doc["kind"].as_str().unwrap_or_default(),
        doc["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// The one document of `kind` whose name ends with `suffix`.
///
/// # Errors
/// When there is not exactly one.
pub fn find<'a>(docs: &'a [Value], kind: &str, suffix: &str) -> anyhow::Result<&'a Value> {
    let found: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == kind)
        .filter(|d| {
            d["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(suffix))
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        other => bail!("{} {kind} documents named *{suffix}", other.len()),
    }
}

/// The API of `doc`'s kind (namespaced ones in `namespace`) and `doc` as an object.
fn api_for(
    client: &kube::Client,
    discovery: &Discovery,
    namespace: &str,
    doc: &Value,
) -> anyhow::Result<(Api<DynamicObject>, DynamicObject)> {
    let object: DynamicObject = serde_json::from_value(doc.clone())
        .with_context(|| format!("{} is not an object", kind_name(doc)))?;
    let types = object
        .types
        .as_ref()
        .with_context(|| format!("{} has no apiVersion/kind", kind_name(doc)))?;
    let gvk = kube::api::GroupVersionKind::try_from(types)?;
    let (resource, caps) = discovery
        .resolve_gvk(&gvk)
        .with_context(|| format!("the API server serves no {gvk:?}"))?;
    let api = match caps.scope {
        Scope::Namespaced => Api::namespaced_with(client.clone(), namespace, &resource),
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    Ok((api, object))
}

/// Applies every document server-side (field manager [`FIELD_MANAGER`], forced), namespaced ones
/// into `namespace`; the objects as the API server stored them.
///
/// # Errors
/// The first refusal, with the object and the server's message.
pub async fn apply_all(
    client: &kube::Client,
    discovery: &Discovery,
    namespace: &str,
    docs: &[Value],
) -> anyhow::Result<Vec<DynamicObject>> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let mut stored = Vec::new();
    for doc in docs {
        let (api, object) = api_for(client, discovery, namespace, doc)?;
        let name = object.metadata.name.clone().unwrap_or_default();
        let applied = api
            .patch(&name, &params, &Patch::Apply(&object))
            .await
            .with_context(|| format!("server-side apply of {} refused", kind_name(doc)))?;
        stored.push(applied);
    }
    Ok(stored)
}

/// Merge-patches the object of every document with `patch` (e.g. labels and annotations).
///
/// # Errors
/// The first refusal.
pub async fn merge_patch_all(
    client: &kube::Client,
    discovery: &Discovery,
    namespace: &str,
    docs: &[Value],
    patch: &Value,
) -> anyhow::Result<()> {
    for doc in docs {
        let (api, object) = api_for(client, discovery, namespace, doc)?;
        let name = object.metadata.name.unwrap_or_default();
        api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .with_context(|| format!("merge patch of {} refused", kind_name(doc)))?;
    }
    Ok(())
}

/// Resource kinds left out of namespace listings: records of what happened, not objects anyone
/// installs (the API server expires them after its event TTL).
const NOT_LISTED: &[&str] = &["events"];

/// Every object in `namespace` as `group/resource/name`, over every namespaced resource the API
/// server lists (from discovery, so CRDs count too), Events left out.
///
/// # Errors
/// When a list fails.
pub async fn namespace_objects(
    client: &kube::Client,
    discovery: &Discovery,
    namespace: &str,
) -> anyhow::Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for group in discovery.groups() {
        for (resource, caps) in group.recommended_resources() {
            if caps.scope != Scope::Namespaced
                || !caps.supports_operation(verbs::LIST)
                || NOT_LISTED.contains(&resource.plural.as_str())
            {
                continue;
            }
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &resource);
            let list = api
                .list(&ListParams::default())
                .await
                .with_context(|| format!("list {} in {namespace}", resource.plural))?;
            for item in list.items {
                names.insert(format!(
                    "{}/{}/{}",
                    resource.group,
                    resource.plural,
                    item.metadata.name.unwrap_or_default()
                ));
            }
        }
    }
    Ok(names)
}
