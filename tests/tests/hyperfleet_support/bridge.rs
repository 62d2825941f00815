//! From a pulse Job to HyperFleet's conclusion: the project's real task config
//! (`manifests/hyperfleet/adapter-task-config.yaml` for clusters,
//! `manifests/hyperfleet/nodepool/adapter-task-config.yaml` for NodePools) runs one event through
//! the framework emulation ([`super::run`]) against the testbed's HyperFleet API
//! (`testbed::hyperfleet::fake_api`): its params GET the object from that API, its resource
//! discovery finds the pulse Job as the fake Kubernetes API server holds it, and the status PUT
//! its `post` builds is sent to the API, whose answer (201/204/400) is returned. So an
//! end-to-end test sees what HyperFleet concludes from exactly the body the framework would
//! send.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use testbed::hyperfleet::fake_api::{FakeHyperfleetApi, PREFIX, Reply};
use testbed::hyperfleet::schema::{self, Source, TaskConfig};

use super::cel_env::{self, CelError};
use super::run::{Run, World};

/// Which of the project's task configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// `manifests/hyperfleet/adapter-task-config.yaml` (events of a Cluster).
    ControlPlane,
    /// `manifests/hyperfleet/nodepool/adapter-task-config.yaml` (events of a NodePool).
    NodePool,
}

impl Adapter {
    fn task_config(self) -> &'static str {
        match self {
            Adapter::ControlPlane => "manifests/hyperfleet/adapter-task-config.yaml",
            Adapter::NodePool => "manifests/hyperfleet/nodepool/adapter-task-config.yaml",
        }
    }
}

/// A loaded task config and the deployment environment it runs with.
pub struct Bridge {
    adapter: Adapter,
    config: TaskConfig,
    env: BTreeMap<String, String>,
}

/// One event's outcome: what the framework did, and the API's answer to its status PUT (`None`
/// when nothing was sent, e.g. a precondition not met).
pub struct Reported {
    pub run: Run,
    pub answer: Option<Reply>,
}

impl Bridge {
    /// Loads `adapter`'s task config as the framework would (decode, structural and semantic
    /// checks, every CEL expression parsed); its `env.*` params get `value-of-<VAR>` except
    /// `HYPERFLEET_API_BASE_URL`, which is the fake API's URL.
    ///
    /// # Panics
    /// When the config does not load: the conformance test says why.
    pub fn load(adapter: Adapter, api: &FakeHyperfleetApi) -> Bridge {
        let path = format!(
            "{}/../{}",
            env!("CARGO_MANIFEST_DIR"),
            adapter.task_config()
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let config = schema::decode_task_config(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let env: BTreeMap<String, String> = config
            .params
            .iter()
            .filter_map(|p| match &p.source {
                Some(Source::Path(path)) => path.strip_prefix("env.").map(|v| {
                    let value = if v == "HYPERFLEET_API_BASE_URL" {
                        api.url().to_owned()
                    } else {
                        format!("value-of-{v}")
                    };
                    (v.to_owned(), value)
                }),
                _ => None,
            })
            .collect();
        config
            .structural(&env)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut errors = config.semantic(&BTreeMap::new());
        for c in config.cel_expressions() {
            if let Err(CelError::Hard(e)) = cel_env::parse(&c.expression) {
                errors.push(format!("{}: CEL parse error: {e}", c.location));
            }
        }
        assert!(errors.is_empty(), "{path}: {errors:?}");
        Bridge {
            adapter,
            config,
            env,
        }
    }

    /// One event for the object at `object_path` (`/api/hyperfleet/v1/clusters/{id}` or
    /// `…/clusters/{id}/nodepools/{id}`), whose pulse Job discovery finds as `job` makes it from
    /// the rendered manifest (an e2e test returns the Job the fake Kubernetes API server holds:
    /// `&|_| pulse.job.clone()`). The framework's `now()` is the API's clock.
    ///
    /// # Panics
    /// When the object cannot be read (the event would not be sent by Sentinel) or the post
    /// phase fails.
    pub fn report(
        &self,
        api: &FakeHyperfleetApi,
        object_path: &str,
        job: &dyn Fn(&Value) -> Value,
    ) -> Reported {
        let object = api.must("GET", object_path, None);
        let mut event = json!({
            "id": object["id"], "kind": object["kind"], "href": object["href"],
            "generation": object["generation"],
        });
        if self.adapter == Adapter::NodePool {
            event["owner_references"] = object["owner_references"].clone();
        }
        let get = |method: &str, url: &str| -> Result<Value, String> {
            let path = url.strip_prefix(api.url()).unwrap_or(url);
            let reply = api.call(method, path, None);
            if (200..300).contains(&reply.status) {
                Ok(reply.body)
            } else {
                Err(format!("{method} {path}: {} {}", reply.status, reply.body))
            }
        };
        let transport = |_name: &str, manifest: &Value| -> Result<Option<Value>, String> {
            Ok(Some(job(manifest)))
        };
        let world = World {
            adapter_name: "hypershift".into(),
            adapter_version: "0.3.1".into(),
            base_url: true,
            env: self.env.clone(),
            event,
            api: &get,
            transport: &transport,
            now: api.clock().now(),
            evaluated: Default::default(),
        };
        let run = world.run(&self.config);
        assert!(
            run.post_errors.is_empty(),
            "the post phase failed: {:?}",
            run.post_errors
        );
        let answer = run
            .sent
            .iter()
            .find(|s| s.method == "PUT" && s.url.ends_with("/statuses"))
            .map(|sent| {
                let path = sent.url.strip_prefix(api.url()).unwrap_or(&sent.url);
                assert!(path.starts_with(PREFIX), "PUT to {path}");
                api.call("PUT", path, sent.body.as_deref())
            });
        Reported { run, answer }
    }
}
