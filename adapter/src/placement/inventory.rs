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
    pub token_file: Option<PathBuf>,
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
                self.token_file.as_deref(),
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
}
