//! The refused requests of the HyperFleet differential: bodies and requests that break one rule
//! each, with what they break (the expected status in the label is what the real API answered
//! when the step was written; the comparison, not the label, is what counts).

use serde_json::{Value, json};

use super::{Body, IMAGE_1, report, spec};

/// Status report bodies that break one acceptance rule each (§7.4), and a few the rules do not
/// name (the real API's decoder decides).
pub fn reports(time: &str, far_future: &str, long_ago: &str) -> Vec<(&'static str, Body)> {
    let ok = |f: &dyn Fn(&mut Value)| {
        let Body::Json(mut v) = report("hypershift", json!(1), time, "True", false) else {
            unreachable!()
        };
        f(&mut v);
        Body::Json(v)
    };
    vec![
        ("empty body (400)", Body::Raw("")),
        ("a JSON array (400)", Body::Raw("[]")),
        ("JSON null (400)", Body::Raw("null")),
        (
            "text after the object (400)",
            Body::Raw(r#"{"adapter": "hypershift"} and more"#),
        ),
        (
            "conditions as a map (400)",
            ok(&|v| {
                v["conditions"] = json!({"Available": {"type": "Available", "status": "True"}})
            }),
        ),
        (
            "observed_generation as a string (400)",
            ok(&|v| v["observed_generation"] = json!("1")),
        ),
        (
            "observed_generation 1.5 (400)",
            ok(&|v| v["observed_generation"] = json!(1.5)),
        ),
        (
            "observed_generation beyond int32 (400)",
            ok(&|v| v["observed_generation"] = json!(3_000_000_000_i64)),
        ),
        (
            "observed_generation 0 (400)",
            ok(&|v| v["observed_generation"] = json!(0)),
        ),
        ("adapter a number (400)", ok(&|v| v["adapter"] = json!(5))),
        ("data as an array (400)", ok(&|v| v["data"] = json!([]))),
        (
            "metadata as an array (400)",
            ok(&|v| v["metadata"] = json!([])),
        ),
        (
            "JSON that does not parse (400)",
            Body::Raw("{\"adapter\": \"hypershift\", "),
        ),
        (
            "observed_time that does not parse (400)",
            ok(&|v| v["observed_time"] = json!("yesterday")),
        ),
        ("no adapter (400)", ok(&|v| v["adapter"] = json!(""))),
        (
            "no observed_generation (400)",
            ok(&|v| drop(v.as_object_mut().unwrap().remove("observed_generation"))),
        ),
        (
            "a condition without type (400)",
            ok(&|v| v["conditions"][2]["type"] = json!("")),
        ),
        (
            "a duplicate condition type (400)",
            ok(&|v| v["conditions"][3]["type"] = json!("Available")),
        ),
        (
            "status 'true' (400)",
            ok(&|v| v["conditions"][1]["status"] = json!("true")),
        ),
        (
            "observed_time far in the future (400)",
            ok(&|v| v["observed_time"] = json!(far_future)),
        ),
        (
            "observed_time long ago (400)",
            ok(&|v| v["observed_time"] = json!(long_ago)),
        ),
        (
            "a generation the cluster does not have yet (204)",
            ok(&|v| v["observed_generation"] = json!(7)),
        ),
        (
            "no Health condition (400)",
            ok(&|v| drop(v["conditions"].as_array_mut().unwrap().remove(2))),
        ),
    ]
}

/// `POST /clusters` bodies that are refused; `existing` is the name of a cluster that exists
/// (where the body would otherwise be accepted, so that nothing is created if it were).
pub fn cluster_creates(existing: &str) -> Vec<(&'static str, Body)> {
    let body = |f: &dyn Fn(&mut Value)| {
        let mut v = json!({"kind": "Cluster", "name": existing, "spec": spec(IMAGE_1)});
        f(&mut v);
        Body::Json(v)
    };
    let remove =
        |key: &'static str| move |v: &mut Value| drop(v.as_object_mut().unwrap().remove(key));
    vec![
        ("empty body (400)", Body::Raw("")),
        (
            "JSON that does not parse (400)",
            Body::Raw("{\"kind\": \"Cluster\", "),
        ),
        ("a JSON array (400)", Body::Raw("[]")),
        ("JSON null (400)", Body::Raw("null")),
        (
            "text after the object (400)",
            Body::Raw(r#"{"kind": "Cluster", "name": "Bad_Name", "spec": {}} and more"#),
        ),
        ("no kind (400)", body(&remove("kind"))),
        ("an empty kind (400)", body(&|v| v["kind"] = json!(""))),
        ("kind a number (400)", body(&|v| v["kind"] = json!(3))),
        (
            "another entity's kind (400)",
            body(&|v| v["kind"] = json!("NodePool")),
        ),
        ("no name (400)", body(&remove("name"))),
        ("name null (400)", body(&|v| v["name"] = json!(null))),
        ("name a number (400)", body(&|v| v["name"] = json!(3))),
        ("name too short (400)", body(&|v| v["name"] = json!("ab"))),
        (
            "name of 54 characters (400)",
            body(&|v| v["name"] = json!("a".repeat(54))),
        ),
        ("labels a list (400)", body(&|v| v["labels"] = json!(["a"]))),
        (
            "a label value a number (400)",
            body(&|v| v["labels"] = json!({"a": 1})),
        ),
        (
            "spec a list, before kind (400)",
            Body::Json(json!({"kind": 3, "spec": []})),
        ),
        ("spec null (400)", body(&|v| v["spec"] = json!(null))),
        ("spec a string (400)", body(&|v| v["spec"] = json!("x"))),
        ("no spec (400)", body(&remove("spec"))),
        (
            "a bad name and no spec: the name first (400)",
            Body::Json(json!({"kind": "Cluster", "name": "Bad_Name"})),
        ),
    ]
}

/// `POST …/nodepools` requests that are refused: (what, under the cluster or flat, body).
/// `existing` is the name of a NodePool that exists under the cluster.
pub fn nodepool_creates(existing: &str) -> Vec<(&'static str, bool, Body)> {
    let pool = |name: &str, spec: Option<Value>| {
        let mut v = json!({"kind": "NodePool", "name": name});
        if let Some(spec) = spec {
            v["spec"] = spec;
        }
        Body::Json(v)
    };
    let spec = || Some(json!({"replicas": 1}));
    vec![
        ("flat (422)", false, pool(existing, spec())),
        ("flat without spec (400)", false, pool(existing, None)),
        (
            "flat with a bad name (400)",
            false,
            pool("Bad_Name", spec()),
        ),
        (
            "flat with the Cluster kind (400)",
            false,
            Body::Json(json!({"kind": "Cluster", "name": existing, "spec": {}})),
        ),
        ("without spec (400)", true, pool(existing, None)),
        (
            "name of 16 characters (400)",
            true,
            pool("workers-euw2-a12", Some(json!({}))),
        ),
        (
            "with the Cluster kind (400)",
            true,
            Body::Json(json!({"kind": "Cluster", "name": existing, "spec": {}})),
        ),
        ("the same name again (409)", true, pool(existing, spec())),
    ]
}

/// `PATCH /clusters/{id}` bodies that are refused.
pub fn patches() -> Vec<(&'static str, Body)> {
    vec![
        ("empty body (400)", Body::Raw("")),
        ("JSON that does not parse (400)", Body::Raw("{\"spec\": ")),
        ("a JSON array (400)", Body::Raw("[]")),
        ("JSON null (400)", Body::Raw("null")),
        ("an empty object (400)", Body::Json(json!({}))),
        (
            "text after the object (400)",
            Body::Raw(r#"{"spec": {}} and more"#),
        ),
        ("spec null (400)", Body::Json(json!({"spec": null}))),
        ("spec a list (400)", Body::Json(json!({"spec": []}))),
        ("labels a number (400)", Body::Json(json!({"labels": 5}))),
        (
            "a label value a number (400)",
            Body::Json(json!({"labels": {"a": 1}})),
        ),
        (
            "references a number (400)",
            Body::Json(json!({"references": 5})),
        ),
        ("the name (400)", Body::Json(json!({"name": "other-name"}))),
        ("the kind (400)", Body::Json(json!({"kind": "Cluster"}))),
        (
            "an unknown field (400)",
            Body::Json(json!({"spec": spec(IMAGE_1), "nope": 1})),
        ),
    ]
}

/// Requests the routes refuse or do not find: (what, method, path under the API prefix, body).
/// `cluster` is the path of a cluster that exists.
pub fn routes(cluster: &str) -> Vec<(String, &'static str, String, Body)> {
    const NONE: &str = "/clusters/019a6f1e-4b7c-7d2e-9f3a-000000000000";
    const NONE_POOL: &str = "019a6f1e-4b7c-7d2e-9f3a-000000000001";
    let r = |what: &str, method, path: String, body| (what.to_owned(), method, path, body);
    vec![
        r(
            "GET a cluster that does not exist (404)",
            "GET",
            NONE.into(),
            Body::None,
        ),
        r(
            "GET an id that is not a UUID (404)",
            "GET",
            "/clusters/not-a-uuid".into(),
            Body::None,
        ),
        r(
            "the statuses of a cluster that does not exist (404)",
            "GET",
            format!("{NONE}/statuses"),
            Body::None,
        ),
        r(
            "the NodePools of a cluster that does not exist (404)",
            "GET",
            format!("{NONE}/nodepools"),
            Body::None,
        ),
        r(
            "a NodePool of a cluster that does not exist (404)",
            "GET",
            format!("{NONE}/nodepools/{NONE_POOL}"),
            Body::None,
        ),
        r(
            "a NodePool that does not exist, flat (404)",
            "GET",
            format!("/nodepools/{NONE_POOL}"),
            Body::None,
        ),
        r(
            "a NodePool that does not exist under the cluster (404)",
            "GET",
            format!("{cluster}/nodepools/{NONE_POOL}"),
            Body::None,
        ),
        r(
            "DELETE a cluster that does not exist (404)",
            "DELETE",
            NONE.into(),
            Body::None,
        ),
        r(
            "DELETE a NodePool that does not exist, flat (404)",
            "DELETE",
            format!("/nodepools/{NONE_POOL}"),
            Body::None,
        ),
        r(
            "PATCH a cluster that does not exist (404)",
            "PATCH",
            NONE.into(),
            Body::Json(json!({"labels": {"a": "b"}})),
        ),
        r(
            "PATCH a cluster that does not exist, bad body (400)",
            "PATCH",
            NONE.into(),
            Body::Json(json!({"nope": 1})),
        ),
        r(
            "POST on statuses (405)",
            "POST",
            format!("{cluster}/statuses"),
            Body::Json(json!({})),
        ),
        r(
            "DELETE on statuses (405)",
            "DELETE",
            format!("{cluster}/statuses"),
            Body::None,
        ),
        r(
            "PUT on a cluster (405)",
            "PUT",
            cluster.into(),
            Body::Json(json!({})),
        ),
        r(
            "POST on a cluster (405)",
            "POST",
            cluster.into(),
            Body::Json(json!({})),
        ),
        r(
            "PUT on the clusters (405)",
            "PUT",
            "/clusters".into(),
            Body::Json(json!({})),
        ),
        r(
            "PATCH on the clusters (405)",
            "PATCH",
            "/clusters".into(),
            Body::Json(json!({})),
        ),
        r(
            "an unknown path (404)",
            "GET",
            format!("{cluster}/nothing"),
            Body::None,
        ),
        r(
            "an unknown kind (404)",
            "GET",
            "/widgets".into(),
            Body::None,
        ),
        r(
            "a kind that is no child of clusters (404)",
            "GET",
            format!("{cluster}/managementclusters"),
            Body::None,
        ),
        r(
            "below statuses (404)",
            "GET",
            format!("{cluster}/statuses/hypershift"),
            Body::None,
        ),
    ]
}

/// List queries that are refused or find nothing, narrowed to `name`.
pub fn lists(name: &str) -> Vec<(&'static str, String)> {
    let mine = super::search(&format!("name='{name}'"));
    vec![
        ("size 101 (400)", format!("{mine}&size=101")),
        ("size 0 (400)", format!("{mine}&size=0")),
        ("size not a number (400)", format!("{mine}&size=abc")),
        ("page 0 (400)", format!("{mine}&page=0")),
        ("page not a number (400)", format!("{mine}&page=x")),
        ("a page past the end", format!("{mine}&size=1&page=2")),
        ("a search of one word (400)", super::search("bogus")),
        ("a search cut short (400)", super::search("name=")),
        (
            "a search on an unknown field (400)",
            super::search(&format!("nope='{name}'")),
        ),
    ]
}
