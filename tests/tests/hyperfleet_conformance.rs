//! HyperFleet conformance: would the real adapter framework (v0.3.1) load our task configs and
//! AdapterConfigs (the control plane's, `manifests/hyperfleet/`, and the NodePool's,
//! `manifests/hyperfleet/nodepool/`), would every template render and every CEL expression
//! evaluate, and would the real HyperFleet API accept every status body a config builds, for every
//! outcome of its pulse Job? No network and no framework binary: the rules come from
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
    let cluster =
        json!({"id": CLUSTER_ID, "kind": "Cluster", "generation": 3, "name": "prod-eu-1"});
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
        evaluated: Default::default(),
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

    // "and the same with Available True" on an event where the Job is Complete.
    let complete = |_: &str, manifest: &Value| -> Result<Option<Value>, String> {
        let job = testbed::hyperfleet::outcomes::created(manifest, now());
        Ok(Some(testbed::hyperfleet::outcomes::finished(
            &job,
            true,
            now(),
        )))
    };
    let world = World {
        transport: &complete,
        ..world
    };
    let run = world.run(&config);
    let body: Value = serde_json::from_str(run.sent[0].body.as_deref().unwrap()).unwrap();
    let mut want = recorded;
    want["conditions"][1]["status"] = json!("True");
    assert_eq!(body, want);
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
    ok(r#"dig(job, "status.nothing.here") == null"#, json!(true));
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

/// How a result becomes a payload value (see `cel_env`'s module docs): `optional.none()` is JSON
/// null (the definition's default when it has one) without a WARN, `optional.of(x)` is `x`, and a
/// CEL `null` result is the `0` trap, whether written as a literal or reached in data.
#[test]
fn optional_none_is_null_and_a_cel_null_is_the_zero_trap() {
    let vars = json!({"job": {"metadata": {"annotations": {"data.hyperfleet.io/n": "3", "data.hyperfleet.io/z": "null"}}, "status": {"x": null}}});
    let guarded = |key: &str| {
        format!(
            r#"job.?metadata.?annotations[?"data.hyperfleet.io/{key}"].orValue("null") != "null"
                 ? optional.of(int(job.metadata.annotations["data.hyperfleet.io/{key}"]))
                 : optional.none()"#
        )
    };
    assert_eq!(eval_with(vars.clone(), &guarded("n")), Ok(json!(3)));
    assert_eq!(eval_with(vars.clone(), &guarded("z")), Ok(Value::Null));
    assert_eq!(
        eval_with(vars.clone(), &guarded("missing")),
        Ok(Value::Null)
    );
    assert_eq!(eval_with(vars.clone(), "optional.of('a')"), Ok(json!("a")));
    for e in [
        "null",
        r#"job.?metadata.?annotations[?"data.hyperfleet.io/missing"].orValue("") == "" ? null : 1"#,
        "job.status.x",
        r#"dig(job, "status.nothing.here")"#,
    ] {
        let err = eval_with(vars.clone(), e).unwrap_err();
        assert!(err.to_string().contains("structpb.NullValue"), "{e}: {err}");
    }
    // Unguarded, a missing annotation is a CEL error (a WARN and null on every such pulse).
    assert!(matches!(
        eval_with(
            vars,
            r#"int(job.?metadata.?annotations[?"data.hyperfleet.io/missing"].orValue("null"))"#
        ),
        Err(CelError::Soft(_))
    ));
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
    let stored_later = now() + jiff::SignedDuration::from_secs(60);
    assert_eq!(
        later(
            &good_body(),
            Stored {
                generation: 3,
                report: Some((3, stored_later))
            }
        ),
        Answer::Discarded(11)
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
    // `data` is `additionalProperties: {}`: any value, null included (OpenAPI 3.0.3).
    let mut any_data = good_body();
    any_data["data"] =
        json!({"desired_replicas": null, "ready_nodes": 3, "node_versions": "[]", "x": {"y": [1]}});
    assert_eq!(schema_errors(&any_data), Vec::<String>::new());
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

// -------------------------------------------------------------------------------------------
// Our task config and AdapterConfig, in every outcome of the pulse Job
// -------------------------------------------------------------------------------------------

const TASK_CONFIG: &str = include_str!("../../manifests/hyperfleet/adapter-task-config.yaml");
const ADAPTER_CONFIG: &str = include_str!("../../manifests/hyperfleet/adapter-config.yaml");
/// `CONDITION_TYPE` of the status-reporter in the manifests.
const CONDITION_TYPES: [&str; 3] = ["Applied", "Available", "Health"];
const GENERATIONS: [i64; 3] = [1, 3, 2_147_483_647];

/// The framework Deployment's environment: every `env.*` param set.
fn deploy_env(config: &TaskConfig) -> BTreeMap<String, String> {
    config
        .params
        .iter()
        .filter_map(|p| match &p.source {
            Some(schema::Source::Path(path)) => path
                .strip_prefix("env.")
                .map(|v| (v.to_owned(), format!("value-of-{v}"))),
            _ => None,
        })
        .chain([(
            "HYPERFLEET_API_BASE_URL".to_owned(),
            "https://hyperfleet-api.hyperfleet-system.svc:8000".to_owned(),
        )])
        .collect()
}

/// A `GET /clusters/{id}` body in the shape of `fixtures/hyperfleet/example-cluster.json`, at
/// `generation`, with the other required adapters' conditions edited by `edit`.
fn cluster(id: &str, generation: i64, edit: &dyn Fn(&mut Vec<Value>)) -> Value {
    let condition = |type_: &str, status: &str, reason: &str, observed: i64| {
        json!({
            "created_time": "2026-11-26T03:10:05.123481Z", "last_transition_time": "2026-11-26T03:15:02Z",
            "last_updated_time": "2026-11-26T03:40:19Z", "message": format!("{type_} message"),
            "observed_generation": observed, "reason": reason, "status": status, "type": type_,
        })
    };
    let mut conditions = vec![
        condition(
            "Reconciled",
            "False",
            "ReconciledMissingAdapters",
            generation,
        ),
        condition(
            "LastKnownReconciled",
            "True",
            "AllAdaptersReconciled",
            (generation - 1).max(1),
        ),
        condition(
            "ValidationSuccessful",
            "True",
            "ValidationPassed",
            generation,
        ),
        condition("DnsSuccessful", "True", "DnsZoneReady", generation),
        condition(
            "PullsecretSuccessful",
            "True",
            "PullSecretApplied",
            generation,
        ),
        condition(
            "HypershiftSuccessful",
            "False",
            "Provisioning",
            (generation - 1).max(1),
        ),
    ];
    edit(&mut conditions);
    json!({
        "created_by": "jdoe@example.com", "created_time": "2026-11-26T03:10:05.123481Z",
        "generation": generation, "href": format!("/api/hyperfleet/v1/clusters/{id}"), "id": id,
        "kind": "Cluster", "labels": {"environment": "production"},
        // The longest name the cluster-name rule allows (53).
        "name": format!("prod-{}", "a".repeat(48)),
        "spec": {"platform": {"type": "gcp", "gcp": {"project_id": "acme-prod-4821", "region": "europe-west2"}}},
        "status": {"conditions": conditions}, "tenancy": {},
        "updated_by": "jdoe@example.com", "updated_time": "2026-11-26T03:40:10.552013Z",
    })
}

/// The cluster or NodePool after a DELETE (framework doc §6.1, §7.1): `deleted_time` and
/// `deleted_by` set (the generation is bumped by the caller, see [`deletion_bump`]).
fn deleted(mut object: Value) -> Value {
    object["deleted_time"] = json!("2026-11-26T03:46:58.411207Z");
    object["deleted_by"] = json!("jdoe@example.com");
    object
}

/// Right after the DELETE bumped the generation to `generation`, no adapter has reported at it:
/// every condition the API computed for the previous generation says so.
fn deletion_bump(conditions: &mut [Value], generation: i64) {
    for c in conditions {
        if c["observed_generation"] == json!(generation) {
            c["observed_generation"] = json!(generation - 1);
        }
    }
}

#[test]
fn the_test_cluster_has_the_shape_of_the_apis_example() {
    if FIXTURES.is_none() {
        return;
    }
    let example: Value = serde_json::from_str(&fixture("example-cluster.json")).unwrap();
    let ours = cluster(CLUSTER_ID, 3, &|_| {});
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&ours), keys(&example));
    assert_eq!(
        keys(&ours["status"]["conditions"][0]),
        keys(&example["status"]["conditions"][0])
    );
    let types = |v: &Value| {
        v["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(types(&ours), types(&example));
    assert_eq!(
        ours["id"].as_str().unwrap().len(),
        example["id"].as_str().unwrap().len()
    );
}

/// A report of the adapter when all is well (`docs/kubernetes-job-status.md`): the three
/// conditions True with `reasons` (Applied, Available, Health), and `data`.
fn success_report(generation: i64, reasons: [&str; 3], data: &Value) -> job_report::Report {
    use job_report::{Condition, ConditionStatus::True};
    job_report::Report {
        observed_generation: Some(generation),
        data: data.as_object().cloned(),
        ..job_report::Report::new(vec![
            Condition::new("Applied", True, reasons[0], "ManifestWork applied"),
            Condition::new("Available", True, reasons[1], "available"),
            Condition::new("Health", True, reasons[2], "ok"),
        ])
    }
}

/// The Job discovery returns after the apply (from the rendered manifest), or the apply error.
type JobAfterApply = Box<dyn Fn(&Value) -> Result<Value, String>>;
/// Edits the object's (cluster's or NodePool's) conditions.
type ConditionsEdit = fn(&mut Vec<Value>);

/// One state of the world for an event, and what our config must make of it.
struct Scenario {
    name: String,
    /// The object was DELETEd: `deleted_time` set, `generation` bumped past every adapter's report
    /// (framework doc §6.1, §7.1). Only at generations ≥ 2.
    deleting: bool,
    object_edit: ConditionsEdit,
    job: JobAfterApply,
    expect: Expect,
}

impl Scenario {
    fn new(name: impl Into<String>, job: JobAfterApply, expect: Expect) -> Self {
        Scenario {
            name: name.into(),
            deleting: false,
            object_edit: |_| {},
            job,
            expect,
        }
    }

    fn deleting(self) -> Self {
        Scenario {
            name: format!("deleting, {}", self.name),
            deleting: true,
            ..self
        }
    }
}

enum Expect {
    /// No Job created and no PUT (preconditions not met).
    Nothing,
    /// A PUT with these (status, reason) per condition type, `Finalized` (status, reason), and this
    /// `data`.
    Put {
        conditions: [(&'static str, String); 3],
        finalized: (&'static str, String),
        data: Option<Value>,
    },
}

/// `Finalized` of an object that is not being deleted: the framework examples' `False` / `""`.
fn not_deleting() -> (&'static str, String) {
    ("False", String::new())
}

/// What the two adapters' reports differ in, for the outcomes both share.
struct Shape {
    /// The reasons (Applied, Available, Health) and `data` of a success report.
    success_reasons: [&'static str; 3],
    success_data: Value,
    /// The body's `data` for that report.
    success_body_data: Value,
    /// The body's `data` while the Job carries no data annotation (not reported yet, a failure).
    empty_body_data: Value,
    /// The `data` of the adapter's deletion reports, and the body's for them.
    deletion_data: Value,
    deletion_body_data: Value,
    /// Edits of the object's conditions that leave a precondition unmet.
    not_met: Vec<(&'static str, ConditionsEdit)>,
    /// The adapter's deletion stages: (what, `Finalized` status, reason, observed_generation
    /// relative to the Job's generation, `None`: the report has none).
    stages: Vec<(&'static str, &'static str, &'static str, Option<i64>)>,
}

/// The outcomes both task configs must handle: the Job in each state the status-reporter, the
/// Job controller and the API server leave it in, the framework's own failure, unmet
/// preconditions, and deletion.
fn common_scenarios(shape: &Shape) -> Vec<Scenario> {
    use status_reporter::outcome::{Outcome, Termination};
    use testbed::hyperfleet::outcomes::{created, finished, reported, running};
    let t0 = now() - jiff::SignedDuration::from_secs(40);
    let types: Vec<String> = CONDITION_TYPES.iter().map(|s| s.to_string()).collect();
    let all = |status: &'static str, reason: &str| {
        [
            (status, reason.to_owned()),
            (status, reason.to_owned()),
            (status, reason.to_owned()),
        ]
    };
    let empty_data = Some(shape.empty_body_data.clone());
    let just_created: fn(&Value) -> Result<Value, String> = |m| Ok(created(m, now()));
    let mut out = vec![
        Scenario::new(
            "just created (no status)",
            Box::new(move |m| Ok(created(m, t0))),
            Expect::Put {
                conditions: all("Unknown", "JobRunning"),
                finalized: not_deleting(),
                data: empty_data.clone(),
            },
        ),
        Scenario::new(
            "running",
            Box::new(move |m| Ok(running(&created(m, t0), t0))),
            Expect::Put {
                conditions: all("Unknown", "JobRunning"),
                finalized: not_deleting(),
                data: empty_data.clone(),
            },
        ),
    ];
    let (reasons, data) = (shape.success_reasons, shape.success_data.clone());
    out.push(Scenario::new(
        "success",
        Box::new(move |m| {
            let job = reported(
                &running(&created(m, t0), t0),
                &success_report(job_generation(m), reasons, &data),
                t0,
            );
            Ok(finished(&job, true, t0))
        }),
        Expect::Put {
            conditions: reasons.map(|r| ("True", r.to_owned())),
            finalized: not_deleting(),
            data: Some(shape.success_body_data.clone()),
        },
    ));
    // The framework's GET says "not deleting" but the Job's adapter (which GETs later) saw the DELETE
    // and reported Finalized=True: the body claims nothing; the next event's Job (bumped generation)
    // reports the deletion.
    let data = shape.deletion_data.clone();
    out.push(Scenario::new(
        "a Job that reports Finalized=True for an object the framework saw alive",
        Box::new(move |m| {
            let g = job_generation(m);
            let job = reported(
                &running(&created(m, t0), t0),
                &deletion_report(Some(g), "True", "CleanupConfirmed", &data),
                t0,
            );
            Ok(finished(&job, true, t0))
        }),
        Expect::Put {
            conditions: deletion_conditions("True"),
            finalized: not_deleting(),
            data: Some(shape.deletion_body_data.clone()),
        },
    ));
    let term = |code, reason: &str| Termination {
        exit_code: code,
        reason: Some(reason.into()),
        message: None,
    };
    let failures: Vec<(Outcome, bool)> = vec![
        (Outcome::ExitedWithError(term(2, "Error")), true),
        (Outcome::OomKilled(term(137, "OOMKilled")), true),
        (Outcome::Timeout(std::time::Duration::from_secs(290)), false),
        (
            Outcome::InvalidResultFormat(
                "conditions[0].status must be True, False or Unknown".into(),
            ),
            true,
        ),
        (Outcome::MissingResults(term(0, "Completed")), true),
        (Outcome::Terminated, false),
    ];
    for (outcome, job_failed) in failures {
        let reason = outcome.reason();
        for deleting in [false, true] {
            let types = types.clone();
            let outcome = outcome.clone();
            let scenario = Scenario::new(
                format!("reporter-detected failure {reason}"),
                Box::new(move |m| {
                    let report = outcome.clone().into_report(&types);
                    let job = reported(&running(&created(m, t0), t0), &report, t0);
                    Ok(if job_failed {
                        finished(&job, false, t0)
                    } else {
                        job
                    })
                }),
                Expect::Put {
                    conditions: all("False", reason),
                    // A crash while deleting: the reporter wrote nothing on Finalized.
                    finalized: if deleting {
                        ("False", "FinalizedNotReported".into())
                    } else {
                        not_deleting()
                    },
                    data: empty_data.clone(),
                },
            );
            out.push(if deleting {
                scenario.deleting()
            } else {
                scenario
            });
        }
    }
    // The same failures when this adapter's HypershiftSuccessful is True at the Job's generation
    // (a steady pulse of a reconciled generation): Available Unknown, so that a crash does not
    // turn LastKnownReconciled False (the API discards it, rule 13, and keeps its conclusion).
    // Without a stored True (every scenario above: HypershiftSuccessful False at an older
    // generation) it stays False, which reaches the API.
    let reconciled: ConditionsEdit = |c| {
        let generation = c
            .iter()
            .find(|c| c["type"] == "ValidationSuccessful")
            .map(|c| c["observed_generation"].clone())
            .unwrap();
        for c in c.iter_mut().filter(|c| c["type"] == "HypershiftSuccessful") {
            c["status"] = json!("True");
            c["reason"] = json!("ControlPlaneReady");
            c["observed_generation"] = generation.clone();
        }
    };
    let no_verdict = |reason: &str| {
        [
            ("False", reason.to_owned()),
            ("Unknown", reason.to_owned()),
            ("False", reason.to_owned()),
        ]
    };
    for (outcome, job_failed) in [
        (Outcome::ExitedWithError(term(2, "Error")), true),
        (Outcome::Timeout(std::time::Duration::from_secs(290)), false),
        (Outcome::Terminated, false),
    ] {
        let reason = outcome.reason();
        let types = types.clone();
        out.push(Scenario {
            object_edit: reconciled,
            ..Scenario::new(
                format!("reporter-detected failure {reason} at a reconciled generation"),
                Box::new(move |m| {
                    let report = outcome.clone().into_report(&types);
                    let job = reported(&running(&created(m, t0), t0), &report, t0);
                    Ok(if job_failed {
                        finished(&job, false, t0)
                    } else {
                        job
                    })
                }),
                Expect::Put {
                    conditions: no_verdict(reason),
                    finalized: not_deleting(),
                    data: empty_data.clone(),
                },
            )
        });
    }
    out.push(Scenario {
        object_edit: reconciled,
        ..Scenario::new(
            "Job failed without a report at a reconciled generation",
            Box::new(move |m| Ok(finished(&running(&created(m, t0), t0), false, t0))),
            Expect::Put {
                conditions: no_verdict("JobFailedWithoutReport"),
                finalized: not_deleting(),
                data: empty_data.clone(),
            },
        )
    });
    // An adapter verdict is never overturned: a report's False at a reconciled generation (the
    // control plane really is gone) is sent as False.
    out.push(Scenario {
        object_edit: reconciled,
        ..Scenario::new(
            "the adapter's own False at a reconciled generation",
            Box::new(move |m| {
                let report = job_report::Report::new(vec![
                    job_report::Condition::new(
                        "Applied",
                        job_report::ConditionStatus::True,
                        "ManifestWorkApplied",
                        "applied",
                    ),
                    job_report::Condition::new(
                        "Available",
                        job_report::ConditionStatus::False,
                        "HostedClusterMissing",
                        "gone",
                    ),
                    job_report::Condition::new(
                        "Health",
                        job_report::ConditionStatus::False,
                        "HostedClusterMissing",
                        "gone",
                    ),
                ]);
                Ok(finished(
                    &reported(&running(&created(m, t0), t0), &report, t0),
                    true,
                    t0,
                ))
            }),
            Expect::Put {
                conditions: [
                    ("True", "ManifestWorkApplied".to_owned()),
                    ("False", "HostedClusterMissing".to_owned()),
                    ("False", "HostedClusterMissing".to_owned()),
                ],
                finalized: not_deleting(),
                data: None,
            },
        )
    });
    for deleting in [false, true] {
        let failed = Scenario::new(
            "Job failed without a report",
            Box::new(move |m| Ok(finished(&running(&created(m, t0), t0), false, t0))),
            Expect::Put {
                conditions: all("False", "JobFailedWithoutReport"),
                finalized: if deleting {
                    ("False", "JobFailedWithoutReport".into())
                } else {
                    not_deleting()
                },
                data: empty_data.clone(),
            },
        );
        let forbidden = Scenario::new(
            "framework error: the Job could not be created",
            Box::new(|_| {
                Err("jobs.batch is forbidden: User \"system:serviceaccount:hyperfleet-system:hypershift-adapter-framework\" cannot create resource \"jobs\"".into())
            }),
            Expect::Put {
                conditions: all("False", "JobApplyFailed"),
                finalized: if deleting {
                    ("False", "JobApplyFailed".into())
                } else {
                    not_deleting()
                },
                data: None,
            },
        );
        if deleting {
            out.extend([failed.deleting(), forbidden.deleting()]);
        } else {
            out.extend([failed, forbidden]);
        }
    }
    for (name, edit) in shape.not_met.iter().copied() {
        out.push(Scenario {
            object_edit: edit,
            ..Scenario::new(
                format!("preconditions not met: {name}"),
                Box::new(|_| panic!("no Job may be created when the preconditions are not met")),
                Expect::Nothing,
            )
        });
        // Deleting: the other adapters are finalizing and may never report Available=True at the
        // bumped generation again; the Job is created anyway (framework doc §6.4).
        out.push(
            Scenario {
                object_edit: edit,
                ..Scenario::new(
                    format!("preconditions not met: {name}, Job just created"),
                    Box::new(just_created),
                    Expect::Put {
                        conditions: all("Unknown", "JobRunning"),
                        finalized: ("False", "JobRunning".into()),
                        data: empty_data.clone(),
                    },
                )
            }
            .deleting(),
        );
    }
    // The adapter's deletion reports. While the work exists the adapter's observed_generation is
    // the work's (the generation before the DELETE); once the work is gone it has none. The body
    // must say the bumped generation in both (the hard delete needs Finalized=True at it).
    for (name, status, reason, offset) in shape.stages.iter().copied() {
        let data = shape.deletion_data.clone();
        out.push(
            Scenario::new(
                format!("Finalized={status} {reason} ({name})"),
                Box::new(move |m| {
                    let g = job_generation(m);
                    let report = deletion_report(offset.map(|o| g + o), status, reason, &data);
                    let job = reported(&running(&created(m, t0), t0), &report, t0);
                    Ok(finished(&job, true, t0))
                }),
                Expect::Put {
                    conditions: deletion_conditions(status),
                    finalized: (status, reason.to_owned()),
                    data: Some(shape.deletion_body_data.clone()),
                },
            )
            .deleting(),
        );
    }
    out
}

/// The control plane's report `data` with every value `""` (its keys are all strings).
fn controlplane_empty_data() -> Value {
    json!({"control_plane_endpoint": "", "version": "", "desired_version": "", "management_cluster": ""})
}

/// The control plane's outcomes: the shared ones, a report with keys beyond the contract's, and
/// an upgrade in progress.
fn controlplane_scenarios() -> Vec<Scenario> {
    use testbed::hyperfleet::outcomes::{created, finished, reported, running};
    let t0 = now() - jiff::SignedDuration::from_secs(40);
    let report_data = json!({"control_plane_endpoint": "https://api.prod-eu.example.com:443", "version": "4.19.3", "desired_version": "4.19.3", "management_cluster": "mgmt-eu-west2-01"});
    let reasons = ["ManifestWorkCreated", "ResourcesAvailable", "Healthy"];
    let shape = Shape {
        success_reasons: reasons,
        success_data: report_data.clone(),
        success_body_data: report_data.clone(),
        empty_body_data: controlplane_empty_data(),
        deletion_data: controlplane_empty_data(),
        deletion_body_data: controlplane_empty_data(),
        not_met: vec![
            ("DnsSuccessful missing", |c| {
                c.retain(|c| c["type"] != "DnsSuccessful")
            }),
            ("ValidationSuccessful False", |c| {
                c[2]["status"] = json!("False")
            }),
            ("PullsecretSuccessful at an older generation", |c| {
                let g = c[4]["observed_generation"].as_i64().unwrap();
                c[4]["observed_generation"] = json!(g - 1);
            }),
            ("no conditions at all", |c| c.clear()),
        ],
        stages: vec![
            ("held by NodePools", "False", "NodePoolsExist", Some(-1)),
            ("deletion requested", "False", "DeletionRequested", Some(-1)),
            ("finalizers running", "False", "FinalizersRunning", Some(-1)),
            ("work gone", "True", "CleanupConfirmed", None),
            (
                "work gone, reported at the old generation",
                "True",
                "CleanupConfirmed",
                Some(-1),
            ),
        ],
    };
    let mut out = common_scenarios(&shape);
    // Keys the contract does not have, and one the reporter cannot annotate: the body keeps to
    // the contract's keys.
    let mut extra = report_data.clone();
    extra["nodes"] = json!({"ready": 3, "total": 3});
    extra["upgrade_in_progress"] = json!(false);
    extra["not an annotation name!"] = json!("skipped by the reporter");
    out.push(Scenario::new(
        "success with extra data keys",
        Box::new(move |m| {
            let report = success_report(job_generation(m), reasons, &extra);
            let job = reported(&running(&created(m, t0), t0), &report, t0);
            Ok(finished(&job, true, t0))
        }),
        Expect::Put {
            conditions: reasons.map(|r| ("True", r.to_owned())),
            finalized: not_deleting(),
            data: Some(report_data.clone()),
        },
    ));
    // An upgrade in progress: the completed version and the desired one differ (contract §3).
    let mut upgrading = report_data;
    upgrading["desired_version"] = json!("4.20.1");
    let body = upgrading.clone();
    out.push(Scenario::new(
        "upgrade in progress",
        Box::new(move |m| {
            let report = success_report(job_generation(m), reasons, &upgrading);
            let job = reported(&running(&created(m, t0), t0), &report, t0);
            Ok(finished(&job, true, t0))
        }),
        Expect::Put {
            conditions: reasons.map(|r| ("True", r.to_owned())),
            finalized: not_deleting(),
            data: Some(body),
        },
    ));
    out
}

/// The generation the framework created the Job for (its `hyperfleet.io/generation`), as the
/// adapter reads `GENERATION`; a broken rendering (e.g. `2.147483647e+09`) is the config's
/// failure, checked elsewhere.
fn job_generation(job: &Value) -> i64 {
    job["metadata"]["annotations"]["hyperfleet.io/generation"]
        .as_str()
        .and_then(|g| g.parse::<f64>().ok())
        .map_or(1, |g| g as i64)
}

/// A report of the adapter while the object is deleted: the contract's `Finalized` with a stage
/// (`False`) or `CleanupConfirmed` (`True`) next to Applied/Available/Health (their reasons here
/// are the test's own: the config copies whatever the Job says), and `data`. Available is never
/// Unknown: the API discards an `Available=Unknown` report once the adapter has one stored (rule
/// 13), which would lose the `Finalized=True` the hard delete waits for.
fn deletion_report(
    observed_generation: Option<i64>,
    finalized: &str,
    reason: &str,
    data: &Value,
) -> job_report::Report {
    use job_report::{Condition, ConditionStatus};
    let status = |s: &str| match s {
        "True" => ConditionStatus::True,
        _ => ConditionStatus::False,
    };
    let gone = finalized == "True";
    job_report::Report {
        observed_generation,
        data: data.as_object().cloned(),
        ..job_report::Report::new(vec![
            Condition::new(
                "Applied",
                status(if gone { "True" } else { "False" }),
                "TestApplied",
                "deletion under way",
            ),
            Condition::new(
                "Available",
                ConditionStatus::False,
                "TestAvailable",
                "the object is being deleted",
            ),
            Condition::new("Health", ConditionStatus::True, "TestHealth", "ok"),
            Condition::new("Finalized", status(finalized), reason, "stage message"),
        ])
    }
}

/// What the body copies from [`deletion_report`].
fn deletion_conditions(finalized: &str) -> [(&'static str, String); 3] {
    [
        (
            if finalized == "True" { "True" } else { "False" },
            "TestApplied".into(),
        ),
        ("False", "TestAvailable".into()),
        ("True", "TestHealth".into()),
    ]
}

/// The cluster or NodePool the API answers at a generation, its conditions edited.
type ObjectAt = fn(i64, &dyn Fn(&mut Vec<Value>)) -> Value;

/// One of our task configs: the event it gets, the object it GETs, the Job it creates, where it
/// reports, and the outcomes it must handle.
struct Kind {
    /// The CloudEvent `data` of an event at `generation`.
    event: fn(i64) -> Value,
    /// The GET the config must make (as sent, prefixed), answered with [`Kind::object`].
    object_url: String,
    /// The object at `generation` with its conditions edited.
    object: ObjectAt,
    /// The pulse Job's name at `generation`.
    job_name: fn(i64) -> String,
    /// The status PUT's URL (as sent, prefixed).
    status_url: String,
    scenarios: fn() -> Vec<Scenario>,
}

/// The control plane's task config (`manifests/hyperfleet/adapter-task-config.yaml`).
fn controlplane() -> Kind {
    Kind {
        event: |generation| json!({"id": CLUSTER_ID, "kind": "Cluster", "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}"), "generation": generation}),
        object_url: format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}"),
        object: |generation, edit| cluster(CLUSTER_ID, generation, edit),
        job_name: |generation| format!("hs-cp-{CLUSTER_ID}-g{generation}"),
        status_url: format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/statuses"),
        scenarios: controlplane_scenarios,
    }
}

/// Every check, on a control-plane task config text; see [`conformance_of`].
fn conformance(text: &str) -> Vec<String> {
    conformance_of(&controlplane(), text)
}

/// Every check, on a task config text of `kind`: load, templates, every CEL expression, every
/// outcome's body against the API. Returns what failed (empty: conforms).
fn conformance_of(kind: &Kind, text: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let decoded = match schema::decode_task_config(text) {
        Ok(c) => c,
        Err(e) => return vec![e.to_string()],
    };
    let env = deploy_env(&decoded);
    let config = match load(text, &env, &BTreeMap::new()) {
        Ok(c) => c,
        Err(e) => return vec![e.to_string()],
    };
    failures.extend(
        config
            .warnings()
            .0
            .into_iter()
            .map(|w| format!("load warning: {w}")),
    );
    for p in &config.params {
        if let Some(t) = &p.type_
            && !schema::PARAM_TYPES.contains(&t.as_str())
        {
            failures.push(format!("params {}: type {t:?} fails at run time", p.name));
        }
        if let Some(schema::Source::Path(path)) = &p.source
            && path.starts_with("env.")
            && !p.required
            && p.default.is_none()
        {
            failures.push(format!("params {}: {path} is neither required nor defaulted: an unset variable fails at render time", p.name));
        }
    }
    let evaluated = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    for generation in GENERATIONS {
        for scenario in (kind.scenarios)() {
            if scenario.deleting && generation < 2 {
                continue;
            }
            let at = format!("generation {generation}, {}", scenario.name);
            let body = if scenario.deleting {
                deleted((kind.object)(generation, &|c| {
                    deletion_bump(c, generation);
                    (scenario.object_edit)(c);
                }))
            } else {
                (kind.object)(generation, &scenario.object_edit)
            };
            let api = |method: &str, url: &str| -> Result<Value, String> {
                if (method, url) == ("GET", kind.object_url.as_str()) {
                    Ok(body.clone())
                } else {
                    Err(format!("unexpected {method} {url}"))
                }
            };
            let created_jobs = std::cell::RefCell::new(Vec::new());
            let transport = |name: &str, manifest: &Value| -> Result<Option<Value>, String> {
                created_jobs
                    .borrow_mut()
                    .push((name.to_owned(), manifest.clone()));
                (scenario.job)(manifest).map(Some)
            };
            let world = World {
                adapter_name: "hypershift".into(),
                adapter_version: "0.3.1".into(),
                base_url: true,
                env: env.clone(),
                event: (kind.event)(generation),
                api: &api,
                transport: &transport,
                now: now(),
                evaluated: std::sync::Arc::clone(&evaluated),
            };
            let run = world.run(&config);
            failures.extend(check_run(
                kind,
                &at,
                &run,
                &created_jobs.borrow(),
                generation,
                &scenario.expect,
            ));
        }
    }
    let evaluated = evaluated.lock().unwrap();
    for c in config.cel_expressions() {
        if !evaluated.contains(&c.expression) {
            failures.push(format!(
                "{}: never evaluated in any outcome: {:?}",
                c.location, c.expression
            ));
        }
    }
    failures
}

fn check_run(
    kind: &Kind,
    at: &str,
    run: &Run,
    jobs: &[(String, Value)],
    generation: i64,
    expect: &Expect,
) -> Vec<String> {
    use testbed::hyperfleet::outcomes::job_admission_problems;
    let mut f = Vec::new();
    let mut fail = |m: String| f.push(format!("{at}: {m}"));
    if let Some(s) = &run.stopped {
        fail(format!("the event stopped, nothing reported: {s}"));
        return f;
    }
    for w in &run.warnings {
        fail(format!("framework WARN: {w}"));
    }
    for e in &run.post_errors {
        fail(format!("post phase failed: {e}"));
    }
    for (name, manifest) in jobs {
        let want = (kind.job_name)(generation);
        if manifest["metadata"]["name"] != json!(want) {
            fail(format!(
                "resource {name} is named {}, not {want}",
                manifest["metadata"]["name"]
            ));
        }
        for p in job_admission_problems(manifest) {
            fail(format!(
                "the API server refuses Job {}: {p}",
                manifest["metadata"]["name"]
            ));
        }
    }
    match expect {
        Expect::Nothing => {
            if !jobs.is_empty() {
                fail("a Job was created although the preconditions are not met".into());
            }
            if run.adapter["resourcesSkipped"] != true {
                fail("adapter.resourcesSkipped is not true".into());
            }
            for s in &run.sent {
                fail(format!(
                    "{} {} was sent although the preconditions are not met",
                    s.method, s.url
                ));
            }
        }
        Expect::Put {
            conditions,
            finalized,
            data,
        } => {
            if run.adapter["resourcesSkipped"] == true {
                fail(format!(
                    "no Job was created, the preconditions blocked it: {}",
                    run.adapter["skipReason"]
                ));
            }
            let puts: Vec<_> = run.sent.iter().filter(|s| s.method == "PUT").collect();
            if puts.len() != 1 {
                fail(format!("{} PUTs sent, want 1: {:?}", puts.len(), run.sent));
                return f;
            }
            let put = puts[0];
            let want_url = &kind.status_url;
            if put.url != *want_url {
                fail(format!("PUT {} instead of {want_url}", put.url));
            }
            let text = put.body.clone().unwrap_or_default();
            match api::put_status(
                &text,
                now(),
                Stored {
                    generation,
                    report: None,
                },
            ) {
                Answer::Stored => {}
                other => fail(format!("the API answers {other:?} to {text}")),
            }
            let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if let Some(schema) = STATUS_SCHEMA.as_ref() {
                for e in api::schema_errors(schema, &json!({"body": body})) {
                    fail(format!("OpenAPI AdapterStatusCreateRequest: {e}"));
                }
            }
            if body["adapter"] != "hypershift" {
                fail(format!("adapter is {}", body["adapter"]));
            }
            if body["observed_generation"] != json!(generation) {
                fail(format!(
                    "observed_generation is {}, want the integer {generation}",
                    body["observed_generation"]
                ));
            }
            match body["observed_time"].as_str() {
                Some("2026-11-26T03:47:44Z") => {}
                other => fail(format!(
                    "observed_time is {other:?}, want now() (second precision)"
                )),
            }
            for (type_, (status, reason)) in CONDITION_TYPES.iter().zip(conditions) {
                let got = body["conditions"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| c["type"] == *type_));
                match got {
                    Some(c) if c["status"] == *status && c["reason"] == json!(reason) => {}
                    other => fail(format!(
                        "condition {type_}: got {other:?}, want {status}/{reason}"
                    )),
                }
            }
            let types: Vec<&str> = body["conditions"]
                .as_array()
                .map(|cs| cs.iter().filter_map(|c| c["type"].as_str()).collect())
                .unwrap_or_default();
            if types != ["Applied", "Available", "Health", "Finalized"] {
                fail(format!(
                    "condition types {types:?}, want Applied, Available, Health, Finalized"
                ));
            }
            let (status, reason) = finalized;
            match body["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Finalized"))
            {
                Some(c) if c["status"] == *status && c["reason"] == json!(reason) => {}
                other => fail(format!(
                    "condition Finalized: got {other:?}, want {status}/{reason}"
                )),
            }
            // The hard delete (framework doc §6.6): Finalized=True counts only at the cluster's
            // current generation, and only if the report is stored although this adapter has
            // reported before (rule 13 discards an Available=Unknown one).
            if *status == "True" {
                let earlier = Stored {
                    generation,
                    report: Some((generation - 1, now() - jiff::SignedDuration::from_secs(60))),
                };
                match api::put_status(&text, now(), earlier) {
                    Answer::Stored => {}
                    other => fail(format!(
                        "the Finalized=True report is not stored after an earlier report ({other:?}): the API never hard-deletes"
                    )),
                }
            }
            if let Some(want) = data
                && body["data"] != *want
            {
                fail(format!("data is {}, want {want}", body["data"]));
            }
            if !body["data"].is_object() && !body["data"].is_null() {
                fail(format!("data is not an object: {}", body["data"]));
            }
        }
    }
    f
}

#[test]
fn our_adapter_config_loads_in_v0_3_1_with_the_kubernetes_transport() {
    let config =
        schema::load_adapter_config(ADAPTER_CONFIG, FRAMEWORK).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.adapter.name, "hypershift");
    assert!(
        config.clients.maestro.is_none(),
        "clients.maestro switches the whole adapter to the Maestro transport"
    );
    assert!(
        config.clients.kubernetes.is_some(),
        "the pulse Job needs the Kubernetes client"
    );
    assert!(config.clients.hyperfleet_api.is_some());
    // The version rule bites on a different minor (proves the check runs on our file).
    let version = config.adapter.version.clone().unwrap_or_default();
    assert!(
        matches!(
            schema::load_adapter_config(ADAPTER_CONFIG, "v0.4.0"),
            Err(LoadError::Version(_))
        ),
        "{version}"
    );
    let unknown =
        ADAPTER_CONFIG.replace("  kubernetes:\n", "  kubernetes:\n    kubeConfigPath: x\n");
    assert!(
        matches!(schema::load_adapter_config(&unknown, FRAMEWORK), Err(LoadError::Decode(e)) if e.contains("kubeConfigPath"))
    );
}

#[test]
fn our_task_config_conforms_in_every_outcome() {
    let failures = conformance(TASK_CONFIG);
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn an_unset_required_deployment_variable_stops_the_adapter_at_start_up() {
    let config = schema::decode_task_config(TASK_CONFIG).unwrap();
    let env = deploy_env(&config);
    for p in config.params.iter().filter(|p| p.required) {
        if let Some(schema::Source::Path(path)) = &p.source
            && let Some(var) = path.strip_prefix("env.")
        {
            let mut without = env.clone();
            without.insert(var.to_owned(), String::new());
            match config.structural(&without) {
                Err(LoadError::Structural(e)) => assert!(
                    e.ends_with(&format!("required environment variable {var} is not set")),
                    "{e}"
                ),
                other => panic!("{var} empty: {other:?}"),
            }
        }
    }
}

// -------------------------------------------------------------------------------------------
// Injected defects: each one fails a specific check of `conformance`
// -------------------------------------------------------------------------------------------

/// Our config with `from` replaced by `to` (which must occur).
fn mutated(from: &str, to: &str) -> String {
    assert!(
        TASK_CONFIG.contains(from),
        "the config no longer contains {from:?}; update the defect"
    );
    TASK_CONFIG.replacen(from, to, 1)
}

#[track_caller]
fn assert_caught(text: &str, needle: &str) {
    let failures = conformance(text);
    assert!(
        failures.iter().any(|f| f.contains(needle)),
        "the defect was not caught as {needle:?}; failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn defect_an_unknown_key_is_refused_at_load() {
    assert_caught(
        &mutated(
            "    transport:\n      client: \"kubernetes\"",
            "    backend: kubernetes\n    transport:\n      client: \"kubernetes\"",
        ),
        "unknown field `backend`",
    );
    assert_caught(
        &mutated("post_actions:", "postActions:"),
        "unknown field `postActions`",
    );
    // Inside a source mapping the framework is not strict: accepted there, as upstream.
    let loose = mutated(
        "        method: \"GET\"",
        "        method: \"GET\"\n        bogus: 1",
    );
    assert!(conformance(&loose).is_empty());
}

#[test]
fn defect_an_undeclared_template_variable_is_refused_at_load() {
    assert_caught(
        &mutated(
            "by_name: \"hs-cp-{{ .clusterId }}",
            "by_name: \"hs-cp-{{ .clusterID }}",
        ),
        "undefined template variable \"clusterID\"",
    );
    assert_caught(
        &mutated(
            "url: \"/clusters/{{ .clusterId }}\"",
            "url: \"/clusters/{{ .clusterId }}/{{ .generation }}\"",
        ),
        "params[1].source.api_call: undefined template variable \"generation\"",
    );
    assert_caught(
        &mutated(
            "job_namespace: \"hyperfleet-system\"",
            "job_namespace: \"{{ .resources.pulseJob.metadata.namespace }}\"",
        ),
        "template variable \"resources\" is not in the template data",
    );
}

#[test]
fn defect_conditions_as_a_map_is_refused_by_the_api() {
    let text = mutated(
        "        conditions:\n          - type: \"Applied\"\n            status: \"False\"",
        "        conditions:\n          Applied:\n            status: \"False\"\n          Available:\n            status: \"False\"\n          Health:\n            type: \"Applied\"\n            status: \"False\"",
    );
    // Cut the rest of the old list (up to metadata) so that the YAML stays valid.
    let start = text
        .find("          Health:\n            type: \"Applied\"\n            status: \"False\"")
        .unwrap();
    let rest = &text[start..];
    let end = rest
        .find("        metadata:\n          job_name: \"hs-cp")
        .unwrap();
    let text = format!(
        "{}          Health:\n            status: \"False\"\n{}",
        &text[..start],
        &rest[end..]
    );
    assert_caught(&text, "field 'conditions' must be an array");
}

#[test]
fn defect_a_64_character_job_name_is_refused_by_the_api_server() {
    let long = TASK_CONFIG.replace(
        "hs-cp-{{ .clusterId }}-g{{ .generation }}",
        "hs-controlplane-{{ .clusterId }}-g{{ .generation }}",
    );
    assert_ne!(long, TASK_CONFIG);
    // 16 + 36 + 2 + 10 = 64 bytes at generation 2147483647.
    assert_caught(&long, "must be no more than 63 bytes");
    // A label value too: the cluster id label with a prefix.
    let label = mutated(
        "hyperfleet.io/cluster-id: \"{{ .clusterId }}\"",
        "hyperfleet.io/cluster-id: \"cluster-{{ .clusterId }}-{{ .clusterId }}\"",
    );
    assert_caught(
        &label,
        "must be no more than 63 bytes (label hyperfleet.io/cluster-id)",
    );
}

#[test]
fn defect_data_left_as_json_text_is_refused_by_the_api() {
    let text = mutated(
        "        data:\n          control_plane_endpoint:",
        "        data:\n          expression: 'resources.?pulseJob.?metadata.?annotations[?\"hyperfleet.io/report-data\"].orValue(\"{}\")'\n        unused:\n          control_plane_endpoint:",
    );
    assert_caught(&text, "field 'data' must be an object");
}

#[test]
fn defect_a_cel_function_the_framework_lacks_is_a_failure() {
    let text = mutated(
        "expression: 'resources.?pulseJob.?metadata.?annotations[?\"data.hyperfleet.io/version\"].orValue(\"\")'",
        "expression: 'json.decode(resources.?pulseJob.?metadata.?annotations[?\"hyperfleet.io/report-data\"].orValue(\"{}\")).version'",
    );
    assert_caught(&text, "no such attribute(s): json");
}

#[test]
fn defect_a_cel_built_list_of_maps_in_the_payload_is_a_failure() {
    let text = mutated(
        "        metadata:\n          job_name:\n            expression:",
        "        extra:\n          expression: 'resources.?pulseJob.?status.?conditions.orValue([]).filter(c, c.type == \"Applied\")'\n        metadata:\n          job_name:\n            expression:",
    );
    assert_caught(&text, "serialises as [{\"Adapter\":{}}");
}

#[test]
fn defect_a_templated_observed_generation_is_refused_by_the_api() {
    let text = mutated(
        "        observed_generation:\n          expression: \"generation\"",
        "        observed_generation: \"{{ .generation }}\"",
    );
    assert_caught(&text, "field 'observed_generation' must be a number");
}

#[test]
fn defect_a_missing_mandatory_condition_is_refused_by_the_api() {
    let start = TASK_CONFIG
        .find("          - type: \"Health\"\n            status: \"False\"")
        .unwrap();
    let end = start + TASK_CONFIG[start..].find("        metadata:\n").unwrap();
    let text = format!("{}{}", &TASK_CONFIG[..start], &TASK_CONFIG[end..]);
    assert_caught(&text, "missing mandatory condition 'Health'");
}

#[test]
fn defect_a_status_put_when_preconditions_are_not_met_is_caught() {
    let text = TASK_CONFIG.replace("'!adapter.?resourcesSkipped.orValue(false) && adapter.?executionStatus.orValue(\"\") == \"success\"'", "'adapter.?executionStatus.orValue(\"\") == \"success\"'");
    assert_ne!(text, TASK_CONFIG);
    assert_caught(&text, "was sent although the preconditions are not met");
}

#[test]
fn defect_a_wrong_operator_and_a_hyphenated_name_are_refused_at_load() {
    assert_caught(
        &mutated("name: \"pulseJob\"", "name: \"pulse-job\""),
        "must start with lowercase letter",
    );
    assert_caught(
        &mutated(
            "  - name: \"validationSucceeded\"\n    expression: |",
            "  - name: \"validationSucceeded\"\n    conditions:\n      - {field: generation, operator: greaterThanOrEqual, value: 1}\n    expression: |",
        ),
        "invalid operator \"greaterThanOrEqual\"",
    );
}

// -------------------------------------------------------------------------------------------
// The dry-run inputs of docs/deploying.md (manifests/hyperfleet/dryrun/), run as `adapter serve
// --dry-run-*` would run them (§4: first endpoint whose method and unanchored regexp match wins,
// its responses in order, the last repeating; a discovery override replaces the applied object with
// the same name; without one the Job is the rendered manifest, with no status)
// -------------------------------------------------------------------------------------------

const DRYRUN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../manifests/hyperfleet/dryrun"
);

fn dryrun_file_in(dir: &str, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{name}")).unwrap()).unwrap()
}

fn dryrun(responses: &str, discovery: Option<&str>) -> Run {
    dryrun_in(DRYRUN, TASK_CONFIG, responses, discovery)
}

/// The dry-run of `config` with the inputs in `dir` (`event.json`, `responses`, `discovery`) and
/// the environment of the control plane's `dryrun.env` (the NodePool deployment has the same
/// variables).
fn dryrun_in(dir: &str, config: &str, responses: &str, discovery: Option<&str>) -> Run {
    let env: BTreeMap<String, String> = std::fs::read_to_string(format!("{DRYRUN}/dryrun.env"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('='))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.trim().to_owned(), v.trim().to_owned())
        })
        .collect();
    let config = load(config, &env, &BTreeMap::new()).unwrap_or_else(|e| panic!("dryrun.env: {e}"));
    let event = dryrun_file_in(dir, "event.json");
    let responses = dryrun_file_in(dir, responses);
    let served = std::cell::RefCell::new(BTreeMap::<usize, usize>::new());
    let api = |method: &str, url: &str| -> Result<Value, String> {
        for (i, endpoint) in responses["responses"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let m = &endpoint["match"];
            let pattern = regex::Regex::new(m["urlPattern"].as_str().unwrap()).unwrap();
            if (m["method"] == method || m["method"] == "*") && pattern.is_match(url) {
                let list = endpoint["responses"].as_array().unwrap();
                let mut served = served.borrow_mut();
                let n = served.entry(i).or_default();
                let answer = &list[(*n).min(list.len() - 1)];
                *n += 1;
                let code = answer["statusCode"]
                    .as_u64()
                    .filter(|c| *c != 0)
                    .unwrap_or(200);
                return if (200..300).contains(&code) {
                    Ok(answer.get("body").cloned().unwrap_or(json!({})))
                } else {
                    Err(format!("{code}"))
                };
            }
        }
        Ok(json!({}))
    };
    let overrides = discovery
        .map(|f| dryrun_file_in(dir, f))
        .unwrap_or(json!({}));
    let transport = |_: &str, manifest: &Value| -> Result<Option<Value>, String> {
        let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
        Ok(Some(
            overrides
                .get(name)
                .cloned()
                .unwrap_or_else(|| manifest.clone()),
        ))
    };
    let world = World {
        adapter_name: "hypershift".into(),
        adapter_version: "0.3.1".into(),
        base_url: true,
        env,
        event: event["data"].clone(),
        api: &api,
        transport: &transport,
        now: now(),
        evaluated: Default::default(),
    };
    world.run(&config)
}

fn dryrun_body(run: &Run) -> Value {
    dryrun_body_at(run, 3)
}

/// The one PUT body of a dry-run, checked against the API rules for an object at `generation`.
fn dryrun_body_at(run: &Run, generation: i64) -> Value {
    assert!(
        run.warnings.is_empty() && run.post_errors.is_empty(),
        "{:#?} {:#?}",
        run.warnings,
        run.post_errors
    );
    assert_eq!(run.sent.len(), 1, "{:?}", run.sent);
    let text = run.sent[0].body.clone().unwrap();
    assert_eq!(
        api::put_status(
            &text,
            now(),
            Stored {
                generation,
                report: None
            }
        ),
        Answer::Stored,
        "{text}"
    );
    if let Some(schema) = STATUS_SCHEMA.as_ref() {
        assert_eq!(
            api::schema_errors(
                schema,
                &json!({"body": serde_json::from_str::<Value>(&text).unwrap()})
            ),
            Vec::<String>::new()
        );
    }
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_documented_dry_run_reports_the_successful_pulse() {
    let run = dryrun("api-responses.json", Some("discovery.json"));
    let body = dryrun_body(&run);
    let statuses: Vec<_> = body["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].clone(), c["status"].clone()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (json!("Applied"), json!("True")),
            (json!("Available"), json!("True")),
            (json!("Health"), json!("True")),
            (json!("Finalized"), json!("False"))
        ]
    );
    assert_eq!(body["conditions"][3]["reason"], "");
    assert_eq!(body["observed_generation"], json!(3));
    assert_eq!(
        body["data"],
        json!({"control_plane_endpoint": "https://api.prod-eu-west2-a.hcp.example.com:443", "version": "4.19.3", "desired_version": "4.19.3", "management_cluster": "mgmt-eu-west2-01"})
    );
    assert_eq!(
        run.manifests["pulseJob"]["metadata"]["name"],
        "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3"
    );
}

#[test]
fn the_documented_dry_run_without_discovery_reports_job_running() {
    let body = dryrun_body(&dryrun("api-responses.json", None));
    for c in &body["conditions"].as_array().unwrap()[..3] {
        assert_eq!(
            (&c["status"], &c["reason"]),
            (&json!("Unknown"), &json!("JobRunning")),
            "{c}"
        );
    }
    assert_eq!(body["conditions"][3]["type"], "Finalized");
    assert_eq!(body["conditions"][3]["reason"], "");
}

/// The deleting cluster (generation 4 after the DELETE, the other adapters still at 3): the
/// preconditions do not hold it back, the Job of generation 4 is created although the event says 3
/// (the config reads the fresh GET), and the body says Finalized=False/JobRunning at generation 4.
#[test]
fn the_documented_deleting_dry_run_creates_the_bumped_generations_job() {
    let run = dryrun("api-responses-deleting.json", None);
    assert_eq!(run.adapter["resourcesSkipped"], false, "{:?}", run.adapter);
    assert_eq!(
        run.manifests["pulseJob"]["metadata"]["name"],
        "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g4"
    );
    let body = dryrun_body_at(&run, 4);
    assert_eq!(body["observed_generation"], json!(4));
    let finalized = &body["conditions"][3];
    assert_eq!(
        (
            &finalized["type"],
            &finalized["status"],
            &finalized["reason"]
        ),
        (&json!("Finalized"), &json!("False"), &json!("JobRunning"))
    );
}

#[test]
fn the_documented_waiting_dry_run_creates_no_job_and_sends_nothing() {
    let run = dryrun("api-responses-waiting.json", Some("discovery.json"));
    assert_eq!(run.stopped, None);
    assert!(
        run.manifests.is_empty(),
        "a Job was rendered: {:?}",
        run.manifests.keys()
    );
    assert!(run.sent.is_empty(), "{:?}", run.sent);
    assert_eq!(run.adapter["resourcesSkipped"], true);
    assert_eq!(
        run.adapter["skipReason"],
        "precondition 'dnsSucceeded' not met"
    );
}

#[test]
fn defect_an_untyped_generation_renders_in_exponent_form() {
    // Numbers from the API are float64 in the framework: untyped, 2147483647 renders as
    // 2.147483647e+09 in the Job name (and 1000000 as 1e+06).
    let text = mutated(
        "    source: \"cluster.generation\"\n    type: \"int\"\n",
        "    source: \"cluster.generation\"\n",
    );
    assert_caught(
        &text,
        "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g2.147483647e+09",
    );
}

// -------------------------------------------------------------------------------------------
// Deletion and Finalized: injected defects
// -------------------------------------------------------------------------------------------

/// The Finalized status expression of statusPayload.
const FINALIZED_STATUS: &str = r#"                isDeleting && resources.?pulseJob.?status.?conditions.orValue([]).exists(c, c.type == "Finalized")
                  ? resources.pulseJob.status.conditions.filter(c, c.type == "Finalized")[0].status
                  : "False""#;

#[test]
fn defect_finalized_true_when_the_job_says_false_is_caught() {
    let text = mutated(
        FINALIZED_STATUS,
        // True whenever the Job has a Finalized condition, whatever its status.
        &FINALIZED_STATUS.replace(
            r#"? resources.pulseJob.status.conditions.filter(c, c.type == "Finalized")[0].status"#,
            r#"? "True""#,
        ),
    );
    assert_caught(
        &text,
        "Finalized=False NodePoolsExist (held by NodePools): condition Finalized: got Some(Object {\"message\": String(\"stage message\"), \"reason\": String(\"NodePoolsExist\"), \"status\": String(\"True\")",
    );
}

#[test]
fn defect_a_job_without_finalized_read_as_finalized_is_caught() {
    // A crash while deleting leaves no Finalized on the Job; reading that as done would let the API
    // hard-delete a cluster whose control plane may still exist.
    let text = mutated(
        FINALIZED_STATUS,
        &FINALIZED_STATUS.replace(r#": "False""#, r#": "True""#),
    );
    assert_caught(
        &text,
        "deleting, reporter-detected failure AdapterExitedWithError: condition Finalized",
    );
    assert_caught(
        &text,
        "deleting, Job failed without a report: condition Finalized",
    );
}

#[test]
fn defect_finalized_claimed_for_a_cluster_not_being_deleted_is_caught() {
    let text = mutated(
        FINALIZED_STATUS,
        &FINALIZED_STATUS.replacen("isDeleting && ", "", 1),
    );
    assert_caught(
        &text,
        "a Job that reports Finalized=True for an object the framework saw alive: condition Finalized",
    );
}

#[test]
fn defect_a_deleting_cluster_held_by_the_preconditions_is_caught() {
    let text = mutated(
        "      isDeleting || cluster.?status.?conditions.orValue([]).exists(c,\n        c.type == \"ValidationSuccessful\"",
        "      cluster.?status.?conditions.orValue([]).exists(c,\n        c.type == \"ValidationSuccessful\"",
    );
    assert_caught(
        &text,
        "deleting, Finalized=True CleanupConfirmed (work gone): no Job was created, the preconditions blocked it: \"precondition 'validationSucceeded' not met\"",
    );
}

#[test]
fn defect_the_works_generation_in_the_finalized_report_is_caught() {
    // Without the deleting branch, observed_generation is the adapter's (the work's, from before
    // the DELETE): Finalized=True at an old generation never triggers the hard delete.
    let text = mutated(
        "            isDeleting\n              ? int(resources.?pulseJob.?metadata.?annotations[?\"hyperfleet.io/generation\"].orValue(string(generation)))\n              : int(",
        "            false\n              ? int(resources.?pulseJob.?metadata.?annotations[?\"hyperfleet.io/generation\"].orValue(string(generation)))\n              : int(",
    );
    assert_caught(
        &text,
        "generation 3, deleting, Finalized=True CleanupConfirmed (work gone, reported at the old generation): observed_generation is 2, want the integer 3",
    );
}

#[test]
fn defect_finalized_missing_while_deleting_is_caught() {
    // errorPayload without its Finalized: the body is accepted but says nothing about cleanup.
    let start = TASK_CONFIG
        .find("          # As in statusPayload: \"\" unless deleting; never True, since no pulse ran.")
        .unwrap();
    let end = start + TASK_CONFIG[start..].find("        metadata:\n").unwrap();
    let text = format!("{}{}", &TASK_CONFIG[..start], &TASK_CONFIG[end..]);
    assert_caught(
        &text,
        "deleting, framework error: the Job could not be created: condition types [\"Applied\", \"Available\", \"Health\"]",
    );
}

#[test]
fn defect_the_upgrades_desired_version_not_reported_is_caught() {
    let text = mutated(
        "          desired_version:\n            expression: 'resources.?pulseJob.?metadata.?annotations[?\"data.hyperfleet.io/desired_version\"].orValue(\"\")'\n",
        "",
    );
    assert_caught(&text, "upgrade in progress: data is");
}

#[test]
fn defect_an_unknown_available_next_to_finalized_true_is_caught() {
    // The API discards an Available=Unknown report once the adapter has one stored (rule 13), and
    // the Finalized=True in it with it: the hard delete would wait forever.
    let text = mutated(
        "                  ? resources.pulseJob.status.conditions.filter(c, c.type == \"Available\")[0].status",
        "                  ? \"Unknown\"",
    );
    assert_caught(
        &text,
        "Finalized=True CleanupConfirmed (work gone): the Finalized=True report is not stored after an earlier report (Discarded(13))",
    );
}

// -------------------------------------------------------------------------------------------
// Our NodePool task config (manifests/hyperfleet/nodepool/), checked exactly like the control
// plane's: the same load, templates, CEL and API rules, every outcome of its pulse Job, the
// deletion flows, its event (owner_references) and its nested status path
// -------------------------------------------------------------------------------------------

const NODEPOOL_TASK_CONFIG: &str =
    include_str!("../../manifests/hyperfleet/nodepool/adapter-task-config.yaml");
const NODEPOOL_ADAPTER_CONFIG: &str =
    include_str!("../../manifests/hyperfleet/nodepool/adapter-config.yaml");
const NODEPOOL_DRYRUN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../manifests/hyperfleet/nodepool/dryrun"
);
const NODEPOOL_ID: &str = testbed::ids::NODEPOOL_ID;

/// A NodePool event's `data` as Sentinel publishes it and the framework decodes it (framework
/// doc §1 step 0: `{id, kind, href, generation, owner_references{id, kind, href}}`).
fn nodepool_event(generation: i64) -> Value {
    json!({
        "id": NODEPOOL_ID, "kind": "NodePool",
        "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{NODEPOOL_ID}"),
        "generation": generation,
        "owner_references": {"id": CLUSTER_ID, "kind": "Cluster", "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}")},
    })
}

/// A `GET /clusters/{cid}/nodepools/{id}` body in the shape of
/// `fixtures/hyperfleet/example-nodepool.json`, at `generation`, with the conditions edited by
/// `edit`; its name is the longest a NodePool may have (15).
fn nodepool(generation: i64, edit: &dyn Fn(&mut Vec<Value>)) -> Value {
    let condition = |type_: &str, status: &str, reason: &str, observed: i64| {
        json!({
            "created_time": "2026-11-25T09:20:11.482915Z", "last_transition_time": "2026-11-26T03:15:02Z",
            "last_updated_time": "2026-11-26T03:40:19Z", "message": format!("{type_} message"),
            "observed_generation": observed, "reason": reason, "status": status, "type": type_,
        })
    };
    let mut conditions = vec![
        condition(
            "Reconciled",
            "False",
            "ReconciledMissingAdapters",
            generation,
        ),
        condition(
            "LastKnownReconciled",
            "True",
            "AllAdaptersReconciled",
            (generation - 1).max(1),
        ),
        condition(
            "ValidationSuccessful",
            "True",
            "ValidationPassed",
            generation,
        ),
        condition(
            "HypershiftSuccessful",
            "False",
            "Updating",
            (generation - 1).max(1),
        ),
    ];
    edit(&mut conditions);
    json!({
        "created_by": "jdoe@example.com", "created_time": "2026-11-25T09:20:11.482915Z",
        "generation": generation,
        "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{NODEPOOL_ID}"),
        "id": NODEPOOL_ID, "kind": "NodePool", "labels": {"pooltype": "worker"},
        "name": testbed::ids::LONGEST_NODEPOOL_NAME,
        "owner_references": {"href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}"), "id": CLUSTER_ID, "kind": "Cluster"},
        "spec": {
            "platform": {"gcp": {"diskSize": 128, "machineType": "n2-standard-8", "zones": ["europe-west2-a"]}, "type": "gcp"},
            "release": {"image": "quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64"},
            "nodeCount": 3,
        },
        "status": {"conditions": conditions}, "tenancy": {},
        "updated_by": "jdoe@example.com", "updated_time": "2026-11-26T03:40:10.552013Z",
    })
}

/// The NodePool task config (`manifests/hyperfleet/nodepool/adapter-task-config.yaml`).
fn nodepool_kind() -> Kind {
    Kind {
        event: nodepool_event,
        object_url: format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{NODEPOOL_ID}"),
        object: nodepool,
        job_name: |generation| format!("hs-np-{NODEPOOL_ID}-g{generation}"),
        status_url: format!(
            "/api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{NODEPOOL_ID}/statuses"
        ),
        scenarios: nodepool_scenarios,
    }
}

/// Every check on a NodePool task config text.
fn nodepool_conformance(text: &str) -> Vec<String> {
    conformance_of(&nodepool_kind(), text)
}

/// The `node_versions` entry of the nodepool report for one version.
fn node_version(ocp: &str, kubelet: &str, ready: u32, unready: u32) -> Value {
    json!({"ocp_version": ocp, "kubelet_version": kubelet, "ready_nodes": ready, "unready_nodes": unready})
}

/// A nodepool report's `data` (every key of the interface) ...
fn nodepool_data(
    replicas: (Option<u32>, u32),
    autoscaling: Option<(u32, u32)>,
    version: &str,
    node_versions: Value,
) -> Value {
    let sum = |key: &str| {
        node_versions
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v[key].as_u64().unwrap())
            .sum::<u64>()
    };
    json!({
        "desired_replicas": replicas.0, "current_replicas": replicas.1,
        "autoscaling_min": autoscaling.map(|a| a.0), "autoscaling_max": autoscaling.map(|a| a.1),
        "version": version, "node_versions": node_versions,
        "ready_nodes": sum("ready_nodes"), "unready_nodes": sum("unready_nodes"),
        "management_cluster": "mgmt-eu-west2-01",
    })
}

/// ... and what the body's `data` must say for it: the same, with `node_versions` as its compact
/// JSON text (the status-reporter's annotation, copied as a string) and keys the report lacks as
/// `null` (numbers) or `""` (strings).
fn nodepool_body_data(report: &Value) -> Value {
    let mut body = nodepool_empty_body_data();
    for (key, value) in report.as_object().unwrap() {
        if body.get(key).is_some() {
            body[key] = match key.as_str() {
                "node_versions" => json!(value.to_string()),
                _ => value.clone(),
            };
        }
    }
    body
}

/// The body's `data` while the Job has no data annotations.
fn nodepool_empty_body_data() -> Value {
    json!({
        "desired_replicas": null, "current_replicas": null, "autoscaling_min": null, "autoscaling_max": null,
        "version": "", "node_versions": "", "ready_nodes": null, "unready_nodes": null,
        "management_cluster": "",
    })
}

/// (status, reason) of Applied, Available and Health in a report.
type ReportConditions = [(&'static str, &'static str); 3];

/// A nodepool report with these (status, reason) for Applied, Available, Health.
fn nodepool_report(
    generation: i64,
    conditions: [(&str, &str); 3],
    data: &Value,
) -> job_report::Report {
    use job_report::{Condition, ConditionStatus};
    let status = |s: &str| match s {
        "True" => ConditionStatus::True,
        "False" => ConditionStatus::False,
        _ => ConditionStatus::Unknown,
    };
    let [applied, available, health] = conditions;
    job_report::Report {
        observed_generation: Some(generation),
        data: data.as_object().cloned(),
        ..job_report::Report::new(vec![
            Condition::new("Applied", status(applied.0), applied.1, "applied"),
            Condition::new("Available", status(available.0), available.1, "nodes"),
            Condition::new("Health", status(health.0), health.1, "health"),
        ])
    }
}

/// The NodePool's outcomes: the shared ones, and the report's data in the shapes the interface
/// allows: fixed replicas, autoscaling, a NodePool HyperShift has not reported on yet, nodes at
/// two versions during an upgrade, and a report that lacks keys.
fn nodepool_scenarios() -> Vec<Scenario> {
    use testbed::hyperfleet::outcomes::{created, finished, reported, running};
    let t0 = now() - jiff::SignedDuration::from_secs(40);
    let ready = nodepool_data(
        (Some(3), 3),
        None,
        "4.19.3",
        json!([node_version("4.19.3", "v1.32.5", 3, 0)]),
    );
    let deleting = nodepool_data((Some(3), 0), None, "4.19.3", json!([]));
    let shape = Shape {
        success_reasons: ["ManifestWorkApplied", "NodePoolReady", "NoIssues"],
        success_body_data: nodepool_body_data(&ready),
        success_data: ready,
        empty_body_data: nodepool_empty_body_data(),
        deletion_body_data: nodepool_body_data(&deleting),
        deletion_data: deleting,
        not_met: vec![
            ("ValidationSuccessful missing", |c| {
                c.retain(|c| c["type"] != "ValidationSuccessful")
            }),
            ("ValidationSuccessful False", |c| {
                c[2]["status"] = json!("False")
            }),
            ("ValidationSuccessful at an older generation", |c| {
                let g = c[2]["observed_generation"].as_i64().unwrap();
                c[2]["observed_generation"] = json!(g - 1);
            }),
            ("no conditions at all", |c| c.clear()),
        ],
        stages: vec![
            ("deletion requested", "False", "DeletionRequested", Some(-1)),
            ("finalizers running", "False", "FinalizersRunning", Some(-1)),
            ("work gone", "True", "CleanupConfirmed", None),
            (
                "work gone, reported at the old generation",
                "True",
                "CleanupConfirmed",
                Some(-1),
            ),
        ],
    };
    let mut out = common_scenarios(&shape);
    let mut lacking = nodepool_data(
        (Some(3), 3),
        None,
        "4.19.3",
        json!([node_version("4.19.3", "v1.32.5", 3, 0)]),
    );
    for key in ["desired_replicas", "node_versions"] {
        lacking.as_object_mut().unwrap().remove(key);
    }
    let cases: [(&str, ReportConditions, Value); 4] = [
        (
            "autoscaling 2 to 6, 4 nodes, one not ready",
            [
                ("True", "ManifestWorkApplied"),
                ("False", "NotReady"),
                ("True", "NoIssues"),
            ],
            nodepool_data(
                (None, 4),
                Some((2, 6)),
                "4.19.3",
                json!([node_version("4.19.3", "v1.32.5", 3, 1)]),
            ),
        ),
        (
            "a new NodePool, no status from HyperShift yet",
            [
                ("True", "ManifestWorkCreated"),
                ("False", "Provisioning"),
                ("True", "NoIssues"),
            ],
            nodepool_data((Some(3), 0), None, "", json!([])),
        ),
        (
            "an upgrade, nodes at two versions",
            [
                ("True", "ManifestWorkUpdated"),
                ("False", "Updating"),
                ("True", "NoIssues"),
            ],
            nodepool_data(
                (Some(3), 3),
                None,
                "4.19.3",
                json!([
                    node_version("4.19.3", "v1.32.5", 1, 0),
                    node_version("4.20.1", "v1.33.2", 2, 0)
                ]),
            ),
        ),
        (
            "a report without desired_replicas and node_versions",
            [
                ("True", "ManifestWorkApplied"),
                ("True", "NodePoolReady"),
                ("True", "NoIssues"),
            ],
            lacking,
        ),
    ];
    for (name, conditions, data) in cases {
        let body = nodepool_body_data(&data);
        out.push(Scenario::new(
            name,
            Box::new(move |m| {
                let report = nodepool_report(job_generation(m), conditions, &data);
                let job = reported(&running(&created(m, t0), t0), &report, t0);
                Ok(finished(&job, true, t0))
            }),
            Expect::Put {
                conditions: conditions.map(|(s, r)| (s, r.to_owned())),
                finalized: not_deleting(),
                data: Some(body),
            },
        ));
    }
    out
}

#[test]
fn the_nodepool_bodies_data_is_typed_as_the_interface_says() {
    // The expectations the outcomes are checked against, pinned once by hand.
    let data = nodepool_data(
        (None, 4),
        Some((2, 6)),
        "4.19.3",
        json!([node_version("4.19.3", "v1.32.5", 3, 1)]),
    );
    assert_eq!(
        nodepool_body_data(&data),
        json!({
            "desired_replicas": null, "current_replicas": 4, "autoscaling_min": 2, "autoscaling_max": 6,
            "version": "4.19.3",
            "node_versions": r#"[{"kubelet_version":"v1.32.5","ocp_version":"4.19.3","ready_nodes":3,"unready_nodes":1}]"#,
            "ready_nodes": 3, "unready_nodes": 1, "management_cluster": "mgmt-eu-west2-01",
        })
    );
    // And the status-reporter writes exactly that text for node_versions, and "null" for null.
    let job = testbed::hyperfleet::outcomes::reported(
        &testbed::hyperfleet::outcomes::created(
            &json!({"metadata": {"name": "j", "annotations": {}}, "spec": {"template": {}}}),
            now(),
        ),
        &nodepool_report(3, [("True", "A"), ("True", "B"), ("True", "C")], &data),
        now(),
    );
    let annotations = &job["metadata"]["annotations"];
    assert_eq!(
        annotations["data.hyperfleet.io/node_versions"],
        nodepool_body_data(&data)["node_versions"]
    );
    assert_eq!(annotations["data.hyperfleet.io/desired_replicas"], "null");
    assert_eq!(annotations["data.hyperfleet.io/current_replicas"], "4");
}

#[test]
fn the_test_nodepool_and_event_have_the_shape_of_the_apis() {
    if FIXTURES.is_none() {
        return;
    }
    let example: Value = serde_json::from_str(&fixture("example-nodepool.json")).unwrap();
    let ours = nodepool(3, &|_| {});
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&ours), keys(&example));
    assert_eq!(
        keys(&ours["status"]["conditions"][0]),
        keys(&example["status"]["conditions"][0])
    );
    assert_eq!(
        keys(&ours["owner_references"]),
        keys(&example["owner_references"])
    );
    let types = |v: &Value| {
        v["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(types(&ours), types(&example));
    assert_eq!(ours["name"].as_str().unwrap().len(), 15);
    assert_eq!(ours["id"].as_str().unwrap().len(), 36);
    assert!(testbed::ids::is_uuid_v7(ours["id"].as_str().unwrap()));
    // The spec's NodePool schema (tenancy is emitted by the server, not in spec v1.0.25).
    let doc =
        schema::yaml_to_json(&fixture("hyperfleet-api-spec/schemas/core/openapi.yaml")).unwrap();
    let nodepool_schema =
        json!({"type": "object", "properties": {"np": api::schema(&doc, "NodePool")}});
    for object in [ours.clone(), deleted(ours.clone()), example.clone()] {
        let errors: Vec<String> = api::schema_errors(&nodepool_schema, &json!({"np": object}))
            .into_iter()
            .filter(|e| !e.contains(".np.tenancy"))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    let mut long = ours.clone();
    long["name"] = json!(format!("{}x", testbed::ids::LONGEST_NODEPOOL_NAME));
    assert!(
        !api::schema_errors(&nodepool_schema, &json!({"np": long})).is_empty(),
        "a 16-character name must break the schema"
    );
    // The event carries what the framework decodes (§1 step 0): the NodePool's id, and its
    // cluster's in owner_references, which has the example's shape (a Cluster, a 36-character id).
    let event = nodepool_event(3);
    assert_eq!(
        keys(&event),
        ["generation", "href", "id", "kind", "owner_references"]
    );
    assert_eq!(event["kind"], "NodePool");
    assert_eq!(event["id"], ours["id"]);
    assert_eq!(event["href"], ours["href"]);
    assert_eq!(event["owner_references"], ours["owner_references"]);
    assert_eq!(example["owner_references"]["kind"], "Cluster");
    assert_eq!(
        example["owner_references"]["id"].as_str().unwrap().len(),
        CLUSTER_ID.len()
    );
}

/// The API spec has the nested status path our NodePool config PUTs to, with the status body
/// schema; and the control plane's path is a different one.
#[test]
fn the_nodepool_status_put_is_the_apis_nested_path() {
    if FIXTURES.is_none() {
        return;
    }
    let doc =
        schema::yaml_to_json(&fixture("hyperfleet-api-spec/schemas/core/openapi.yaml")).unwrap();
    let template = "/api/hyperfleet/v1/clusters/{cluster_id}/nodepools/{nodepool_id}/statuses";
    let put = &doc["paths"][template]["put"];
    assert_eq!(
        put["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/AdapterStatusCreateRequest"
    );
    let matches = |url: &str| {
        let pattern = regex::Regex::new(&format!(
            "^{}$",
            regex::escape(template)
                .replace(r"\{cluster_id\}", "[0-9a-f-]{36}")
                .replace(r"\{nodepool_id\}", "[0-9a-f-]{36}")
        ))
        .unwrap();
        pattern.is_match(url)
    };
    assert!(matches(&nodepool_kind().status_url));
    assert!(!matches(&controlplane().status_url));
    // And the config really sends there (one success outcome).
    let config = load(
        NODEPOOL_TASK_CONFIG,
        &deploy_env(&schema::decode_task_config(NODEPOOL_TASK_CONFIG).unwrap()),
        &BTreeMap::new(),
    )
    .unwrap();
    let kind = nodepool_kind();
    let object = nodepool(3, &|_| {});
    let api = |_: &str, url: &str| -> Result<Value, String> {
        (url == kind.object_url)
            .then(|| object.clone())
            .ok_or(format!("unexpected GET {url}"))
    };
    let transport = |_: &str, manifest: &Value| -> Result<Option<Value>, String> {
        Ok(Some(testbed::hyperfleet::outcomes::created(
            manifest,
            now(),
        )))
    };
    let world = World {
        adapter_name: "hypershift".into(),
        adapter_version: "0.3.1".into(),
        base_url: true,
        env: deploy_env(&config),
        event: nodepool_event(3),
        api: &api,
        transport: &transport,
        now: now(),
        evaluated: Default::default(),
    };
    let run = world.run(&config);
    assert_eq!(run.sent.len(), 1, "{run:?}");
    assert_eq!(run.sent[0].method, "PUT");
    assert!(matches(&run.sent[0].url), "{}", run.sent[0].url);
}

#[test]
fn our_nodepool_adapter_config_loads_in_v0_3_1_with_its_own_subscription() {
    let config = schema::load_adapter_config(NODEPOOL_ADAPTER_CONFIG, FRAMEWORK)
        .unwrap_or_else(|e| panic!("{e}"));
    let controlplane = schema::load_adapter_config(ADAPTER_CONFIG, FRAMEWORK).unwrap();
    assert_eq!(config.adapter.name, "hypershift");
    assert_eq!(config.adapter.version.as_deref(), Some("0.3.1"));
    assert!(config.clients.maestro.is_none());
    assert!(config.clients.kubernetes.is_some());
    assert!(config.clients.hyperfleet_api.is_some());
    let subscription = |c: &schema::AdapterConfig| {
        c.clients
            .broker
            .as_ref()
            .and_then(|b| b.subscription_id.clone())
    };
    assert_eq!(
        subscription(&config).as_deref(),
        Some("hypershift-nodepool")
    );
    assert_ne!(subscription(&config), subscription(&controlplane));
    assert!(matches!(
        schema::load_adapter_config(NODEPOOL_ADAPTER_CONFIG, "v0.4.0"),
        Err(LoadError::Version(_))
    ));
}

#[test]
fn our_nodepool_task_config_conforms_in_every_outcome() {
    let failures = nodepool_conformance(NODEPOOL_TASK_CONFIG);
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn an_unset_required_deployment_variable_stops_the_nodepool_adapter_at_start_up() {
    let config = schema::decode_task_config(NODEPOOL_TASK_CONFIG).unwrap();
    let env = deploy_env(&config);
    let mut checked = 0;
    for p in config.params.iter().filter(|p| p.required) {
        if let Some(schema::Source::Path(path)) = &p.source
            && let Some(var) = path.strip_prefix("env.")
        {
            let mut without = env.clone();
            without.remove(var);
            match config.structural(&without) {
                Err(LoadError::Structural(e)) => assert!(
                    e.ends_with(&format!("required environment variable {var} is not set")),
                    "{e}"
                ),
                other => panic!("{var} unset: {other:?}"),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 5);
}

/// The NodePool config with `from` replaced by `to` (which must occur).
fn np_mutated(from: &str, to: &str) -> String {
    assert!(
        NODEPOOL_TASK_CONFIG.contains(from),
        "the NodePool config no longer contains {from:?}; update the defect"
    );
    NODEPOOL_TASK_CONFIG.replacen(from, to, 1)
}

#[track_caller]
fn assert_np_caught(text: &str, needle: &str) {
    let failures = nodepool_conformance(text);
    assert!(
        failures.iter().any(|f| f.contains(needle)),
        "the defect was not caught as {needle:?}; failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn np_defect_a_templated_observed_generation_is_refused_by_the_api() {
    assert_np_caught(
        &np_mutated(
            "        observed_generation:\n          expression: \"generation\"",
            "        observed_generation: \"{{ .generation }}\"",
        ),
        "field 'observed_generation' must be a number",
    );
}

#[test]
fn np_defect_a_cel_built_list_of_maps_is_a_failure() {
    assert_np_caught(
        &np_mutated(
            "        metadata:\n          job_name:\n            expression:",
            "        extra:\n          expression: 'resources.?pulseJob.?status.?conditions.orValue([]).filter(c, c.type == \"Applied\")'\n        metadata:\n          job_name:\n            expression:",
        ),
        "serialises as [{\"Adapter\":{}}",
    );
}

#[test]
fn np_defect_a_missing_health_is_refused_by_the_api() {
    let start = NODEPOOL_TASK_CONFIG
        .find("          - type: \"Health\"\n            status: \"False\"")
        .unwrap();
    let end = start
        + NODEPOOL_TASK_CONFIG[start..]
            .find("        metadata:\n")
            .unwrap();
    let text = format!(
        "{}{}",
        &NODEPOOL_TASK_CONFIG[..start],
        &NODEPOOL_TASK_CONFIG[end..]
    );
    assert_np_caught(&text, "missing mandatory condition 'Health'");
}

#[test]
fn np_defect_the_cluster_id_taken_from_event_id_is_caught() {
    // The GET then asks for the NodePool under a cluster that does not exist: the API answers
    // 404, the required param fails, and nothing is ever reported.
    assert_np_caught(
        &np_mutated(
            "    source: \"event.owner_references.id\"",
            "    source: \"event.id\"",
        ),
        &format!(
            "the event stopped, nothing reported: required param nodepool failed: unexpected GET /api/hyperfleet/v1/clusters/{NODEPOOL_ID}/nodepools/{NODEPOOL_ID}"
        ),
    );
}

#[test]
fn np_defect_a_put_to_the_clusters_statuses_is_caught() {
    assert_np_caught(
        &np_mutated(
            "        url: \"/clusters/{{ .clusterId }}/nodepools/{{ .nodepoolId }}/statuses\"\n        body: \"{{ .statusPayload }}\"",
            "        url: \"/clusters/{{ .clusterId }}/statuses\"\n        body: \"{{ .statusPayload }}\"",
        ),
        &format!(
            "success: PUT /api/hyperfleet/v1/clusters/{CLUSTER_ID}/statuses instead of /api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{NODEPOOL_ID}/statuses"
        ),
    );
}

#[test]
fn np_defect_a_missing_when_is_caught() {
    // statusPayload and reportStatus without their `when`: a PUT while validation has not caught up.
    let when = "      when:\n        expression: '!adapter.?resourcesSkipped.orValue(false) && adapter.?executionStatus.orValue(\"\") == \"success\"'\n";
    assert_eq!(NODEPOOL_TASK_CONFIG.matches(when).count(), 2);
    let text = NODEPOOL_TASK_CONFIG.replace(when, "");
    assert_np_caught(
        &text,
        "preconditions not met: ValidationSuccessful False: PUT",
    );
    assert_np_caught(&text, "was sent although the preconditions are not met");
}

/// The guarded number expression of `ready_nodes`.
const READY_NODES: &str = r#"              resources.?pulseJob.?metadata.?annotations[?"data.hyperfleet.io/ready_nodes"].orValue("null") != "null"
                ? optional.of(int(resources.pulseJob.metadata.annotations["data.hyperfleet.io/ready_nodes"]))
                : optional.none()"#;

#[test]
fn np_defect_a_cel_null_for_a_missing_number_is_caught() {
    // `null` instead of optional.none(): the framework would send 0 ready nodes for a Job that
    // has not reported.
    let text = np_mutated(READY_NODES, &READY_NODES.replace("optional.none()", "null"));
    assert_np_caught(&text, "just created (no status): framework WARN");
    assert_np_caught(&text, "structpb.NullValue");
    assert_np_caught(&text, "\"ready_nodes\":0");
}

#[test]
fn np_defect_an_unguarded_int_is_a_cel_error_on_every_pulse_without_data() {
    assert_np_caught(
        &np_mutated(
            READY_NODES,
            r#"              int(resources.?pulseJob.?metadata.?annotations[?"data.hyperfleet.io/ready_nodes"].orValue("null"))"#,
        ),
        "just created (no status): framework WARN: value definition",
    );
}

#[test]
fn np_defect_a_missing_data_key_is_caught() {
    let start = NODEPOOL_TASK_CONFIG
        .find("          unready_nodes:\n")
        .unwrap();
    let end = start
        + NODEPOOL_TASK_CONFIG[start..]
            .find("        metadata:\n")
            .unwrap();
    let text = format!(
        "{}{}",
        &NODEPOOL_TASK_CONFIG[..start],
        &NODEPOOL_TASK_CONFIG[end..]
    );
    assert_np_caught(&text, "generation 3, success: data is");
}

#[test]
fn np_defect_node_versions_read_as_a_number_is_caught() {
    assert_np_caught(
        &np_mutated(
            r#"            expression: 'resources.?pulseJob.?metadata.?annotations[?"data.hyperfleet.io/node_versions"].orValue("")'"#,
            r#"            expression: 'resources.?pulseJob.?metadata.?annotations[?"data.hyperfleet.io/node_versions"].orValue("[]").size()'"#,
        ),
        "success: data is",
    );
}

#[test]
fn np_defect_finalized_true_from_a_crash_is_caught() {
    // A crash while deleting leaves no Finalized on the Job; reading that as done would let the
    // API hard-delete a NodePool whose nodes may still exist.
    let text = np_mutated(
        FINALIZED_STATUS,
        &FINALIZED_STATUS.replace(r#": "False""#, r#": "True""#),
    );
    assert_np_caught(
        &text,
        "deleting, reporter-detected failure AdapterOOMKilled: condition Finalized",
    );
    assert_np_caught(
        &text,
        "deleting, Job failed without a report: condition Finalized",
    );
}

#[test]
fn np_defect_a_precondition_on_a_cluster_adapter_is_caught() {
    // DnsSuccessful is a cluster's condition: a NodePool never has it, so nothing would run.
    assert_np_caught(
        &np_mutated(
            "c.type == \"ValidationSuccessful\"",
            "c.type == \"DnsSuccessful\"",
        ),
        "generation 3, success: no Job was created, the preconditions blocked it",
    );
}

#[test]
fn np_defect_a_deleting_nodepool_held_by_the_precondition_is_caught() {
    assert_np_caught(
        &np_mutated(
            "      isDeleting || nodepool.?status",
            "      nodepool.?status",
        ),
        "deleting, Finalized=True CleanupConfirmed (work gone): no Job was created, the preconditions blocked it",
    );
}

#[test]
fn np_defect_the_works_generation_in_the_finalized_report_is_caught() {
    assert_np_caught(
        &np_mutated(
            "            isDeleting\n              ? int(resources.?pulseJob",
            "            false\n              ? int(resources.?pulseJob",
        ),
        "generation 3, deleting, Finalized=True CleanupConfirmed (work gone, reported at the old generation): observed_generation is 2, want the integer 3",
    );
}

#[test]
fn np_defect_a_name_with_both_ids_is_refused_by_the_api_server() {
    let both = NODEPOOL_TASK_CONFIG.replace(
        "hs-np-{{ .nodepoolId }}-g{{ .generation }}",
        "hs-np-{{ .clusterId }}-{{ .nodepoolId }}-g{{ .generation }}",
    );
    assert_eq!(
        both.matches("hs-np-{{ .clusterId }}-{{ .nodepoolId }}")
            .count(),
        3,
        "the name, the discovery and the errorPayload's job_name"
    );
    assert_np_caught(&both, "must be no more than 63 bytes");
    assert_np_caught(
        &both,
        &format!("is named \"hs-np-{CLUSTER_ID}-{NODEPOOL_ID}-g1\""),
    );
}

// The NodePool dry-run inputs of docs/deploying.md (manifests/hyperfleet/nodepool/dryrun/).

fn np_dryrun(responses: &str, discovery: Option<&str>) -> Run {
    dryrun_in(NODEPOOL_DRYRUN, NODEPOOL_TASK_CONFIG, responses, discovery)
}

fn np_dryrun_url(run: &Run) -> &str {
    &run.sent[0].url
}

#[test]
fn the_documented_nodepool_dry_run_reports_the_successful_pulse() {
    let run = np_dryrun("api-responses.json", Some("discovery.json"));
    let body = dryrun_body(&run);
    assert_eq!(
        np_dryrun_url(&run),
        format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{NODEPOOL_ID}/statuses")
    );
    let statuses: Vec<_> = body["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].clone(), c["status"].clone(), c["reason"].clone()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (
                json!("Applied"),
                json!("True"),
                json!("ManifestWorkApplied")
            ),
            (json!("Available"), json!("True"), json!("NodePoolReady")),
            (json!("Health"), json!("True"), json!("NoIssues")),
            (json!("Finalized"), json!("False"), json!(""))
        ]
    );
    assert_eq!(body["adapter"], "hypershift");
    assert_eq!(body["observed_generation"], json!(3));
    assert_eq!(
        body["data"],
        json!({
            "desired_replicas": 3, "current_replicas": 3, "autoscaling_min": null, "autoscaling_max": null,
            "version": "4.19.3",
            "node_versions": r#"[{"kubelet_version":"v1.32.5","ocp_version":"4.19.3","ready_nodes":3,"unready_nodes":0}]"#,
            "ready_nodes": 3, "unready_nodes": 0, "management_cluster": "mgmt-eu-west2-01",
        })
    );
    assert_eq!(
        run.manifests["pulseJob"]["metadata"]["name"],
        format!("hs-np-{NODEPOOL_ID}-g3")
    );
    assert_eq!(run.params["clusterId"], CLUSTER_ID);
    assert_eq!(run.params["nodepoolId"], NODEPOOL_ID);
}

#[test]
fn the_documented_nodepool_dry_run_without_discovery_reports_job_running() {
    let body = dryrun_body(&np_dryrun("api-responses.json", None));
    for c in &body["conditions"].as_array().unwrap()[..3] {
        assert_eq!(
            (&c["status"], &c["reason"]),
            (&json!("Unknown"), &json!("JobRunning")),
            "{c}"
        );
    }
    assert_eq!(body["conditions"][3]["type"], "Finalized");
    assert_eq!(body["conditions"][3]["reason"], "");
    assert_eq!(body["data"], nodepool_empty_body_data());
}

#[test]
fn the_documented_deleting_nodepool_dry_run_creates_the_bumped_generations_job() {
    let run = np_dryrun("api-responses-deleting.json", None);
    assert_eq!(run.adapter["resourcesSkipped"], false, "{:?}", run.adapter);
    assert_eq!(
        run.manifests["pulseJob"]["metadata"]["name"],
        format!("hs-np-{NODEPOOL_ID}-g4")
    );
    let body = dryrun_body_at(&run, 4);
    assert_eq!(body["observed_generation"], json!(4));
    let finalized = &body["conditions"][3];
    assert_eq!(
        (
            &finalized["type"],
            &finalized["status"],
            &finalized["reason"]
        ),
        (&json!("Finalized"), &json!("False"), &json!("JobRunning"))
    );
}

#[test]
fn the_documented_waiting_nodepool_dry_run_creates_no_job_and_sends_nothing() {
    let run = np_dryrun("api-responses-waiting.json", Some("discovery.json"));
    assert_eq!(run.stopped, None);
    assert!(run.manifests.is_empty(), "{:?}", run.manifests.keys());
    assert!(run.sent.is_empty(), "{:?}", run.sent);
    assert_eq!(run.adapter["resourcesSkipped"], true);
    assert_eq!(
        run.adapter["skipReason"],
        "precondition 'validationSucceeded' not met"
    );
}
