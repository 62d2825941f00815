//! `ManagementCluster` entities on the fake API, as a placement test needs them: created with the
//! spec the project defines (docs/placement.md "The ManagementCluster entity"; `region`,
//! `maestro_consumer`, `max_hosted_clusters`, `cordoned`), their health reported by the
//! `mgmt-health` adapter in the shape of recording `49`, their spec patched (generation + 1:
//! `Reconciled` False until the next report, `LastKnownReconciled` kept, as the aggregation does)
//! and soft-deleted. Each helper goes through the API's own routes ([`FakeHyperfleetApi::call`]),
//! so the entity's conditions are the ones the server concludes.

use serde_json::{Value, json};

use super::{FakeHyperfleetApi, PREFIX};

/// The kind's path segment.
pub const PLURAL: &str = "managementclusters";
/// The adapter the recorded server requires for the kind (`real-api/README.md`).
pub const HEALTH_ADAPTER: &str = "mgmt-health";

/// What a `ManagementCluster` is created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagementCluster {
    /// The entity's name (3–53 characters, DNS label).
    pub name: String,
    /// `spec.region`, also the `region` label.
    pub region: String,
    /// `spec.maestro_consumer`.
    pub consumer: String,
    /// `spec.max_hosted_clusters`.
    pub max_hosted_clusters: u64,
    /// `spec.cordoned` (written only when true: the key is optional, default false).
    pub cordoned: bool,
}

impl ManagementCluster {
    /// The POST body: `{kind, name, labels: {region}, spec}` (recording `47`'s shape).
    pub fn body(&self) -> Value {
        let mut spec = json!({
            "region": self.region,
            "maestro_consumer": self.consumer,
            "max_hosted_clusters": self.max_hosted_clusters,
        });
        if self.cordoned {
            spec["cordoned"] = true.into();
        }
        json!({
            "kind": "ManagementCluster",
            "name": self.name,
            "labels": {"region": self.region},
            "spec": spec,
        })
    }
}

/// The `mgmt-health` report of recording `49` at `generation`, observed at `observed_time`:
/// `Applied` True, `Available` as given (True `Ready` "available=True" as recorded; False
/// `NotReady` "available=False"), `Health` True, `Finalized` False (True once the entity is
/// deleted, so the hard delete can follow).
pub fn health_report(
    generation: i64,
    observed_time: &str,
    available: bool,
    deleting: bool,
) -> Value {
    let word = |b: bool| if b { "True" } else { "False" };
    json!({
        "adapter": HEALTH_ADAPTER,
        "observed_generation": generation,
        "observed_time": observed_time,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
            {"type": "Available", "status": word(available), "reason": if available { "Ready" } else { "NotReady" }, "message": format!("available={}", word(available))},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
            {"type": "Finalized", "status": word(deleting), "reason": if deleting { "Finalized" } else { "NotFinalizing" }, "message": format!("finalized={}", word(deleting))},
        ],
        "data": {},
    })
}

impl FakeHyperfleetApi {
    /// Creates `mc` (POST `/managementclusters`, generation 1, not yet reported: `Reconciled`
    /// False `ReconciledMissingAdapters`, `LastKnownReconciled` False `AdaptersMissingReports`, as
    /// recording `47`); returns its path.
    ///
    /// # Panics
    /// When the API refuses it (a test set-up error, e.g. a name taken).
    pub fn create_management_cluster(&self, mc: &ManagementCluster) -> String {
        let created = self.must("POST", &format!("{PREFIX}/{PLURAL}"), Some(&mc.body()));
        created["href"]
            .as_str()
            .unwrap_or_else(|| panic!("no href in {created}"))
            .to_owned()
    }

    /// The `mgmt-health` adapter reports the entity at `path` at its current generation, one
    /// second after the API clock's now (the clock moves on by that second, so consecutive
    /// reports are ordered): `available` True makes it healthy (`Reconciled` and
    /// `LastKnownReconciled` True, recording `50`), False an outage (`LastKnownReconciled` False
    /// `AdapterReportedNotAvailable`). Returns the API's status code (201 stored).
    ///
    /// # Panics
    /// When the entity is not served.
    pub fn report_management_cluster_health(&self, path: &str, available: bool) -> u16 {
        let served = self.must("GET", path, None);
        self.clock().advance(jiff::SignedDuration::from_secs(1));
        let body = health_report(
            served["generation"].as_i64().unwrap_or(1),
            &self.clock().now().to_string(),
            available,
            served.get("deleted_time").is_some(),
        );
        self.call("PUT", &format!("{path}/statuses"), Some(&body.to_string()))
            .status
    }

    /// PATCHes the entity's spec with `change` applied to the served one: a change bumps the
    /// generation, so `Reconciled` turns False (the last report is for the previous generation)
    /// while `LastKnownReconciled` stays as it was, until the next report. Returns the new
    /// generation.
    ///
    /// # Panics
    /// When the entity is not served or the PATCH is refused (e.g. once deleted).
    pub fn patch_management_cluster_spec(
        &self,
        path: &str,
        change: impl FnOnce(&mut Value),
    ) -> i64 {
        let mut spec = self.must("GET", path, None)["spec"].clone();
        change(&mut spec);
        let patched = self.must("PATCH", path, Some(&json!({"spec": spec})));
        patched["generation"].as_i64().unwrap_or_default()
    }

    /// Sets `spec.cordoned` (true: accepts no new control planes); the new generation.
    pub fn cordon_management_cluster(&self, path: &str, cordoned: bool) -> i64 {
        self.patch_management_cluster_spec(path, |spec| spec["cordoned"] = cordoned.into())
    }

    /// Soft-deletes the entity (DELETE: 202, `deleted_time` set, generation + 1; it stays listed
    /// until `mgmt-health` reports `Finalized=True` at that generation).
    ///
    /// # Panics
    /// When the entity is not served.
    pub fn delete_management_cluster(&self, path: &str) -> Value {
        self.must("DELETE", path, None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Clock, Config};
    use super::*;

    fn at() -> jiff::Timestamp {
        "2026-11-26T14:14:42Z".parse().unwrap()
    }

    async fn api() -> FakeHyperfleetApi {
        FakeHyperfleetApi::start(Config::recorded(), Clock::at(at()))
            .await
            .unwrap()
    }

    fn mc(name: &str, region: &str) -> ManagementCluster {
        ManagementCluster {
            name: name.into(),
            region: region.into(),
            consumer: name.into(),
            max_hosted_clusters: 200,
            cordoned: false,
        }
    }

    /// `(type, status, reason, message, observed_generation)` of every condition, by type.
    fn conditions(served: &Value) -> Vec<(String, String, String, String, i64)> {
        let mut out: Vec<_> = served["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                (
                    s("type"),
                    s("status"),
                    s("reason"),
                    s("message"),
                    c["observed_generation"].as_i64().unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    }

    fn recording(name: &str) -> Option<Value> {
        let dir = job_report::team_folder::find(
            env!("CARGO_MANIFEST_DIR"),
            "fixtures/hyperfleet/real-api",
        )?;
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        Some(serde_json::from_str(&text).unwrap())
    }

    /// Recordings `47`–`53` through the helpers: the created entity, its search by region, the
    /// `mgmt-health` report, the healthy conclusion and the searches that find it are what the
    /// real server answered (ids and times aside); the report's body is the recorded one.
    #[tokio::test]
    async fn the_helpers_reproduce_the_recorded_management_cluster_life() {
        let (Some(r47), Some(r48), Some(r49), Some(r50), Some(r51), Some(r52), Some(r53)) = (
            recording("47-mgmt-create.json"),
            recording("48-mgmt-list-search-spec.json"),
            recording("49-mgmt-status-put.json"),
            recording("50-mgmt-get-after-status.json"),
            recording("51-mgmt-search-reconciled.json"),
            recording("52-mgmt-search-adapter-condition.json"),
            recording("53-mgmt-list.json"),
        ) else {
            return;
        };
        let api = api().await;
        let request = &r47["request"]["body"];
        let recorded = ManagementCluster {
            name: request["name"].as_str().unwrap().into(),
            region: request["spec"]["region"].as_str().unwrap().into(),
            consumer: request["spec"]["maestro_consumer"].as_str().unwrap().into(),
            max_hosted_clusters: request["spec"]["max_hosted_clusters"].as_u64().unwrap(),
            cordoned: false,
        };
        let mut body = recorded.body();
        assert_eq!(body["spec"], request["spec"], "the recorded spec keys");
        body["labels"] = request["labels"].clone();
        let created = api.must("POST", &format!("{PREFIX}/{PLURAL}"), Some(&body));
        let path = created["href"].as_str().unwrap().to_owned();
        let expected = &r47["response"]["body"];
        assert_eq!(conditions(&created), conditions(expected));
        for key in ["kind", "name", "labels", "spec", "generation", "tenancy"] {
            assert_eq!(created[key], expected[key], "{key}");
        }

        let listed = api.must(
            "GET",
            &format!("{PREFIX}/{PLURAL}?search=spec.region=%27us-east1%27"),
            None,
        );
        let recorded_list = &r48["response"]["body"];
        assert_eq!(
            (&listed["page"], &listed["size"], &listed["total"]),
            (
                &recorded_list["page"],
                &recorded_list["size"],
                &recorded_list["total"]
            )
        );
        assert_eq!(
            conditions(&listed["items"][0]),
            conditions(&recorded_list["items"][0])
        );

        assert_eq!(api.report_management_cluster_health(&path, true), 201);
        let stored = api.must("GET", &format!("{path}/statuses"), None);
        let mut sent = health_report(1, "t", true, false);
        let mut recorded_request = r49["request"]["body"].clone();
        for v in [&mut sent, &mut recorded_request] {
            v.as_object_mut().unwrap().remove("observed_time");
            v.as_object_mut().unwrap().remove("data");
        }
        assert_eq!(sent, recorded_request, "recording 49's report");
        assert_eq!(stored["items"][0]["adapter"], HEALTH_ADAPTER);

        let served = api.must("GET", &path, None);
        assert_eq!(conditions(&served), conditions(&r50["response"]["body"]));
        for (search, recording) in [
            ("status.conditions.Reconciled=%27True%27", &r51),
            ("status.conditions.MgmtHealthSuccessful=%27True%27", &r52),
        ] {
            let found = api.must("GET", &format!("{PREFIX}/{PLURAL}?search={search}"), None);
            assert_eq!(
                found["total"], recording["response"]["body"]["total"],
                "{search}"
            );
            assert_eq!(
                conditions(&found["items"][0]),
                conditions(&recording["response"]["body"]["items"][0]),
                "{search}"
            );
        }
        let all = api.must("GET", &format!("{PREFIX}/{PLURAL}"), None);
        assert_eq!(all["total"], r53["response"]["body"]["total"]);
        assert_eq!(
            conditions(&all["items"][0]),
            conditions(&r53["response"]["body"]["items"][0])
        );
    }

    fn condition(api: &FakeHyperfleetApi, path: &str, type_: &str) -> (String, String, i64) {
        let served = api.must("GET", path, None);
        let c = served["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == type_)
            .unwrap_or_else(|| panic!("no {type_} in {served}"))
            .clone();
        (
            c["status"].as_str().unwrap().into(),
            c["reason"].as_str().unwrap().into(),
            c["observed_generation"].as_i64().unwrap(),
        )
    }

    /// Cordoning edits the spec: generation 2, `Reconciled` False (the report is for 1) while
    /// `LastKnownReconciled` stays True; the next report makes it healthy again. An unavailable
    /// report turns `LastKnownReconciled` False (the outage signal); a DELETE keeps the entity
    /// listed with `deleted_time` until `mgmt-health` reports `Finalized=True`.
    #[tokio::test]
    async fn cordon_outage_and_soft_delete_move_the_conditions_as_the_aggregation_does() {
        let api = api().await;
        let path = api.create_management_cluster(&mc("mgmt-us-east1-a", "us-east1"));
        assert_eq!(api.report_management_cluster_health(&path, true), 201);
        assert_eq!(condition(&api, &path, "Reconciled").0, "True");

        assert_eq!(api.cordon_management_cluster(&path, true), 2);
        let served = api.must("GET", &path, None);
        assert_eq!(served["spec"]["cordoned"], true);
        assert_eq!(
            condition(&api, &path, "Reconciled"),
            ("False".into(), "ReconciledMissingAdapters".into(), 2)
        );
        assert_eq!(condition(&api, &path, "LastKnownReconciled").0, "True");
        assert_eq!(api.report_management_cluster_health(&path, true), 201);
        assert_eq!(
            condition(&api, &path, "Reconciled"),
            ("True".into(), "ReconciledAll".into(), 2)
        );

        assert_eq!(api.report_management_cluster_health(&path, false), 201);
        assert_eq!(
            condition(&api, &path, "LastKnownReconciled"),
            ("False".into(), "AdapterReportedNotAvailable".into(), 2)
        );

        let deleted = api.delete_management_cluster(&path);
        assert!(deleted["deleted_time"].is_string(), "{deleted}");
        assert_eq!(deleted["generation"], 3);
        let listed = api.must(
            "GET",
            &format!("{PREFIX}/{PLURAL}?search=spec.maestro_consumer=%27mgmt-us-east1-a%27"),
            None,
        );
        assert_eq!(listed["total"], 1);
        assert!(listed["items"][0]["deleted_time"].is_string());
        assert_eq!(api.report_management_cluster_health(&path, true), 201);
        assert_eq!(
            api.call("GET", &path, None).status,
            404,
            "hard-deleted once finalized"
        );
    }

    /// The region and consumer searches with pages: newest first, `size` items of `total`, the
    /// default page size 20, and a size over 100 refused naming the parameter.
    #[tokio::test]
    async fn searches_by_region_and_consumer_are_paged() {
        let api = api().await;
        for i in 0..25 {
            api.clock().advance(jiff::SignedDuration::from_secs(1));
            api.create_management_cluster(&mc(&format!("mgmt-us-east1-{i:02}"), "us-east1"));
        }
        api.create_management_cluster(&mc("mgmt-europe-west2-a", "europe-west2"));
        let list = |query: &str| api.call("GET", &format!("{PREFIX}/{PLURAL}?{query}"), None);
        let names = |v: &Value| -> Vec<String> {
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let region = "search=spec.region=%27us-east1%27";
        let first = list(region).body;
        assert_eq!(
            (
                first["page"].as_i64(),
                first["size"].as_i64(),
                first["total"].as_i64()
            ),
            (Some(1), Some(20), Some(25))
        );
        assert_eq!(names(&first)[0], "mgmt-us-east1-24", "newest first");
        let second = list(&format!("{region}&page=2&size=20")).body;
        assert_eq!(
            (second["page"].as_i64(), second["size"].as_i64()),
            (Some(2), Some(5))
        );
        let mut all = names(&first);
        all.extend(names(&second));
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 25, "two pages hold every match once");
        let beyond = list(&format!("{region}&page=3&size=20")).body;
        assert_eq!(
            (beyond["size"].as_i64(), beyond["total"].as_i64()),
            (Some(0), Some(25))
        );

        let by_consumer = list("search=spec.maestro_consumer=%27mgmt-europe-west2-a%27").body;
        assert_eq!(names(&by_consumer), ["mgmt-europe-west2-a"]);

        for (query, parameter) in [
            ("size=101", "size"),
            ("size=0", "size"),
            ("page=0", "page"),
            ("size=x", "size"),
        ] {
            let refused = list(query);
            assert_eq!(refused.status, 400, "{query}");
            assert_eq!(
                refused.body["detail"], "Invalid query parameters",
                "{query}"
            );
            assert_eq!(
                refused.body["errors"][0]["field"], parameter,
                "{query}: {}",
                refused.body
            );
        }
    }
}
