//! The pulse oracle (tests only): a snapshot of what each pulse scenario of the unit tests
//! decided — the report JSON, the ordered requests it made and the decision names it logged —
//! compared with the committed corpus in `adapter/tests/oracle/pulse/`. It pins behaviour while
//! the pulse code is restructured: the corpus must not change.
//!
//! `UPDATE_ORACLE=1 cargo test -p hypershift-adapter` rewrites the corpus (review the diff);
//! `ORACLE_OUT=<dir>` writes the pulses there instead of comparing them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use job_report::Report;
use serde_json::{Value, json};

use k8s_openapi::api::coordination::v1::Lease;

use crate::placement::entity::ManagementCluster;
use crate::placement::inventory::Inventory;
use crate::placement::lease::{LeaseApi, LeaseError};
use crate::work::maestro::BundleApi;
use crate::work::maestro::bundle::{ResourceBundle, ResourceBundleList};
use crate::work::maestro::cloudevent::{AttrValue, CloudEvent};
use crate::work::maestro::rest::ListQuery;
use crate::work::{ExistingWork, WorkClient, WorkError};

/// The log events of the current thread (INFO and above, JSON), while it lives.
pub struct Log {
    buf: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    /// Starts capturing this thread's events, and seeds this thread's jitter so that retries
    /// wait (and count) the same on every run.
    pub fn start() -> Self {
        fastrand::seed(31);
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(Arc::clone(&buf));
        let subscriber = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || sink.clone())
            .finish();
        Self {
            buf,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Every `decision` (and `placement`, comma-separated) value logged so far, sorted, each once.
    pub fn decisions(&self) -> Vec<String> {
        let text = String::from_utf8(self.buf.lock().unwrap().clone()).unwrap();
        let mut found = BTreeSet::new();
        for line in text.lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            for key in ["decision", "placement"] {
                if let Some(d) = event.get(key).and_then(Value::as_str) {
                    found.extend(d.split(',').map(str::to_owned));
                }
            }
        }
        found.into_iter().collect()
    }
}

/// A [`WorkClient`] that records each call as `<verb> <name>` before passing it on.
pub struct Recorded<'a, W> {
    pub inner: &'a W,
    pub requests: Mutex<Vec<String>>,
}

impl<'a, W> Recorded<'a, W> {
    pub fn new(inner: &'a W) -> Self {
        Self {
            inner,
            requests: Mutex::new(Vec::new()),
        }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn push(&self, verb: &str, name: &str) {
        self.requests.lock().unwrap().push(format!("{verb} {name}"));
    }
}

fn name_of(work: &Value) -> &str {
    work.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl<W: WorkClient> WorkClient for Recorded<'_, W> {
    type On<'a>
        = &'a Self
    where
        Self: 'a;

    fn on(&self, _: &crate::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        self.push("get", name);
        self.inner.get(name).await
    }
    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        self.push("create", name_of(work));
        self.inner.create(work).await
    }
    async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
        self.push("update", name_of(work));
        self.inner.update(work, current).await
    }
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        self.push("delete", name);
        self.inner.delete(name).await
    }
}

/// The snapshot of one pulse of the current test: `group` names the suite, the test function's
/// name (the test thread's) and a counter name the scenario.
pub fn check(group: &str, outcome: Result<&Report, String>, requests: &[String], log: &Log) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("main").rsplit("::").next().unwrap();
    let n = next_index(&format!("{group}/{test}"));
    let name = if n == 0 {
        test.to_owned()
    } else {
        format!("{test}#{n}")
    };
    let snapshot = json!({
        "report": match outcome {
            Ok(report) => redact(serde_json::to_value(report).unwrap()),
            Err(error) => json!({ "error": redact_text(&error) }),
        },
        "requests": requests.iter().map(|r| redact_text(r)).collect::<Vec<_>>(),
        "decisions": log.decisions(),
    });
    let text = serde_json::to_string_pretty(&snapshot).unwrap() + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracle/pulse")
        .join(group)
        .join(format!("{name}.json"));
    if let Some(out) = std::env::var_os("ORACLE_OUT") {
        let path = PathBuf::from(out).join(group).join(format!("{name}.json"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    if std::env::var_os("UPDATE_ORACLE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no oracle snapshot {} ({e}); UPDATE_ORACLE=1 writes it",
            path.display()
        )
    });
    assert!(
        stored == text,
        "the pulse differs from its oracle snapshot {}:\n--- stored\n{stored}\n--- now\n{text}",
        path.display()
    );
}

/// How many snapshots `key` took in this process so far (a test may pulse several times).
fn next_index(key: &str) -> usize {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap();
    let n = seen.iter().filter(|k| *k == key).count();
    seen.push(key.to_owned());
    n
}

fn redact(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(redact_text(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(redact).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, redact(v))).collect()),
        other => other,
    }
}

/// Times that come from the clock of the test run (not from the scenario) are replaced.
fn redact_text(text: &str) -> String {
    let now = jiff::Timestamp::now();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let stamp = regex!(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z");
    while let Some(m) = stamp.find(rest) {
        out.push_str(&rest[..m.start()]);
        let recent = m
            .as_str()
            .parse::<jiff::Timestamp>()
            .is_ok_and(|t| (now - t).get_seconds().abs() < 3 * 86_400);
        out.push_str(if recent { "<now>" } else { m.as_str() });
        rest = &rest[m.end()..];
    }
    out.push_str(rest);
    out
}

/// One ordered log of the requests a placed pulse makes, whatever it talks to.
#[derive(Default)]
pub struct Trace(Mutex<Vec<String>>);

impl Trace {
    pub fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }

    pub fn requests(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A Maestro API, Lease API or inventory whose requests go to `trace` first.
pub struct Traced<'a, T> {
    pub inner: &'a T,
    pub trace: &'a Trace,
}

impl<A: BundleApi> BundleApi for Traced<'_, A> {
    async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
        let search = query.search.clone().unwrap_or_default();
        let size = query.size.unwrap_or_default();
        self.trace
            .push(format!("maestro list size={size} {search}"));
        self.inner.list(query).await
    }

    async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
        let text = |k: &str| match event.extension(k) {
            Some(AttrValue::String(s)) => s.clone(),
            Some(AttrValue::Integer(i)) => i.to_string(),
            _ => String::new(),
        };
        let kind = event.ty.rsplit('.').next().unwrap_or_default();
        let name = serde_json::from_str::<Value>(&text("metadata"))
            .ok()
            .and_then(|m| m["name"].as_str().map(str::to_owned))
            .unwrap_or_default();
        self.trace.push(format!(
            "maestro publish {kind} consumer={} id={} name={name} version={}",
            text("clustername"),
            text("resourceid"),
            text("resourceversion"),
        ));
        self.inner.publish(event).await
    }

    async fn get(&self, id: &str) -> Result<Option<ResourceBundle>, WorkError> {
        self.trace.push(format!("maestro get {id}"));
        self.inner.get(id).await
    }
}

impl<L: LeaseApi> LeaseApi for Traced<'_, L> {
    async fn get(&self, name: &str) -> Result<Option<Lease>, LeaseError> {
        self.trace.push(format!("lease get {name}"));
        self.inner.get(name).await
    }

    async fn create(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        self.trace.push(format!(
            "lease create {}",
            lease.metadata.name.as_deref().unwrap_or_default()
        ));
        self.inner.create(lease).await
    }

    async fn replace(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        let holder = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref())
            .unwrap_or_default();
        self.trace.push(format!(
            "lease replace {} holder={holder:?}",
            lease.metadata.name.as_deref().unwrap_or_default()
        ));
        self.inner.replace(lease).await
    }
}

impl<I: Inventory + Sync> Inventory for Traced<'_, I> {
    async fn candidates(&self, region: &str) -> Result<Vec<ManagementCluster>, String> {
        self.trace.push(format!("inventory region {region}"));
        self.inner.candidates(region).await
    }

    async fn by_consumer(&self, consumer: &str) -> Result<Vec<ManagementCluster>, String> {
        self.trace.push(format!("inventory consumer {consumer}"));
        self.inner.by_consumer(consumer).await
    }
}
