//! A small client of the kit's real HyperFleet API for tests: create clusters and NodePools,
//! PATCH, DELETE, PUT the reports of the adapters a test plays (`validation`, `dns`,
//! `pullsecret`), and read what HyperFleet concludes (the aggregated conditions).
//!
//! Objects are addressed by their `href` as the API returns it (`/api/hyperfleet/v1/clusters/{id}`,
//! `…/nodepools/{id}`).

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::RealSystems;

/// The API's path prefix.
pub const PREFIX: &str = "/api/hyperfleet/v1";

/// One aggregated condition of a cluster or NodePool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conclusion {
    pub status: String,
    pub observed_generation: i64,
    pub reason: String,
    pub message: String,
}

impl Conclusion {
    /// `(status, observed_generation, reason)`, for compact assertions.
    pub fn short(&self) -> (&str, i64, &str) {
        (&self.status, self.observed_generation, &self.reason)
    }
}

/// The kit's HyperFleet API.
#[derive(Debug, Clone)]
pub struct HyperfleetApi {
    base: String,
    http: reqwest::Client,
}

impl HyperfleetApi {
    /// The API of `real` (`HYPERFLEET_API_URL`).
    pub fn new(real: &RealSystems) -> HyperfleetApi {
        HyperfleetApi {
            base: real
                .var("HYPERFLEET_API_URL")
                .trim_end_matches('/')
                .to_owned(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(15))
                .build()
                .unwrap_or_default(),
        }
    }

    /// `method path` with an optional JSON body: the status code and the JSON answer (`null`
    /// for an empty or non-JSON body).
    ///
    /// # Errors
    /// When the API cannot be reached.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<(u16, Value)> {
        let method = reqwest::Method::from_bytes(method.as_bytes())?;
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{method} {path}"))?;
        let code = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        Ok((code, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// Like [`HyperfleetApi::call`], but a non-2xx answer is an error naming the request.
    ///
    /// # Errors
    /// When the API cannot be reached or does not answer 2xx.
    pub async fn must(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let (code, answer) = self.call(method, path, body).await?;
        if !(200..300).contains(&code) {
            bail!("{method} {path} answered {code}: {answer}");
        }
        Ok(answer)
    }

    /// `POST /clusters`: returns the created cluster.
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn create_cluster(
        &self,
        name: &str,
        labels: &Value,
        spec: &Value,
    ) -> anyhow::Result<Value> {
        let body = json!({"kind": "Cluster", "name": name, "labels": labels, "spec": spec});
        self.must("POST", &format!("{PREFIX}/clusters"), Some(&body))
            .await
    }

    /// `POST <cluster href>/nodepools`: returns the created NodePool.
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn create_nodepool(
        &self,
        cluster: &str,
        name: &str,
        labels: &Value,
        spec: &Value,
    ) -> anyhow::Result<Value> {
        let body = json!({"kind": "NodePool", "name": name, "labels": labels, "spec": spec});
        self.must("POST", &format!("{cluster}/nodepools"), Some(&body))
            .await
    }

    /// `GET href`: the object, `None` once it is gone (404).
    ///
    /// # Errors
    /// When the API cannot be reached or answers anything but 200 or 404.
    pub async fn get(&self, href: &str) -> anyhow::Result<Option<Value>> {
        match self.call("GET", href, None).await? {
            (200, object) => Ok(Some(object)),
            (404, _) => Ok(None),
            (code, answer) => bail!("GET {href} answered {code}: {answer}"),
        }
    }

    /// The object's condition `type_`, `None` when it has none or is gone.
    ///
    /// # Errors
    /// As [`HyperfleetApi::get`].
    pub async fn conclusion(&self, href: &str, type_: &str) -> anyhow::Result<Option<Conclusion>> {
        Ok(self
            .get(href)
            .await?
            .and_then(|object| condition(&object, type_)))
    }

    /// `PUT href/statuses` with `body`: the status code and answer.
    ///
    /// # Errors
    /// When the API cannot be reached.
    pub async fn put_status(&self, href: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
        self.call("PUT", &format!("{href}/statuses"), Some(body))
            .await
    }

    /// `GET href/statuses`: every adapter's stored report.
    ///
    /// # Errors
    /// When the API does not answer 200.
    pub async fn statuses(&self, href: &str) -> anyhow::Result<Vec<Value>> {
        let list = self.must("GET", &format!("{href}/statuses"), None).await?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// The stored report of `adapter`, if any.
    ///
    /// # Errors
    /// As [`HyperfleetApi::statuses`].
    pub async fn status_of(&self, href: &str, adapter: &str) -> anyhow::Result<Option<Value>> {
        Ok(self
            .statuses(href)
            .await?
            .into_iter()
            .find(|s| s["adapter"] == adapter))
    }

    /// Plays adapter `adapter` (one the test stands in for, e.g. `validation`): PUTs its report
    /// at the object's current generation in the shape the recordings of the real API hold
    /// (`fixtures/hyperfleet/real-api/15`–`17`, `34`–`43`): `Available` as given, `Applied` and
    /// `Health` True, `Finalized` True once the object is being deleted. Returns the status code.
    ///
    /// # Errors
    /// When the object cannot be read or the API cannot be reached.
    pub async fn report_as(
        &self,
        href: &str,
        adapter: &str,
        available: bool,
    ) -> anyhow::Result<u16> {
        let object = self
            .get(href)
            .await?
            .with_context(|| format!("{href} is gone"))?;
        let deleting = object.get("deleted_time").is_some();
        let word = |b: bool| if b { "True" } else { "False" };
        let body = json!({
            "adapter": adapter,
            "observed_generation": object["generation"],
            "observed_time": jiff::Timestamp::now().round(jiff::Unit::Second)?.to_string(),
            "conditions": [
                {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
                {"type": "Available", "status": word(available), "reason": if available { "Ready" } else { "NotReady" }, "message": format!("available={}", word(available))},
                {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
                {"type": "Finalized", "status": word(deleting), "reason": if deleting { "Finalized" } else { "NotFinalizing" }, "message": format!("finalized={}", word(deleting))},
            ],
            "data": {},
        });
        Ok(self.put_status(href, &body).await?.0)
    }

    /// `POST href/force-delete` after a DELETE if needed: removes what a failed test left
    /// behind. Errors are ignored (best effort).
    pub async fn force_remove(&self, href: &str) {
        let _ = self.call("DELETE", href, None).await;
        let reason = json!({"reason": "removed by the real-servers tests after a failure"});
        let _ = self
            .call("POST", &format!("{href}/force-delete"), Some(&reason))
            .await;
    }
}

/// Condition `type_` of an object as the API serves it.
pub fn condition(object: &Value, type_: &str) -> Option<Conclusion> {
    let found = object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    let text = |k: &str| found[k].as_str().unwrap_or_default().to_owned();
    Some(Conclusion {
        status: text("status"),
        observed_generation: found["observed_generation"].as_i64().unwrap_or_default(),
        reason: text("reason"),
        message: text("message"),
    })
}

/// A compact view of an object's conditions (`type=status@generation/reason`), for messages.
pub fn summary(object: &Value) -> String {
    object["status"]["conditions"]
        .as_array()
        .map(|conditions| {
            conditions
                .iter()
                .map(|c| {
                    format!(
                        "{}={}@{}/{}",
                        c["type"].as_str().unwrap_or_default(),
                        c["status"].as_str().unwrap_or_default(),
                        c["observed_generation"],
                        c["reason"].as_str().unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}
