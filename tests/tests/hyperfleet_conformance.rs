//! HyperFleet conformance: would the real adapter framework (v0.3.1) load our task config and
//! AdapterConfig, would every template render and every CEL expression evaluate, and would the
//! real HyperFleet API accept every status body the config builds, for every outcome of the
//! pulse Job? No network and no framework binary: the rules come from
//! `docs/hyperfleet-framework.md` and the fixtures in the team folder (`fixtures/hyperfleet`).
//!
//! The harness is proven first on the framework's own examples (they load, the invalid one is
//! refused for the documented reason) and on the doc's Appendix A config (its dry-run body is
//! reproduced). Tests that read the team folder skip on a clone without it; the tests of our own
//! manifests always run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hyperfleet_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use hyperfleet_support::cel_env::{self, CelError};
use hyperfleet_support::run::{Run, World};
use jiff::Timestamp;
use serde_json::{Value, json};
use testbed::hyperfleet::api::{self, Answer, Stored};
use testbed::hyperfleet::schema::{self, LoadError, TaskConfig};
use testbed::hyperfleet::template;

/// The framework release the config must load in.
const FRAMEWORK: &str = "v0.3.1";

static FIXTURES: LazyLock<Option<PathBuf>> = LazyLock::new(|| {
    job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hyperfleet")
});

fn fixture(rel: &str) -> String {
    let dir = FIXTURES.as_ref().expect("checked by the caller");
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn now() -> Timestamp {
    "2026-11-26T03:47:44.250Z".parse().unwrap()
}

/// Load like the framework: decode → structural (first error) → semantic (all, CEL parse
/// included). `refs` holds `manifest.ref`/`build_ref` texts resolved by the caller.
fn load(
    text: &str,
    env: &BTreeMap<String, String>,
    refs: &BTreeMap<String, String>,
) -> Result<TaskConfig, LoadError> {
    let config = schema::decode_task_config(text)?;
    config.structural(env)?;
    let mut errors = config.semantic(refs);
    for c in config.cel_expressions() {
        if let Err(CelError::Hard(e)) = cel_env::parse(&c.expression) {
            errors.push(format!("{}: CEL parse error: {e}", c.location));
        }
    }
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(LoadError::Semantic(errors))
    }
}

// -------------------------------------------------------------------------------------------
// The harness against the framework's own examples
// -------------------------------------------------------------------------------------------

/// Every task config in the fixtures, and what v0.3.1 does with it.
const EXAMPLE_TASK_CONFIGS: [&str; 9] = [
    "hyperfleet-adapter/charts/examples/kubernetes/adapter-task-config.yaml",
    "hyperfleet-adapter/charts/examples/maestro/adapter-task-config.yaml",
    "hyperfleet-adapter/charts/examples/maestro-two-resources/adapter-task-config.yaml",
    "hyperfleet-adapter/configs/adapter-task-config-template.yaml",
    "hyperfleet-adapter/test/testdata/dryrun/cel-showcase/dryrun-cel-showcase-task-config.yaml",
    "hyperfleet-adapter/test/testdata/dryrun/kubernetes/dryrun-kubernetes-task-config.yaml",
    "hyperfleet-adapter/test/testdata/dryrun/kubernetes-delete/dryrun-kubernetes-delete-task-config.yaml",
    "hyperfleet-adapter/test/testdata/dryrun/maestro/dryrun-maestro-adapter-task-config.yaml",
    "hyperfleet-adapter/test/testdata/dryrun/maestro-delete/dryrun-maestro-delete-task-config.yaml",
];

/// `manifest.ref` / `build_ref` files beside a task config (the upstream `/etc/adapter/…` refs
/// are mounted by the chart; they map to the `adapter-task-resource-*` files next to it).
fn refs_beside(rel: &str, config: &TaskConfig) -> BTreeMap<String, String> {
    let dir = FIXTURES.as_ref().unwrap().join(rel);
    let dir = dir.parent().unwrap();
    let mut refs = BTreeMap::new();
    let mut wanted: Vec<String> = config
        .resources
        .iter()
        .filter_map(|r| r.manifest.as_ref()?.get("ref")?.as_str().map(str::to_owned))
        .collect();
    if let Some(post) = &config.post {
        wanted.extend(post.payloads.iter().filter_map(|p| p.build_ref.clone()));
    }
    for file in wanted {
        let direct = dir.join(&file);
        let mounted = Path::new(&file).file_name().and_then(|base| {
            let base = base.to_str()?;
            std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
                let name = e.file_name().into_string().ok()?;
                (name.starts_with("adapter-task-resource-") && name.ends_with(base))
                    .then(|| e.path())
            })
        });
        if let Some(text) = std::fs::read_to_string(&direct)
            .ok()
            .or_else(|| std::fs::read_to_string(mounted?).ok())
        {
            refs.insert(file, text);
        }
    }
    refs
}

#[test]
fn the_framework_examples_decode_and_validate() {
    if FIXTURES.is_none() {
        return;
    }
    for rel in EXAMPLE_TASK_CONFIGS {
        let text = fixture(rel);
        let decoded = schema::decode_task_config(&text).unwrap_or_else(|e| {
            panic!("{rel}: the framework loads it, the schema types refuse it: {e}")
        });
        let refs = refs_beside(rel, &decoded);
        let env = BTreeMap::from([(
            "HYPERFLEET_API_BASE_URL".to_owned(),
            "http://api:8000".to_owned(),
        )]);
        if let Err(e) = load(&text, &env, &refs) {
            panic!("{rel}: {e}");
        }
    }
}

#[test]
fn the_deliberately_invalid_example_is_refused_for_the_documented_reasons() {
    if FIXTURES.is_none() {
        return;
    }
    let rel = "hyperfleet-adapter/test/testdata/dryrun/kubernetes/dryrun-kubernetes-adatepr-task-config-invalid.yaml";
    let text = fixture(rel);
    // Structural: the hyphenated precondition name, reported first and alone.
    match load(&text, &BTreeMap::new(), &BTreeMap::new()) {
        Err(LoadError::Structural(e)) => assert!(
            e.starts_with("preconditions[0].name \"bad-cel\": must start with lowercase letter"),
            "{e}"
        ),
        other => panic!("{rel}: expected the structural name error, got {other:?}"),
    }
    // With the name fixed, the semantic errors come together: the CEL parse error and the
    // undefined template variable. The missing metadata.name is not a load error.
    let fixed = text.replace("name: \"bad-cel\"", "name: \"badCel\"");
    match load(&fixed, &BTreeMap::new(), &BTreeMap::new()) {
        Err(LoadError::Semantic(errors)) => {
            assert_eq!(errors.len(), 2, "{errors:#?}");
            assert!(
                errors
                    .iter()
                    .any(|e| e.starts_with("preconditions[0].expression: CEL parse error")),
                "{errors:#?}"
            );
            assert!(
                errors.iter().any(|e| e == "resources[1].manifest: undefined template variable \"nonExistentVariable\""),
                "{errors:#?}"
            );
        }
        other => panic!("expected the two semantic errors, got {other:?}"),
    }
}

#[test]
fn the_example_adapter_configs_decode_and_their_old_versions_are_refused_by_v0_3_1() {
    if FIXTURES.is_none() {
        return;
    }
    for (rel, version) in [
        (
            "hyperfleet-adapter/charts/examples/kubernetes/adapter-config.yaml",
            "0.2.0",
        ),
        (
            "hyperfleet-adapter/charts/examples/maestro/adapter-config.yaml",
            "0.2.0",
        ),
        (
            "hyperfleet-adapter/charts/examples/maestro-two-resources/adapter-config.yaml",
            "0.2.0",
        ),
        (
            "hyperfleet-adapter/configs/adapter-config-template.yaml",
            "0.1.0",
        ),
        (
            "hyperfleet-adapter/test/testdata/dryrun/dryrun-kubernetes-adapter-config.yaml",
            "0.1.0",
        ),
        (
            "hyperfleet-adapter/test/testdata/dryrun/dryrun-maestro-adapter-config.yaml",
            "0.1.0",
        ),
    ] {
        let text = fixture(rel);
        match schema::load_adapter_config(&text, FRAMEWORK) {
            Err(LoadError::Version(e)) => assert_eq!(
                e,
                format!(
                    "adapter version mismatch: config \"{version}\" (major.minor=0.{}) != adapter \"v0.3.1\" (major.minor=0.3)",
                    &version[2..3]
                ),
                "{rel}"
            ),
            other => panic!("{rel}: expected the version rule to refuse {version}, got {other:?}"),
        }
        // A dev build (0.0.0-…) skips the rule: the rest of the file is valid.
        schema::load_adapter_config(&text, "0.0.0-dev").unwrap_or_else(|e| panic!("{rel}: {e}"));
    }
    // The doc's own example of the message.
    assert_eq!(
        schema::check_version("0.1.0", "v0.3.1-10-g3f746a5"),
        Err(LoadError::Version(
            "adapter version mismatch: config \"0.1.0\" (major.minor=0.1) != adapter \"v0.3.1-10-g3f746a5\" (major.minor=0.3)".into()
        ))
    );
}

/// The YAML block of the doc's Appendix A (a config the doc's authors dry-ran).
fn appendix_a() -> Option<String> {
    let docs = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "docs")?;
    let doc = std::fs::read_to_string(docs.join("hyperfleet-framework.md")).unwrap();
    let appendix = &doc[doc.find("## Appendix A").expect("the doc has Appendix A")..];
    let start = appendix.find("```yaml\n").unwrap() + "```yaml\n".len();
    let end = start + appendix[start..].find("```").unwrap();
    Some(appendix[start..end].to_owned())
}

const CLUSTER_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

/// The doc's Appendix A, run on the first event (Job discovered without status): the body the
/// doc recorded from the real framework, byte for byte but for the time.
#[test]
fn the_harness_reproduces_the_docs_dry_run_of_appendix_a() {
    let Some(text) = appendix_a() else { return };
    let config = load(&text, &BTreeMap::new(), &BTreeMap::new()).unwrap();
    let cluster = json!({"id": CLUSTER_ID, "kind": "Cluster", "generation": 3, "name": "c1"});
    let api = |method: &str, url: &str| -> Result<Value, String> {
        assert_eq!(
            (method, url),
            (
                "GET",
                format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}").as_str()
            )
        );
        Ok(cluster.clone())
    };
    let transport =
        |_: &str, manifest: &Value| -> Result<Option<Value>, String> { Ok(Some(manifest.clone())) };
    let world = World {
        adapter_name: "hypershift".into(),
        adapter_version: "0.3.1".into(),
        base_url: true,
        env: BTreeMap::new(),
        event: json!({"id": CLUSTER_ID, "kind": "Cluster", "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}"), "generation": 3}),
        api: &api,
        transport: &transport,
        now: now(),
    };
    let run = world.run(&config);
    assert_eq!(run.stopped, None);
    assert!(run.warnings.is_empty(), "{:#?}", run.warnings);
    assert_eq!(
        run.manifests["pulseJob"]["metadata"]["name"],
        format!("hs-cp-{CLUSTER_ID}-g3")
    );
    assert_eq!(run.sent.len(), 1);
    let sent = &run.sent[0];
    assert_eq!(
        (sent.method.as_str(), sent.url.as_str()),
        (
            "PUT",
            format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/statuses").as_str()
        )
    );
    let body: Value = serde_json::from_str(sent.body.as_deref().unwrap()).unwrap();
    let recorded: Value = serde_json::from_str(r#"{"adapter":"hypershift","conditions":[{"reason":"JobCreated","status":"True","type":"Applied"},{"reason":"JobState","status":"Unknown","type":"Available"},{"message":"ok","reason":"Healthy","status":"True","type":"Health"}],"observed_generation":3,"observed_time":"2026-11-26T03:47:44Z"}"#).unwrap();
    assert_eq!(body, recorded);
    let answer = api::put_status(
        sent.body.as_deref().unwrap(),
        now(),
        Stored {
            generation: 3,
            report: None,
        },
    );
    assert_eq!(answer, Answer::Stored);
}

// -------------------------------------------------------------------------------------------
// The harness's CEL environment is the framework's: what exists works, what does not fails
// -------------------------------------------------------------------------------------------

fn eval_with(vars: Value, expression: &str) -> Result<Value, CelError> {
    let vars = vars
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), cel_env::to_cel(v, cel_env::Numbers::Int)))
        .collect();
    let evaluation = cel_env::Evaluation::new(vars, now());
    let out = evaluation.eval_json(expression);
    let notes = evaluation.notes.lock().unwrap().clone();
    if notes.is_empty() {
        out
    } else {
        Err(CelError::Soft(notes.join("; ")))
    }
}

#[test]
fn cel_has_the_frameworks_functions_with_its_semantics() {
    let job = json!({"job": {"status": {"conditions": [
        {"type": "Applied", "status": "True"}, {"type": "Available", "status": "False"}]}}});
    let ok = |e: &str, want: Value| assert_eq!(eval_with(job.clone(), e), Ok(want), "{e}");
    ok("now()", json!("2026-11-26T03:47:44Z"));
    ok("type(now()) == string", json!(true));
    ok(
        r#"conditionStatus(job.status.conditions, "Available")"#,
        json!("False"),
    );
    ok(
        r#"conditionStatus(job.status.conditions, "Health")"#,
        json!("Unknown"),
    );
    ok(r#"dig(job, "status.conditions.0.type")"#, json!("Applied"));
    ok(r#"dig(job, "status.nothing.here")"#, Value::Null);
    ok("triState(false, true)", json!("False"));
    ok("triState(false, false)", json!("Unknown"));
    ok(
        "toJson(job.status.conditions[0])",
        json!(r#"{"status":"True","type":"Applied"}"#),
    );
    ok(
        r#"job.?status.?conditions.orValue([]).exists(c, c.type == "Applied" && c.status == "True")"#,
        json!(true),
    );
    ok(
        r#"job.?metadata.?annotations[?"a/b"].orValue("none")"#,
        json!("none"),
    );
    ok(r#""a,b".split(",").size()"#, json!(2));
    ok("[3, 1, 2].sort()", json!([1, 2, 3]));
    ok("lists.range(3)", json!([0, 1, 2]));
    ok(r#""x".lowerAscii() + "Y".upperAscii()"#, json!("xY"));
    ok(
        "job.status.conditions",
        job["job"]["status"]["conditions"].clone(),
    );
    ok(
        r#"job.status.conditions.filter(c, c.type == "Applied")[0].status"#,
        json!("True"),
    );
    ok("{'a': 1}", json!({"a": 1}));
    ok("1.0 == 1", json!(true));
}

#[test]
fn cel_lacks_what_the_framework_lacks() {
    let vars = json!({"s": "{\"a\":1}", "l": [1, 2]});
    for e in [
        "json.decode(s)",
        "sets.contains(l, [1])",
        "base64.encode(b'x')",
        "math.greatest(l)",
        "cel.bind(x, 1, x + 1)",
        "conditionAge(l, 'Available')",
        "missing.field",
    ] {
        assert!(eval_with(vars.clone(), e).is_err(), "{e} must not evaluate");
    }
    assert!(matches!(
        cel_env::parse("this is not valid CEL !!!"),
        Err(CelError::Hard(_))
    ));
}

#[test]
fn cel_built_lists_of_maps_are_the_serialisation_trap() {
    let vars = json!({"c": {"conditions": [{"type": "Available", "status": "True"}, {"type": "Health", "status": "True"}]}});
    for e in [
        r#"c.conditions.filter(x, x.type == "Available")"#,
        r#"c.conditions.map(x, {"t": x.type})"#,
        r#"[{"type": "Applied"}]"#,
        r#"{"wrapped": [{"type": "Applied"}]}"#,
        r#"toJson(c.conditions.filter(x, x.type == "Available"))"#,
    ] {
        let err = eval_with(vars.clone(), e).unwrap_err();
        assert!(err.to_string().contains("Adapter"), "{e}: {err}");
    }
    // Lists straight from data, single elements and lists of scalars are fine.
    for e in [
        "c.conditions",
        r#"c.?conditions.orValue([])"#,
        r#"c.conditions.filter(x, x.type == "Available")[0]"#,
        r#"c.conditions.map(x, x.type)"#,
    ] {
        assert!(eval_with(vars.clone(), e).is_ok(), "{e}");
    }
    // conditionStatus refuses a list CEL built, including orValue's [].
    for e in [
        r#"conditionStatus(c.?missing.orValue([]), "Available")"#,
        r#"conditionStatus(c.conditions.filter(x, true == true && x.type != "Health"), "Available")"#,
    ] {
        assert!(eval_with(vars.clone(), e).is_err(), "{e}");
    }
}

// -------------------------------------------------------------------------------------------
// The API's rules, each shown to refuse what it should
// -------------------------------------------------------------------------------------------

fn good_body() -> Value {
    json!({
        "adapter": "hypershift", "observed_generation": 3, "observed_time": "2026-11-26T03:47:44Z",
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "JobSucceeded", "message": ""},
            {"type": "Available", "status": "True", "reason": "ControlPlaneReady", "message": ""},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": ""}],
        "data": {"version": "4.19.3"}
    })
}

fn put(body: &Value) -> Answer {
    api::put_status(
        &body.to_string(),
        now(),
        Stored {
            generation: 3,
            report: None,
        },
    )
}

fn rejected(answer: Answer, needle: &str) {
    match answer {
        Answer::Rejected { detail, .. } => {
            assert!(detail.contains(needle), "{detail} does not say {needle}")
        }
        other => panic!("expected a 400 saying {needle}, got {other:?}"),
    }
}

#[test]
fn the_api_rules_refuse_each_broken_body_with_the_servers_words() {
    assert_eq!(put(&good_body()), Answer::Stored);
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut b = good_body();
        edit(&mut b);
        put(&b)
    };
    rejected(
        api::put_status(
            "",
            now(),
            Stored {
                generation: 3,
                report: None,
            },
        ),
        "Request body is required but was empty",
    );
    rejected(
        broken(&|b| b["observed_generation"] = json!("3")),
        "field 'observed_generation' must be a number",
    );
    rejected(
        broken(&|b| b["observed_generation"] = json!(3.5)),
        "field 'observed_generation' must be a number",
    );
    rejected(
        broken(&|b| b["observed_generation"] = json!(2147483648_i64)),
        "field 'observed_generation' must be a number",
    );
    rejected(
        broken(&|b| b["data"] = json!("{\"version\":\"4.19.3\"}")),
        "field 'data' must be an object",
    );
    rejected(
        broken(&|b| b["data"] = json!([])),
        "field 'data' must be an object",
    );
    rejected(
        broken(&|b| b["conditions"] = json!({"Applied": {"status": "True"}})),
        "field 'conditions' must be an array",
    );
    rejected(
        broken(&|b| b["observed_time"] = json!("yesterday")),
        "Invalid request format",
    );
    rejected(broken(&|b| b["adapter"] = json!("")), "adapter is required");
    rejected(
        broken(&|b| b["observed_generation"] = json!(0)),
        "observed_generation must be >= 1",
    );
    rejected(
        broken(&|b| b["conditions"][2]["type"] = json!("")),
        "condition type cannot be empty at index 2",
    );
    rejected(
        broken(&|b| b["conditions"][2]["type"] = json!("Applied")),
        "duplicate condition type 'Applied' at index 2",
    );
    rejected(
        broken(&|b| b["conditions"][0]["status"] = json!("true")),
        "invalid status value 'true' for condition at index 0 (type: Applied)",
    );
    rejected(
        broken(&|b| b["observed_time"] = json!("2026-11-26T03:53:45Z")),
        "more than 5m0s in the future",
    );
    rejected(
        broken(&|b| b["observed_time"] = json!("2026-11-26T03:17:43Z")),
        "more than 30m0s in the past",
    );
    rejected(
        broken(&|b| {
            b["conditions"].as_array_mut().unwrap().remove(0);
        }),
        "missing mandatory condition 'Applied'",
    );
    // Server-state rules.
    let later = |b: &Value, stored| api::put_status(&b.to_string(), now(), stored);
    let mut b = good_body();
    b["observed_generation"] = json!(4);
    assert_eq!(
        later(
            &b,
            Stored {
                generation: 3,
                report: None
            }
        ),
        Answer::Discarded(9)
    );
    assert_eq!(
        later(
            &good_body(),
            Stored {
                generation: 3,
                report: Some((4, now()))
            }
        ),
        Answer::Discarded(10)
    );
    let mut unknown = good_body();
    unknown["conditions"][1]["status"] = json!("Unknown");
    assert_eq!(
        later(
            &unknown,
            Stored {
                generation: 3,
                report: None
            }
        ),
        Answer::Stored
    );
    assert_eq!(
        later(
            &unknown,
            Stored {
                generation: 3,
                report: Some((2, now()))
            }
        ),
        Answer::Discarded(13)
    );
}

static STATUS_SCHEMA: LazyLock<Option<Value>> = LazyLock::new(|| {
    FIXTURES.as_ref()?;
    let doc =
        schema::yaml_to_json(&fixture("hyperfleet-api-spec/schemas/core/openapi.yaml")).unwrap();
    let body = api::schema(&doc, "AdapterStatusCreateRequest");
    // Wrapped so that the validator does not take the body for a Kubernetes object (root).
    Some(json!({"type": "object", "properties": {"body": body}}))
});

fn schema_errors(body: &Value) -> Vec<String> {
    api::schema_errors(STATUS_SCHEMA.as_ref().unwrap(), &json!({"body": body}))
}

#[test]
fn the_openapi_schema_refuses_each_broken_body() {
    if STATUS_SCHEMA.is_none() {
        return;
    }
    assert_eq!(schema_errors(&good_body()), Vec::<String>::new());
    let broken = |edit: &dyn Fn(&mut Value), needle: &str| {
        let mut b = good_body();
        edit(&mut b);
        let errors = schema_errors(&b);
        assert!(
            errors.iter().any(|e| e.contains(needle)),
            "{needle}: {errors:#?}"
        );
    };
    broken(
        &|b| {
            b.as_object_mut().unwrap().remove("conditions");
        },
        ".body.conditions: Required value",
    );
    broken(
        &|b| b["conditions"] = json!({"Applied": {}}),
        ".body.conditions: must be of type \"array\"",
    );
    broken(
        &|b| b["data"] = json!("{}"),
        ".body.data: must be of type \"object\"",
    );
    broken(
        &|b| b["observed_generation"] = json!(2147483648_i64),
        "out of int32 range",
    );
    broken(
        &|b| b["observed_generation"] = json!("3"),
        "must be of type \"integer\"",
    );
    broken(
        &|b| b["conditions"][0]["status"] = json!("true"),
        "is not one of",
    );
    broken(
        &|b| b["conditions"][0] = json!({"status": "True"}),
        ".body.conditions[0].type: Required value",
    );
    broken(&|b| b["extra"] = json!(1), "unknown field");
}
