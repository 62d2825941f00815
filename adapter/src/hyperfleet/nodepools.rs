//! The NodePools the HyperFleet API lists for a cluster (`GET …/clusters/{id}/nodepools`): what
//! holds a cluster's deletion.

use serde_json::Value;

/// A NodePool the HyperFleet API still lists for the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePoolRef {
    pub id: String,
    pub name: String,
    /// Its own `deleted_time` when it is being deleted too.
    pub deleted_time: Option<String>,
}

impl std::fmt::Display for NodePoolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.name.is_empty() {
            "<unnamed>"
        } else {
            &self.name
        };
        write!(f, "{name} ({}", self.id)?;
        if let Some(t) = &self.deleted_time {
            write!(f, ", deleting since {t}")?;
        }
        write!(f, ")")
    }
}

/// The NodePools listed (one page) and how many the API counts in all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodePools {
    pub items: Vec<NodePoolRef>,
    pub total: usize,
}

impl NodePools {
    /// Reads a `NodePoolList` (`{items, page, size, total}`); `None` when it is not one.
    pub fn from_list(list: &Value) -> Option<NodePools> {
        let items = list.get("items")?.as_array()?;
        let items: Vec<NodePoolRef> = items
            .iter()
            .map(|np| NodePoolRef {
                id: np["id"].as_str().unwrap_or_default().to_owned(),
                name: np["name"].as_str().unwrap_or_default().to_owned(),
                deleted_time: np["deleted_time"].as_str().map(str::to_owned),
            })
            .collect();
        let total = list
            .get("total")
            .and_then(Value::as_u64)
            .and_then(|t| usize::try_from(t).ok())
            .unwrap_or(items.len())
            .max(items.len());
        Some(NodePools { items, total })
    }

    /// Whether any NodePool is listed.
    pub fn any(&self) -> bool {
        self.total > 0
    }

    /// `a (id), b (id, deleting since …)`, at most 10, then `and N more`.
    pub fn names(&self) -> String {
        const MAX: usize = 10;
        let mut names: Vec<String> = self
            .items
            .iter()
            .take(MAX)
            .map(ToString::to_string)
            .collect();
        if self.total > names.len() {
            names.push(format!("and {} more", self.total - names.len()));
        }
        names.join(", ")
    }
}
