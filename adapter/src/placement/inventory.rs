//! Where the management clusters come from: a file (`--management-clusters-file`, read with the
//! bounded reader) or the HyperFleet API's `ManagementCluster` entities
//! (`--management-clusters-from-api`, searched with `spec.region='<r>'` or
//! `spec.maestro_consumer='<c>'`, every page).

use std::future::Future;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entity::{ManagementCluster, parse_list};
use crate::hyperfleet::api::{TIMEOUT, get_path};

/// Route of the entity list.
pub const MANAGEMENT_CLUSTERS_PATH: &str = "/api/hyperfleet/v1/managementclusters";
/// Page size asked of the HyperFleet API.
pub const PAGE_SIZE: u32 = 100;
/// Pages read at most (a bound: 10,000 entities in one region).
pub const MAX_PAGES: u32 = 100;

/// A source of management clusters.
pub trait Inventory {
    /// The entities of `region` (the file inventory returns every entity; the screen passes over
    /// other regions with their reason). `Err` = the inventory could not be read.
    fn candidates(
        &self,
        region: &str,
    ) -> impl Future<Output = Result<Vec<ManagementCluster>, String>> + Send;

    /// The entities naming `consumer` (the record of a placed work, for the health rule).
    fn by_consumer(
        &self,
        consumer: &str,
    ) -> impl Future<Output = Result<Vec<ManagementCluster>, String>> + Send;
}

/// The file inventory: `{"items": [...]}` or a bare array, re-read on every call.
#[derive(Debug, Clone)]
pub struct FileInventory {
    pub path: PathBuf,
}

impl FileInventory {
    /// Every entity of the file.
    pub fn read(&self) -> Result<Vec<ManagementCluster>, String> {
        read_file(&self.path)
    }
}

/// Reads and parses the inventory file; every message names the file and its setting.
pub fn read_file(path: &Path) -> Result<Vec<ManagementCluster>, String> {
    let text = crate::input_file::MANAGEMENT_CLUSTERS.read_text(path)?;
    if text.trim().is_empty() {
        return Err(format!(
            "the management clusters file {} (MANAGEMENT_CLUSTERS_FILE) is empty; write {{\"items\": [<ManagementCluster>...]}}",
            path.display()
        ));
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the management clusters file {} (MANAGEMENT_CLUSTERS_FILE) is not JSON: {e}",
            path.display()
        )
    })?;
    parse_list(
        &value,
        &format!(
            "the management clusters file {} (MANAGEMENT_CLUSTERS_FILE)",
            path.display()
        ),
    )
}

impl Inventory for FileInventory {
    async fn candidates(&self, _region: &str) -> Result<Vec<ManagementCluster>, String> {
        self.read()
    }

    async fn by_consumer(&self, consumer: &str) -> Result<Vec<ManagementCluster>, String> {
        Ok(self
            .read()?
            .into_iter()
            .filter(|mc| {
                mc.spec
                    .as_ref()
                    .is_ok_and(|s| s.maestro_consumer == consumer)
            })
            .collect())
    }
}

/// The HyperFleet API inventory.
#[derive(Debug, Clone)]
pub struct ApiInventory {
    pub base_url: String,
    pub auth: crate::hyperfleet::api::Auth,
}

impl ApiInventory {
    /// Every entity matching `search`, all pages.
    pub async fn search(&self, search: &str) -> Result<Vec<ManagementCluster>, String> {
        let mut items = Vec::new();
        for page in 1..=MAX_PAGES {
            let query = [
                ("search", search.to_owned()),
                ("page", page.to_string()),
                ("size", PAGE_SIZE.to_string()),
            ];
            let (url, text) = get_path(
                &self.base_url,
                MANAGEMENT_CLUSTERS_PATH,
                &query,
                &self.auth,
                TIMEOUT,
            )
            .await
            .map_err(|e| e.to_string())?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| format!("GET {url}: the answer is not JSON: {e}"))?;
            let page_items = parse_list(&value, &format!("GET {url}"))?;
            let total = value.get("total").and_then(Value::as_u64);
            let count = page_items.len();
            items.extend(page_items);
            let done = count == 0
                || total.is_none_or(|t| items.len() as u64 >= t)
                || count < PAGE_SIZE as usize;
            if done {
                return Ok(items);
            }
        }
        Err(format!(
            "GET {MANAGEMENT_CLUSTERS_PATH}?search={search}: more than {MAX_PAGES} pages of {PAGE_SIZE}"
        ))
    }
}

/// `spec.<key>='<value>'`; a value with a quote cannot be searched for.
pub fn spec_search(key: &str, value: &str) -> Result<String, String> {
    if value.contains('\'') {
        return Err(format!(
            "cannot search for spec.{key} {value:?}: it contains a quote"
        ));
    }
    Ok(format!("spec.{key}='{value}'"))
}

impl Inventory for ApiInventory {
    async fn candidates(&self, region: &str) -> Result<Vec<ManagementCluster>, String> {
        self.search(&spec_search(super::entity::SPEC_REGION, region)?)
            .await
    }

    async fn by_consumer(&self, consumer: &str) -> Result<Vec<ManagementCluster>, String> {
        self.search(&spec_search(
            super::entity::SPEC_MAESTRO_CONSUMER,
            consumer,
        )?)
        .await
    }
}

/// The inventory chosen by the flags.
#[derive(Debug, Clone)]
pub enum AnyInventory {
    File(FileInventory),
    Api(ApiInventory),
}

impl Inventory for AnyInventory {
    async fn candidates(&self, region: &str) -> Result<Vec<ManagementCluster>, String> {
        match self {
            Self::File(i) => i.candidates(region).await,
            Self::Api(i) => i.candidates(region).await,
        }
    }

    async fn by_consumer(&self, consumer: &str) -> Result<Vec<ManagementCluster>, String> {
        match self {
            Self::File(i) => i.by_consumer(consumer).await,
            Self::Api(i) => i.by_consumer(consumer).await,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file(content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("management-clusters.json");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(content)
            .unwrap();
        (dir, path)
    }

    #[test]
    fn bad_inventory_files_are_named_with_the_setting_and_the_fix() {
        let cases: [(&[u8], &str); 4] = [
            (b"", "is empty"),
            (b"  \n", "is empty"),
            (br#"{"items": [{"name": "mgmt-use1-a""#, "is not JSON"),
            (br#"{"kind": "ManagementClusterList"}"#, "no `items` key"),
        ];
        for (content, want) in cases {
            let (_dir, path) = file(content);
            let err = read_file(&path).unwrap_err();
            assert!(
                err.contains(want) && err.contains("MANAGEMENT_CLUSTERS_FILE"),
                "{want}: {err}"
            );
        }
        let big = vec![b' '; 4 * 1024 * 1024 + 1];
        let (_dir, path) = file(&big);
        let err = read_file(&path).unwrap_err();
        assert!(err.contains("MANAGEMENT_CLUSTERS_FILE"), "{err}");
        let err = read_file(Path::new("/nonexistent/management-clusters.json")).unwrap_err();
        assert!(err.contains("MANAGEMENT_CLUSTERS_FILE"), "{err}");
    }

    #[test]
    fn the_example_inventory_in_manifests_parses_to_valid_specs() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifests/management-clusters.json");
        let items = read_file(&path).unwrap();
        assert!(items.len() >= 2);
        assert!(items.iter().all(|mc| mc.spec.is_ok()), "{items:?}");
    }

    #[tokio::test]
    async fn the_file_inventory_finds_a_consumer_and_says_when_none_names_it() {
        let (_dir, path) = file(br#"[{"name": "mgmt-use1-a", "spec": {"region": "us-east1", "maestro_consumer": "mgmt-use1-a", "max_hosted_clusters": 200}}]"#);
        let inventory = FileInventory { path };
        assert_eq!(inventory.by_consumer("mgmt-use1-a").await.unwrap().len(), 1);
        assert!(
            inventory
                .by_consumer("mgmt-use1-z")
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(inventory.candidates("us-east1").await.unwrap().len(), 1);
    }

    #[test]
    fn a_quote_in_a_search_value_is_refused() {
        assert_eq!(
            spec_search("region", "us-east1").unwrap(),
            "spec.region='us-east1'"
        );
        assert!(spec_search("region", "x' or '1'='1").is_err());
    }

    /// A HyperFleet API serving `managementclusters` lists: `items` entities in pages, or an
    /// error status with a body; every query it received.
    struct FakeApi {
        items: Vec<serde_json::Value>,
        failure: Option<(u16, &'static str)>,
        queries: std::sync::Mutex<Vec<std::collections::HashMap<String, String>>>,
    }

    async fn serve(fake: FakeApi) -> (std::sync::Arc<FakeApi>, String) {
        use std::collections::HashMap;
        use std::sync::Arc;

        use axum::extract::{Query, State};
        use axum::http::StatusCode;
        use axum::routing::get;

        // As the binary does at start (`cli.rs`): reqwest is built without a default provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let fake = Arc::new(fake);
        let app = axum::Router::new()
            .route(
                MANAGEMENT_CLUSTERS_PATH,
                get(
                    |State(f): State<Arc<FakeApi>>, Query(q): Query<HashMap<String, String>>| async move {
                        f.queries.lock().unwrap().push(q.clone());
                        if let Some((status, body)) = f.failure {
                            return (StatusCode::from_u16(status).unwrap(), body.to_owned());
                        }
                        let page: usize = q["page"].parse().unwrap();
                        let size: usize = q["size"].parse().unwrap();
                        let items: Vec<_> = f.items.iter().skip((page - 1) * size).take(size).cloned().collect();
                        let body = serde_json::json!({"kind": "ManagementClusterList", "page": page,
                            "size": items.len(), "total": f.items.len(), "items": items});
                        (StatusCode::OK, body.to_string())
                    },
                ),
            )
            .with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (fake, format!("http://{addr}"))
    }

    fn entity(i: usize) -> serde_json::Value {
        serde_json::json!({"id": format!("019a6f1e-4b7c-7d2e-9f3a-{i:012x}"), "kind": "ManagementCluster",
            "name": format!("mgmt-use1-{i:03}"), "generation": 1,
            "spec": {"region": "us-east1", "maestro_consumer": format!("mgmt-use1-{i:03}"), "max_hosted_clusters": 200}})
    }

    #[tokio::test]
    async fn the_api_inventory_reads_every_page_of_the_region_search() {
        let (fake, url) = serve(FakeApi {
            items: (0..250).map(entity).collect(),
            failure: None,
            queries: std::sync::Mutex::new(Vec::new()),
        })
        .await;
        let inventory = ApiInventory {
            base_url: url,
            auth: Default::default(),
        };
        let found = inventory.candidates("us-east1").await.unwrap();
        assert_eq!(found.len(), 250);
        {
            let queries = fake.queries.lock().unwrap();
            assert_eq!(queries.len(), 3, "pages of {PAGE_SIZE}");
            assert!(
                queries
                    .iter()
                    .all(|q| q["search"] == "spec.region='us-east1'")
            );
        }
        inventory.by_consumer("mgmt-use1-007").await.unwrap();
        assert_eq!(
            fake.queries.lock().unwrap()[3]["search"],
            "spec.maestro_consumer='mgmt-use1-007'"
        );
    }

    #[tokio::test]
    async fn api_failures_are_named_with_the_status_and_the_servers_words() {
        let cases = [
            (
                401,
                r#"{"kind":"Error","code":"HYPERFLEET-AUT-001","reason":"Account authentication could not be verified"}"#,
            ),
            (404, "404 page not found"),
            (500, r#"{"kind":"Error","reason":"internal error"}"#),
            (
                400,
                r#"{"kind":"Error","code":"HYPERFLEET-VAL-000","reason":"Invalid search query"}"#,
            ),
        ];
        for (status, body) in cases {
            let (_fake, url) = serve(FakeApi {
                items: Vec::new(),
                failure: Some((status, body)),
                queries: std::sync::Mutex::new(Vec::new()),
            })
            .await;
            let inventory = ApiInventory {
                base_url: url,
                auth: Default::default(),
            };
            let err = inventory.candidates("us-east1").await.unwrap_err();
            assert!(
                err.contains(&format!("HTTP {status}")) && err.contains(MANAGEMENT_CLUSTERS_PATH),
                "{status}: {err}"
            );
        }
    }

    #[tokio::test]
    async fn an_answer_that_is_not_a_list_is_named() {
        let (_fake, url) = serve(FakeApi {
            items: Vec::new(),
            failure: Some((200, r#"{"kind": "ManagementCluster"}"#)),
            queries: std::sync::Mutex::new(Vec::new()),
        })
        .await;
        let err = ApiInventory {
            base_url: url,
            auth: Default::default(),
        }
        .candidates("us-east1")
        .await
        .unwrap_err();
        assert!(err.contains("no `items` key"), "{err}");
    }
}
