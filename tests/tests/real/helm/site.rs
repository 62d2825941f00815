//! The site the Helm suite installs for: both adapters, both brokers, `site.example.yaml` filled
//! in with the kit's endpoints, the Secret files; and the git tree id of the vendored chart.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use testbed::real::RealSystems;
use testbed::real::helm::repo_path;

/// One adapter's release: its values file, its two framework files, its topic and subscription.
#[derive(Debug)]
pub struct Adapter {
    pub release: &'static str,
    pub values: &'static str,
    pub adapter_config: &'static str,
    pub task_config: &'static str,
    pub topic: &'static str,
    pub subscription: &'static str,
}

/// Both adapters, as docs/helm.md installs them.
pub static ADAPTERS: [Adapter; 2] = [
    Adapter {
        release: "hypershift-controlplane",
        values: "manifests/helm/controlplane.yaml",
        adapter_config: "manifests/hyperfleet/adapter-config.yaml",
        task_config: "manifests/hyperfleet/adapter-task-config.yaml",
        topic: "hyperfleet-system-clusters",
        subscription: "hypershift",
    },
    Adapter {
        release: "hypershift-nodepool",
        values: "manifests/helm/nodepool.yaml",
        adapter_config: "manifests/hyperfleet/nodepool/adapter-config.yaml",
        task_config: "manifests/hyperfleet/nodepool/adapter-task-config.yaml",
        topic: "hyperfleet-system-nodepools",
        subscription: "hypershift-nodepool",
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broker {
    RabbitMq,
    PubSub,
}

/// The Pub/Sub project of the rendered tests (nothing is contacted).
pub const PUBSUB_PROJECT: &str = "hyperfleet-helm-suite";
/// The framework image of the rendered tests (the kit has no kubelet: nothing is pulled).
pub const IMAGE: (&str, &str, &str) = (
    "registry.invalid",
    "openshift-hyperfleet/hyperfleet-adapter",
    "v0.3.1",
);

/// A site of the kit: `site.example.yaml` filled in with the kit's endpoints, and the Secret files
/// (random tokens, a CA stand-in: nothing reads them here).
#[derive(Debug)]
pub struct SiteFiles {
    dir: tempfile::TempDir,
    pub maestro_token: PathBuf,
    pub maestro_ca: PathBuf,
    pub api_token: PathBuf,
    pub rabbitmq_url: PathBuf,
    /// The env values the site file sets, by name.
    pub env: Vec<(String, String)>,
    /// `broker.rabbitmq.url`: the kit's AMQP URL without its credentials.
    pub bare_amqp_url: String,
    pub api_url: String,
}

impl SiteFiles {
    pub fn new(real: &RealSystems) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("helm-site-")
            .tempdir()
            .unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let token = || format!("{:032x}\n", fastrand::u128(..));
        let amqp = real.var("AMQP_URL");
        let bare = match amqp
            .split_once("://")
            .and_then(|(s, rest)| Some((s, rest.split_once('@')?.1)))
        {
            Some((scheme, host)) => format!("{scheme}://{host}"),
            None => amqp.to_owned(),
        };
        Self {
            maestro_token: write("maestro-token", &token()),
            maestro_ca: write(
                "maestro-ca.crt",
                "-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n",
            ),
            api_token: write("hyperfleet-api-token", &token()),
            rabbitmq_url: write("rabbitmq-url", &format!("{amqp}\n")),
            env: vec![
                ("MANAGEMENT_CLUSTER_CONSUMER".into(), "mgmt-a".into()),
                ("MAESTRO_API_URL".into(), real.var("MAESTRO_API_URL").into()),
                (
                    "MAESTRO_GRPC_URL".into(),
                    real.var("MAESTRO_GRPC_URL").into(),
                ),
                ("ADAPTER_IMAGE_TAG".into(), env!("CARGO_PKG_VERSION").into()),
            ],
            bare_amqp_url: bare,
            api_url: real.var("HYPERFLEET_API_URL").to_owned(),
            dir,
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `site.example.yaml` with every SET value filled in for `broker` (JSON, which is YAML).
    ///
    /// # Panics
    /// When the example has an empty value this suite does not know how to fill.
    pub fn values(&self, broker: Broker) -> PathBuf {
        self.values_with(broker, |_| {})
    }

    /// [`SiteFiles::values`], then `edit` applied to the values before they are written.
    pub fn values_with(&self, broker: Broker, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let text = std::fs::read_to_string(repo_path("manifests/helm/site.example.yaml")).unwrap();
        let mut site: Value = serde_saphyr::from_str(&text).unwrap();
        site["image"]["registry"] = json!(IMAGE.0);
        site["image"]["repository"] = json!(IMAGE.1);
        site["image"]["tag"] = json!(IMAGE.2);
        site["adapterConfig"]["hyperfleetApi"]["baseUrl"] = json!(self.api_url);
        site["broker"]["rabbitmq"]["url"] = json!(self.bare_amqp_url);
        let env = site["env"].as_array_mut().unwrap();
        for entry in env.iter_mut() {
            let name = entry["name"].as_str().unwrap().to_owned();
            if let Some((_, value)) = self.env.iter().find(|(n, _)| *n == name) {
                entry["value"] = json!(value);
            }
            assert_ne!(
                entry["value"], "",
                "site.example.yaml: {name} is new to this suite"
            );
        }
        if broker == Broker::PubSub {
            env.retain(|e| e["name"] != "BROKER_RABBITMQ_URL");
            site["broker"] =
                json!({"type": "googlepubsub", "googlepubsub": {"projectId": PUBSUB_PROJECT}});
        }
        edit(&mut site);
        self.write_json(
            &format!("site-{broker:?}-{:08x}.yaml", fastrand::u32(..)),
            &site,
        )
    }

    /// Writes `value` as JSON (which is YAML) to `name` in the site directory.
    pub fn write_json(&self, name: &str, value: &Value) -> PathBuf {
        self.write(name, &serde_json::to_string_pretty(value).unwrap())
    }

    /// Writes `text` to `name` in the site directory.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The git object id (SHA-1) of `kind` with `body`.
fn object_id(kind: &str, body: &[u8]) -> sha1_smol::Digest {
    let mut hash = sha1_smol::Sha1::new();
    hash.update(format!("{kind} {}\0", body.len()).as_bytes());
    hash.update(body);
    hash.digest()
}

/// The git tree id of `dir` as `git rev-parse <commit>:<dir>` gives it (modes 100644, 100755,
/// 40000; names sorted as git sorts them, a directory as its name plus `/`), without the
/// top-level entries in `skip`.
pub fn git_tree_id(dir: &Path, skip: &[&str]) -> String {
    fn tree(dir: &Path, skip: &[&str]) -> sha1_smol::Digest {
        use std::os::unix::fs::PermissionsExt;
        let mut entries: Vec<(String, PathBuf, bool)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter_map(|path| {
                let name = path.file_name()?.to_string_lossy().into_owned();
                let is_dir = path.is_dir();
                (!skip.contains(&name.as_str())).then_some((name, path, is_dir))
            })
            .collect();
        entries
            .sort_by_key(|(name, _, is_dir)| format!("{name}{}", if *is_dir { "/" } else { "" }));
        let mut body = Vec::new();
        for (name, path, is_dir) in entries {
            let (mode, id) = if is_dir {
                ("40000", tree(&path, &[]))
            } else {
                let exec = std::fs::metadata(&path).unwrap().permissions().mode() & 0o111 != 0;
                let mode = if exec { "100755" } else { "100644" };
                (mode, object_id("blob", &std::fs::read(&path).unwrap()))
            };
            body.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            body.extend_from_slice(&id.bytes());
        }
        object_id("tree", &body)
    }
    tree(dir, skip).to_string()
}
