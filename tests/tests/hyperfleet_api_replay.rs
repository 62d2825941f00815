//! The testbed's HyperFleet API (`testbed::hyperfleet::fake_api`) against the real one: every
//! recorded request of `fixtures/hyperfleet/real-api/` (the real API server @541f6b4, see its
//! README) is replayed in order over HTTP, and the fake must answer with the recorded status,
//! content type and body. Only what differs between two runs of the real server is normalised:
//! ids (the recorded ones are mapped to the fake's as the fake creates them), timestamps and trace
//! ids. Then the `generations/` sequences (what the API concludes from a report's generation
//! during an update) are replayed and their aggregated conditions compared step by step.
//!
//! Needs the team folder (skips with one line without it; fails without it under
//! `TEAM_FOLDER_REQUIRED=1`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;
use serde_json::{Value, json};
use testbed::hyperfleet::fake_api::{Clock, Config, FakeHyperfleetApi, PREFIX};

fn recordings() -> Option<PathBuf> {
    job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hyperfleet/real-api")
}

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Recorded id ↔ fake id, numbered in the order they appear.
#[derive(Default)]
struct Ids {
    pairs: Vec<(String, String)>,
}

impl Ids {
    fn to_fake(&self, text: &str) -> String {
        self.pairs
            .iter()
            .fold(text.to_owned(), |t, (rec, fake)| t.replace(rec, fake))
    }

    /// Learns the pairs of ids at the same places of a recorded and a fake body (`id` and
    /// `owner_references.id` of a created resource).
    fn learn(&mut self, recorded: &Value, fake: &Value) {
        for pointer in ["/id", "/owner_references/id"] {
            if let (Some(Value::String(r)), Some(Value::String(f))) =
                (recorded.pointer(pointer), fake.pointer(pointer))
                && !self.pairs.iter().any(|(rec, _)| rec == r)
            {
                self.pairs.push((r.clone(), f.clone()));
            }
        }
    }

    /// `body` with ids replaced by `<id N>`, timestamps by `<time>` and trace ids by `<trace>`.
    fn normalise(&self, body: &Value, recorded: bool) -> Value {
        match body {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let v = if k == "trace_id" {
                            json!("<trace>")
                        } else {
                            self.normalise(v, recorded)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.normalise(v, recorded)).collect())
            }
            Value::String(s) if s.parse::<Timestamp>().is_ok() => json!("<time>"),
            Value::String(s) => {
                let mut s = s.clone();
                for (n, (rec, fake)) in self.pairs.iter().enumerate() {
                    s = s.replace(if recorded { rec } else { fake }, &format!("<id {n}>"));
                }
                Value::String(s)
            }
            other => other.clone(),
        }
    }
}

struct Answer {
    status: u16,
    content_type: Option<String>,
    body: Value,
}

async fn send(api: &FakeHyperfleetApi, method: &str, path: &str, body: Option<String>) -> Answer {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let mut request = client.request(method.parse().unwrap(), format!("{}{path}", api.url()));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Answer {
        status,
        content_type,
        body,
    }
}

/// Every `NN-*.json` recording, in order, against one fake: status, content type, body.
#[tokio::test]
async fn every_recorded_request_gets_the_recorded_answer() {
    let Some(dir) = recordings() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.as_bytes()[0].is_ascii_digit())
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 53, "the README lists 53 recordings");
    // The recording ran within one second: every report says 14:14:42Z.
    let clock = Clock::at("2026-11-26T14:14:42.598579Z".parse().unwrap());
    let api = FakeHyperfleetApi::start(Config::recorded(), clock)
        .await
        .unwrap();
    let mut ids = Ids::default();
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let recording = read(file);
        let request = &recording["request"];
        let expected = &recording["response"];
        let method = request["method"].as_str().unwrap();
        let path = ids.to_fake(request["path"].as_str().unwrap());
        assert!(path.starts_with(PREFIX), "{name}: {path}");
        let body = match &request["body"] {
            Value::Null => None,
            // A deliberately malformed body is recorded as its text.
            Value::String(raw) => Some(raw.clone()),
            body => Some(ids.to_fake(&body.to_string())),
        };
        let answer = send(&api, method, &path, body).await;
        if method == "POST" && answer.status == 201 {
            ids.learn(&expected["body"], &answer.body);
        }
        let want = (
            expected["status"].as_u64().unwrap() as u16,
            expected["content_type"].as_str().map(str::to_owned),
            ids.normalise(&expected["body"], true),
        );
        let got = (
            answer.status,
            answer.content_type,
            ids.normalise(&answer.body, false),
        );
        if want != got {
            failures.push(format!(
                "{name} ({method} {path}): recorded {} {:?}, fake {} {:?}; first difference {}",
                want.0,
                want.1,
                got.0,
                got.1,
                first_difference("", &want.2, &got.2).unwrap_or_else(|| "none in the body".into())
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} recordings answered differently:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Where `a` and `b` first differ (a JSON pointer and both values).
fn first_difference(at: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                first_difference(
                    &format!("{at}/{k}"),
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(&format!("{at}/{i}"), p, q)),
        _ if a == b => None,
        _ => Some(format!("at {at:?}: recorded {a}, fake {b}")),
    }
}

/// A report in the shape of the `generations/` requests.
fn probe(adapter: &str, generation: i64, available: &str, at: &str) -> Value {
    json!({
        "adapter": adapter, "observed_generation": generation, "observed_time": at,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "Probe"},
            {"type": "Available", "status": available, "reason": "Probe"},
            {"type": "Health", "status": "True", "reason": "Probe"},
        ],
        "data": {},
    })
}

/// `{type: {status, observed_generation, reason}}` of the three conditions the sequences show.
fn aggregated(cluster: &Value) -> BTreeMap<String, Value> {
    cluster["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            ["Reconciled", "LastKnownReconciled", "HypershiftSuccessful"]
                .contains(&c["type"].as_str().unwrap())
        })
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_owned(),
                json!({"status": c["status"], "observed_generation": c["observed_generation"], "reason": c["reason"]}),
            )
        })
        .collect()
}

/// One `generations/` file: its setup steps (every required adapter `Available=True` at 1, then
/// a spec PATCH) are made as the README describes them, its report steps are replayed as
/// recorded; after each step the HTTP status, the cluster's generation and its aggregated
/// conditions must be the recorded ones.
async fn replay_generations(file: &str) {
    let Some(dir) = recordings() else { return };
    let sequence = read(&dir.join("generations").join(file));
    let steps = sequence["steps"].as_array().unwrap();
    let first_report = steps
        .iter()
        .find_map(|s| s["request"]["observed_time"].as_str())
        .unwrap();
    let start: Timestamp = first_report.parse().unwrap();
    let setup_time = (start - jiff::SignedDuration::from_secs(1)).to_string();
    let clock = Clock::at(start - jiff::SignedDuration::from_secs(1));
    let api = FakeHyperfleetApi::start(Config::recorded(), clock.clone())
        .await
        .unwrap();
    let cluster = api.must(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&json!({"kind": "Cluster", "name": "prod-eu-west2-a",
                     "spec": {"release": {"image": "quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64"}}})),
    );
    let id = cluster["id"].as_str().unwrap().to_owned();
    let cluster_path = format!("{PREFIX}/clusters/{id}");
    let statuses = format!("{cluster_path}/statuses");
    let mut failures = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let title = step["step"].as_str().unwrap();
        let mut http_status = None;
        if n == 0 {
            for adapter in ["validation", "dns", "pullsecret", "hypershift"] {
                api.must(
                    "PUT",
                    &statuses,
                    Some(&probe(adapter, 1, "True", &setup_time)),
                );
            }
        } else if title.starts_with("PATCH spec") {
            api.must(
                "PATCH",
                &cluster_path,
                Some(&json!({"spec": {"release": {"image": "quay.io/openshift-release-dev/ocp-release:4.19.4-x86_64"}}})),
            );
        } else {
            let request = &step["request"];
            clock.set(request["observed_time"].as_str().unwrap().parse().unwrap());
            let reply = api.call("PUT", &statuses, Some(&request.to_string()));
            http_status = Some(reply.status);
        }
        let cluster = api.must("GET", &cluster_path, None);
        let want = (
            step["http_status"].as_u64().map(|s| s as u16),
            step["cluster_generation"].clone(),
            step["aggregated"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        );
        let got = (
            http_status.filter(|_| want.0.is_some()),
            cluster["generation"].clone(),
            aggregated(&cluster),
        );
        if want != got {
            failures.push(format!(
                "{file} step {n} ({title}):\n  recorded {want:?}\n  fake     {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `a-old-generation-false.json`: `Available=False` at the last known good generation turns
/// `LastKnownReconciled` False.
#[tokio::test]
async fn a_failure_at_the_tracked_generation_drops_last_known_reconciled() {
    replay_generations("a-old-generation-false.json").await;
}

/// `b-new-generation-false.json`: `Available=False` at the new generation keeps
/// `LastKnownReconciled` True; an older report after a newer one is discarded (204).
#[tokio::test]
async fn a_failure_at_the_new_generation_keeps_last_known_reconciled() {
    replay_generations("b-new-generation-false.json").await;
}
