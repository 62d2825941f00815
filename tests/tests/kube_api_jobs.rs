//! Job `/status` writes through kube-rs and raw HTTP, pinned to the measured real-server behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use testbed::kube_api::ApiServer;

async fn jobs(server: &ApiServer, ns: &str) -> Api<Job> {
    Api::namespaced(server.client().await, ns)
}

async fn smp(api: &Api<Job>, name: &str, conditions: Value) -> Value {
    let patch = json!({"status": {"conditions": conditions}});
    let job = api
        .patch_status(name, &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .unwrap();
    serde_json::to_value(job).unwrap()
}

fn api_code(error: kube::Error) -> u16 {
    match error {
        kube::Error::Api(status) => status.code,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn smp_prepends_new_types_and_updates_existing_ones_in_place() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    smp(&api, "a", json!([applied()])).await;
    let job = smp(&api, "a", json!([available()])).await;
    assert_eq!(condition_types(&job), ["Available", "Applied"]);
    let job = smp(&api, "a", json!([{"type": "Applied", "status": "False"}])).await;
    assert_eq!(condition_types(&job), ["Available", "Applied"]);
    let stored = &job["status"]["conditions"][1];
    assert_eq!(stored["status"], "False");
    assert_eq!(
        stored["reason"], "ManifestWorkCreated",
        "fields not in the patch element are kept"
    );
    assert_eq!(stored["lastTransitionTime"], "2026-11-25T10:00:00Z");
}

#[tokio::test]
async fn smp_patch_delete_removes_a_condition_by_type() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    smp(&api, "a", json!([applied(), available()])).await;
    let job = smp(
        &api,
        "a",
        json!([{"type": "Available", "$patch": "delete"}]),
    )
    .await;
    assert_eq!(condition_types(&job), ["Applied"]);
}

#[tokio::test]
async fn smp_set_element_order_decides_the_final_order() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    smp(&api, "a", json!([applied(), available(), health()])).await;
    let patch = json!({"status": {
        "$setElementOrder/conditions": [{"type": "Health"}, {"type": "Available"}, {"type": "Applied"}],
        "conditions": [{"type": "Health", "status": "False"}]}});
    let job = api
        .patch_status("a", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .unwrap();
    let job = serde_json::to_value(job).unwrap();
    assert_eq!(condition_types(&job), ["Health", "Available", "Applied"]);
    assert_eq!(job["status"]["conditions"][0]["status"], "False");
}

#[tokio::test]
async fn merge_patch_replaces_the_whole_condition_list() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    smp(&api, "a", json!([applied(), available()])).await;
    let patch = json!({"status": {"conditions": [health()]}});
    let job = api
        .patch_status("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(
        condition_types(&serde_json::to_value(job).unwrap()),
        ["Health"]
    );
}

#[tokio::test]
async fn json_patch_append_and_failing_test_give_200_then_generic_422() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let path = status_path("exp-a", "a");
    let add =
        json!([{"op": "add", "path": "/status/conditions/-", "value": applied()}]).to_string();
    assert_eq!(
        send(&server, "PATCH", &path, Some(JSON_PATCH), &add)
            .await
            .status,
        422,
        "no list to append to yet"
    );
    let whole =
        json!([{"op": "add", "path": "/status/conditions", "value": [applied()]}]).to_string();
    assert_eq!(
        send(&server, "PATCH", &path, Some(JSON_PATCH), &whole)
            .await
            .status,
        200
    );
    let failing = json!([{"op": "test", "path": "/status/conditions/0/type", "value": "Health"},
                         {"op": "remove", "path": "/status/conditions/0"}])
    .to_string();
    let reply = send(&server, "PATCH", &path, Some(JSON_PATCH), &failing).await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}"#
    );
    assert_eq!(
        condition_types(&server.job("exp-a", "a").unwrap()),
        ["Applied"]
    );
}

#[tokio::test]
async fn stale_resource_version_is_a_409_with_the_real_body() {
    let server = ApiServer::start().await;
    let seeded = seed_job(&server, "exp-d", "d");
    let stale = seeded["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = status_path("exp-d", "d");
    let bump = json!({"status": {"conditions": [applied()]}}).to_string();
    assert_eq!(
        send(&server, "PATCH", &path, Some(SMP), &bump).await.status,
        200
    );
    let body =
        json!({"metadata": {"resourceVersion": stale}, "status": {"conditions": [health()]}})
            .to_string();
    for content_type in [SMP, MERGE] {
        let reply = send(&server, "PATCH", &path, Some(content_type), &body).await;
        assert_eq!(reply.status, 409);
        assert_eq!(
            reply.body,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on jobs.batch \"d\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"d","group":"batch","kind":"jobs"},"code":409}"#
        );
    }
    let current = server.job("exp-d", "d").unwrap()["metadata"]["resourceVersion"].clone();
    let body =
        json!({"metadata": {"resourceVersion": current}, "status": {"conditions": [health()]}})
            .to_string();
    assert_eq!(
        send(&server, "PATCH", &path, Some(SMP), &body).await.status,
        200
    );
}

#[tokio::test]
async fn non_numeric_resource_version_is_a_bare_500() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-d", "d");
    let body = json!({"metadata": {"resourceVersion": "abc"}, "status": {}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-d", "d"),
        Some(SMP),
        &body,
    )
    .await;
    assert_eq!(reply.status, 500);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"strconv.ParseUint: parsing \"abc\": invalid syntax","code":500}"#
    );
}

#[tokio::test]
async fn uid_mismatch_is_a_422_naming_the_immutable_field() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-d", "d");
    let body = json!({"metadata": {"uid": "00000000-0000-0000-0000-000000000000"}, "status": {}})
        .to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-d", "d"),
        Some(SMP),
        &body,
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.json()["message"],
        "Job.batch \"d\" is invalid: metadata.uid: Invalid value: \"00000000-0000-0000-0000-000000000000\": field is immutable"
    );
    assert_eq!(
        reply.json()["details"]["causes"].as_array().unwrap().len(),
        2
    );
}

#[tokio::test]
async fn smp_element_without_type_is_a_500_in_go_map_wording() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-b", "b");
    let body = json!({"status": {"conditions": [{"status": "True", "reason": "R"}]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-b", "b"),
        Some(SMP),
        &body,
    )
    .await;
    assert_eq!(reply.status, 500);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"map: map[reason:R status:True] does not contain declared merge key: type","code":500}"#
    );
}

#[tokio::test]
async fn merge_patch_element_without_type_is_stored_with_empty_type() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-b", "b");
    let body = json!({"status": {"conditions": [{"status": "True", "reason": "R"}]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-b", "b"),
        Some(MERGE),
        &body,
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json()["status"]["conditions"][0],
        json!({"type": "", "status": "True", "lastProbeTime": null, "lastTransitionTime": null, "reason": "R"})
    );
}

#[tokio::test]
async fn complete_true_by_hand_is_a_422_with_three_causes() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-b", "b");
    let body =
        json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-b", "b"),
        Some(SMP),
        &body,
    )
    .await;
    assert_eq!(reply.status, 422);
    let json = reply.json();
    assert_eq!(
        json["message"],
        "Job.batch \"b\" is invalid: [status.completionTime: Required value: completionTime is required for Complete jobs, status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, status.active: Invalid value: 1: active>0 is invalid for finished job]"
    );
    assert_eq!(json["reason"], "Invalid");
    assert_eq!(
        (
            &json["details"]["name"],
            &json["details"]["group"],
            &json["details"]["kind"]
        ),
        (&json!("b"), &json!("batch"), &json!("Job"))
    );
    assert_eq!(json["details"]["causes"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn failed_true_without_failure_target_is_a_422() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-b", "b");
    let body =
        json!({"status": {"conditions": [{"type": "Failed", "status": "True"}]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-b", "b"),
        Some(SMP),
        &body,
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.json()["message"],
        "Job.batch \"b\" is invalid: [status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition, status.active: Invalid value: 1: active>0 is invalid for finished job]"
    );
}

#[tokio::test]
async fn a_complete_job_rejects_a_merge_patch_that_drops_its_terminal_conditions() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-c", "c");
    let finish = json!({"status": {"active": 0, "succeeded": 1, "completionTime": "2026-11-25T23:15:42Z", "conditions": [
        {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
        {"type": "Complete", "status": "True", "reason": "CompletionsReached"}]}})
    .to_string();
    assert_eq!(
        send(
            &server,
            "PATCH",
            &status_path("exp-c", "c"),
            Some(MERGE),
            &finish
        )
        .await
        .status,
        200
    );
    let custom = json!({"status": {"conditions": [applied(), available(), health()]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-c", "c"),
        Some(MERGE),
        &custom,
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Job.batch \"c\" is invalid: [status.completionTime: Invalid value: \"2026-11-25T23:15:42Z\": cannot set completionTime when there is no Complete=True condition, status.conditions: Invalid value: cannot disable the terminal Complete=True condition, status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition]","reason":"Invalid","details":{"name":"c","group":"batch","kind":"Job","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"2026-11-25T23:15:42Z\": cannot set completionTime when there is no Complete=True condition","field":"status.completionTime"},{"reason":"FieldValueInvalid","message":"Invalid value: cannot disable the terminal Complete=True condition","field":"status.conditions"},{"reason":"FieldValueInvalid","message":"Invalid value: cannot disable the SuccessCriteriaMet=True condition","field":"status.conditions"}]},"code":422}"#
    );
    let job = smp(&jobs(&server, "exp-c").await, "c", json!([health()])).await;
    assert_eq!(
        condition_types(&job),
        ["Health", "SuccessCriteriaMet", "Complete"],
        "SMP still works after completion"
    );
}

#[tokio::test]
async fn status_patch_applies_labels_and_annotations_but_drops_spec() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    server.create_job("exp-a", {
        let mut job = server.job("exp-a", "a").unwrap();
        job["metadata"]["annotations"] = json!({"old": "1", "keep": "2"});
        job
    });
    let api = jobs(&server, "exp-a").await;
    let patch = json!({
        "metadata": {"labels": {"x": "y"}, "annotations": {"hyperfleet.io/report-data": "{\"a\":1}", "old": null}},
        "spec": {"parallelism": 5},
        "status": {"conditions": [applied()]}});
    api.patch_status("a", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .unwrap();
    let job = server.job("exp-a", "a").unwrap();
    assert_eq!(job["metadata"]["labels"]["x"], "y");
    assert_eq!(
        job["metadata"]["annotations"],
        json!({"hyperfleet.io/report-data": "{\"a\":1}", "keep": "2"})
    );
    assert_eq!(job["spec"]["parallelism"], 1);
    assert_eq!(condition_types(&job), ["Applied"]);
}

#[tokio::test]
async fn a_deleted_job_is_a_404_with_the_real_body() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-f", "f");
    server.delete_job("exp-f", "f");
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-f", "f"),
        Some(SMP),
        r#"{"status":{}}"#,
    )
    .await;
    assert_eq!(reply.status, 404);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"jobs.batch \"f\" not found","reason":"NotFound","details":{"name":"f","group":"batch","kind":"jobs"},"code":404}"#
    );
    let error = jobs(&server, "exp-f")
        .await
        .get_status("f")
        .await
        .unwrap_err();
    assert_eq!(api_code(error), 404);
}

#[tokio::test]
async fn plain_json_content_type_is_a_415() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-a", "a"),
        Some("application/json"),
        r#"{"status":{}}"#,
    )
    .await;
    assert_eq!(reply.status, 415);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}"#
    );
}

#[tokio::test]
async fn condition_times_are_stored_utc_whole_seconds_and_absent_ones_as_null() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    let job = smp(&api, "a", json!([
        {"type": "Applied", "status": "True", "lastTransitionTime": "2026-11-25T10:00:00.123456+02:00"},
        {"type": "Health", "status": "Maybe"}])).await;
    let conditions = &job["status"]["conditions"];
    assert_eq!(conditions[0]["lastTransitionTime"], "2026-11-25T08:00:00Z");
    let raw = server.job("exp-a", "a").unwrap();
    let health = raw["status"]["conditions"][1].as_object().unwrap();
    assert_eq!(
        health.get("lastProbeTime"),
        Some(&Value::Null),
        "lastProbeTime is echoed as null"
    );
    assert_eq!(health.get("lastTransitionTime"), Some(&Value::Null));
    assert_eq!(health["status"], "Maybe", "status values are not validated");
}

#[tokio::test]
async fn an_unparsable_condition_time_is_a_422() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let body = json!({"status": {"conditions": [{"type": "Applied", "status": "True", "lastTransitionTime": "yesterday"}]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-a", "a"),
        Some(MERGE),
        &body,
    )
    .await;
    assert_eq!(reply.status, 422);
    let message = reply.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(" \"\" is invalid: patch: Invalid value: \""),
        "{message}"
    );
    assert!(message.ends_with(r#": parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#), "{message}");
}

#[tokio::test]
async fn a_body_over_3_mib_is_a_413() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let body = format!(
        r#"{{"status":{{"x":"{}"}}}}"#,
        "a".repeat(3 * 1024 * 1024 + 512 * 1024)
    );
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-a", "a"),
        Some(MERGE),
        &body,
    )
    .await;
    assert_eq!(reply.status, 413);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}"#
    );
}

#[tokio::test]
async fn every_write_bumps_the_resource_version_and_a_no_op_does_not() {
    let server = ApiServer::start().await;
    let seeded = seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    let first = smp(&api, "a", json!([applied()])).await;
    let rv = |job: &Value| {
        job["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(rv(&first) > rv(&seeded));
    let again = smp(&api, "a", json!([applied()])).await;
    assert_eq!(rv(&again), rv(&first));
}

#[tokio::test]
async fn put_status_with_a_stale_resource_version_is_a_409_and_without_one_is_unconditional() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-d", "d");
    let api = jobs(&server, "exp-d").await;
    let read = api.get_status("d").await.unwrap();
    smp(&api, "d", json!([applied()])).await;
    let error = api
        .replace_status("d", &Default::default(), &read)
        .await
        .unwrap_err();
    assert_eq!(api_code(error), 409);
    let mut unconditional = read.clone();
    unconditional.metadata.resource_version = None;
    let written = api
        .replace_status("d", &Default::default(), &unconditional)
        .await
        .unwrap();
    assert!(
        written.status.unwrap().conditions.is_none(),
        "the PUT overwrote the condition written since the GET"
    );
}

#[tokio::test]
async fn server_side_apply_is_accepted_and_replaces_the_atomic_list() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let api = jobs(&server, "exp-a").await;
    smp(&api, "a", json!([applied(), available()])).await;
    let apply = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "a", "namespace": "exp-a"},
        "status": {"conditions": [health()]}});
    let job = api
        .patch_status(
            "a",
            &PatchParams::apply("rust-agent").force(),
            &Patch::Apply(&apply),
        )
        .await
        .unwrap();
    assert_eq!(
        condition_types(&serde_json::to_value(job).unwrap()),
        ["Health"]
    );
}

#[tokio::test]
async fn seeded_conditions_are_stored_as_a_write_would_store_them() {
    let server = ApiServer::start().await;
    let job = server.create_job(
        "exp-a",
        json!({"metadata": {"name": "a"}, "status": {"conditions": [
            {"type": "Applied", "status": "True", "lastTransitionTime": "2026-11-25T10:00:00.5+02:00", "observedGeneration": 3}]}}),
    );
    assert_eq!(
        job["status"]["conditions"][0],
        json!({"type": "Applied", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-25T08:00:00Z"})
    );
    assert_eq!(job["status"]["active"], 1);
    assert!(job["status"]["startTime"].is_string());
}

#[tokio::test]
async fn unknown_condition_fields_are_dropped_with_a_warning_or_rejected_when_strict() {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-a", "a");
    let body = json!({"status": {"conditions": [{"observedGeneration": 3, "status": "True", "type": "Applied"}]}}).to_string();
    let reply = send(
        &server,
        "PATCH",
        &status_path("exp-a", "a"),
        Some(MERGE),
        &body,
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("warning"),
        Some(r#"299 - "unknown field \"status.conditions[0].observedGeneration\"""#)
    );
    assert!(
        reply.json()["status"]["conditions"][0]
            .get("observedGeneration")
            .is_none()
    );
    let strict = format!("{}?fieldValidation=Strict", status_path("exp-a", "a"));
    let reply = send(&server, "PATCH", &strict, Some(SMP), &body).await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":" \"\" is invalid: patch: Invalid value: \"map[status:map[conditions:[map[observedGeneration:3 status:True type:Applied]]]]\": strict decoding error: unknown field \"status.conditions[0].observedGeneration\"","reason":"Invalid","details":{"causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"map[status:map[conditions:[map[observedGeneration:3 status:True type:Applied]]]]\": strict decoding error: unknown field \"status.conditions[0].observedGeneration\"","field":"patch"}]},"code":422}"#
    );
}

// ---- create: the Job name becomes a label value ----------------------------------------------

fn job_body(name: &str) -> String {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
    .to_string()
}

async fn create_job(server: &ApiServer, name: &str) -> Reply {
    send(
        server,
        "POST",
        "/apis/batch/v1/namespaces/hyperfleet-system/jobs",
        Some("application/json"),
        &job_body(name),
    )
    .await
}

/// The 422 a v1.36 server answers for a Job name over 63 bytes: the name fails both job-name
/// template labels with the same message (listed once, as Go's aggregate does; both causes kept).
fn too_long_body(name: &str) -> String {
    let cause = format!(
        r#"{{"reason":"FieldValueInvalid","message":"Invalid value: \"{name}\": must be no more than 63 bytes","field":"spec.template.labels"}}"#
    );
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"Job.batch \"{name}\" is invalid: spec.template.labels: Invalid value: \"{name}\": must be no more than 63 bytes","reason":"Invalid","details":{{"name":"{name}","group":"batch","kind":"Job","causes":[{cause},{cause}]}},"code":422}}"#
    )
}

#[tokio::test]
async fn a_job_name_of_64_bytes_is_a_422_and_nothing_is_stored() {
    let server = ApiServer::start().await;
    let name = format!("hs-cp-{}-g{}", testbed::ids::CLUSTER_ID, "1".repeat(20));
    assert_eq!(name.len(), 64);
    let reply = create_job(&server, &name).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.body, too_long_body(&name));
    assert!(server.job("hyperfleet-system", &name).is_none());
}

#[tokio::test]
async fn a_job_name_of_63_bytes_is_created_with_its_labels_and_selector() {
    let server = ApiServer::start().await;
    let name = format!("hs-cp-{}-g{}", testbed::ids::CLUSTER_ID, "1".repeat(19));
    assert_eq!(name.len(), 63);
    let reply = create_job(&server, &name).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let job = reply.json();
    let uid = job["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"],
        json!({"batch.kubernetes.io/job-name": name, "job-name": name,
               "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid})
    );
    assert_eq!(
        job["spec"]["selector"]["matchLabels"],
        json!({"batch.kubernetes.io/controller-uid": uid})
    );
    assert!(server.job("hyperfleet-system", &name).is_some());
}

#[tokio::test]
async fn the_pulse_job_names_are_created_and_the_old_pattern_is_refused() {
    use testbed::pulse_job::{MAX_GENERATION, controlplane_job_name, nodes_job_name};
    let server = ApiServer::start().await;
    let id = testbed::ids::CLUSTER_ID;
    for name in [
        controlplane_job_name(id, MAX_GENERATION),
        nodes_job_name(id, MAX_GENERATION),
    ] {
        let reply = create_job(&server, &name).await;
        assert_eq!(reply.status, 201, "{name}: {}", reply.body);
    }
    let old = format!("hypershift-controlplane-{id}-gen3");
    assert_eq!(old.len(), 65);
    let reply = create_job(&server, &old).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.body, too_long_body(&old));
}

#[tokio::test]
async fn a_label_value_over_63_bytes_in_the_job_metadata_is_a_422() {
    let server = ApiServer::start().await;
    let long = "x".repeat(64);
    let body = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "ok", "labels": {"hyperfleet.io/cluster-id": long}},
        "spec": {"template": {"spec": {"containers": []}}}});
    let reply = send(
        &server,
        "POST",
        "/apis/batch/v1/namespaces/hyperfleet-system/jobs",
        Some("application/json"),
        &body.to_string(),
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.json()["message"],
        format!(
            "Job.batch \"ok\" is invalid: metadata.labels: Invalid value: \"{long}\": must be no more than 63 bytes"
        )
    );
    assert!(server.job("hyperfleet-system", "ok").is_none());
}

#[test]
#[should_panic(expected = "must be no more than 63 bytes")]
fn seeding_a_job_a_real_server_would_refuse_panics() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(ApiServer::start());
    let id = testbed::ids::CLUSTER_ID;
    seed_job(
        &server,
        "hyperfleet",
        &format!("hypershift-controlplane-{id}-gen3"),
    );
}
