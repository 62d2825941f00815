//! What the server knows about each resource: kind names, merge keys, which have a status subresource.

use super::jobs;
use super::pods;
use super::strategic_merge::MergeKeys;

/// Resource-specific behaviour on writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    Job,
    Pod,
    /// `events.k8s.io/v1` Events: the create's decoding and validation (`super::events`).
    Event,
    Generic,
}

/// The description of one resource (group + plural).
#[derive(Debug, Clone)]
pub struct ResourceKind {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub kind: String,
    pub namespaced: bool,
    pub has_status: bool,
    pub merge_keys: MergeKeys,
    pub behaviour: Behaviour,
}

/// `(group, resource, kind, namespaced)` of the resources the test bed knows by name.
const KNOWN: &[(&str, &str, &str, bool)] = &[
    ("batch", "jobs", "Job", true),
    ("", "pods", "Pod", true),
    ("", "nodes", "Node", false),
    ("", "namespaces", "Namespace", false),
    ("", "configmaps", "ConfigMap", true),
    ("", "secrets", "Secret", true),
    ("", "serviceaccounts", "ServiceAccount", true),
    ("", "events", "Event", true),
    ("events.k8s.io", "events", "Event", true),
    ("coordination.k8s.io", "leases", "Lease", true),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        false,
    ),
    (
        "work.open-cluster-management.io",
        "manifestworks",
        "ManifestWork",
        true,
    ),
    (
        "cluster.open-cluster-management.io",
        "managedclusters",
        "ManagedCluster",
        false,
    ),
];

const WITHOUT_STATUS: &[&str] = &[
    "leases",
    "configmaps",
    "secrets",
    "events",
    "serviceaccounts",
];

impl ResourceKind {
    /// Describes `resource` in `group`; unknown resources get a kind guessed from the plural.
    pub fn lookup(group: &str, version: &str, resource: &str) -> Self {
        let known = KNOWN
            .iter()
            .find(|(g, r, _, _)| *g == group && *r == resource);
        let (kind, namespaced) = match known {
            Some((_, _, kind, namespaced)) => ((*kind).to_owned(), *namespaced),
            None => (guess_kind(resource), true),
        };
        let behaviour = match (group, resource) {
            ("batch", "jobs") => Behaviour::Job,
            ("", "pods") => Behaviour::Pod,
            ("events.k8s.io", "events") => Behaviour::Event,
            _ => Behaviour::Generic,
        };
        let merge_keys = match behaviour {
            Behaviour::Job => jobs::MERGE_KEYS,
            Behaviour::Pod => pods::MERGE_KEYS,
            Behaviour::Event | Behaviour::Generic => MergeKeys::NONE,
        };
        ResourceKind {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
            kind,
            namespaced,
            has_status: !WITHOUT_STATUS.contains(&resource),
            merge_keys,
            behaviour,
        }
    }

    /// `batch/v1` or `v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the API server itself serves the resource (the core group, a group without a
    /// dot such as `batch`, or one under `k8s.io`), as opposed to a custom resource of a CRD
    /// (whose group must have a dot and may not be under `k8s.io` without approval).
    pub fn is_builtin(&self) -> bool {
        !self.group.contains('.') || self.group.ends_with(".k8s.io")
    }

    /// Whether the API server keeps a `metadata.generation` (1 on create, bumped by a spec
    /// change): custom resources, and the built-ins whose strategy does (Jobs, CronJobs, Pods,
    /// the `apps` workloads). Leases, Nodes, Namespaces, ConfigMaps, Secrets,
    /// CertificateSigningRequests and Events have none (measured on v1.36).
    pub fn tracks_generation(&self) -> bool {
        !self.is_builtin()
            || self.group == "apps"
            || matches!(
                (self.group.as_str(), self.resource.as_str()),
                ("batch", "jobs" | "cronjobs") | ("", "pods")
            )
    }

    /// `Job.batch`, as 422 messages name the kind.
    pub fn kind_group(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }
}

/// The plural resource for a kind: the known table first, then English rules.
pub fn resource_for_kind(group: &str, kind: &str) -> String {
    if let Some((_, resource, _, _)) = KNOWN.iter().find(|(g, _, k, _)| *g == group && *k == kind) {
        return (*resource).to_owned();
    }
    let lower = kind.to_lowercase();
    if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

fn guess_kind(resource: &str) -> String {
    let singular = if let Some(stem) = resource.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = resource.strip_suffix("ses") {
        format!("{stem}s")
    } else {
        resource.strip_suffix('s').unwrap_or(resource).to_owned()
    };
    let mut chars = singular.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_groups_are_told_from_custom_resources() {
        assert!(ResourceKind::lookup("", "v1", "pods").is_builtin());
        assert!(ResourceKind::lookup("batch", "v1", "jobs").is_builtin());
        assert!(ResourceKind::lookup("coordination.k8s.io", "v1", "leases").is_builtin());
        assert!(
            !ResourceKind::lookup("work.open-cluster-management.io", "v1", "manifestworks")
                .is_builtin()
        );
    }

    #[test]
    fn kinds_map_to_plural_resources() {
        assert_eq!(
            resource_for_kind("work.open-cluster-management.io", "ManifestWork"),
            "manifestworks"
        );
        assert_eq!(resource_for_kind("example.com", "Policy"), "policies");
        assert_eq!(resource_for_kind("example.com", "Ingress"), "ingresses");
    }

    #[test]
    fn unknown_resources_get_a_guessed_kind() {
        let kind = ResourceKind::lookup("example.com", "v1", "widgets");
        assert_eq!(kind.kind, "Widget");
        assert_eq!(kind.kind_group(), "Widget.example.com");
        assert!(
            ResourceKind::lookup("", "v1", "nodes")
                .namespaced
                .eq(&false)
        );
    }

    #[test]
    fn certificate_signing_requests_are_cluster_scoped_with_their_kind() {
        let kind = ResourceKind::lookup("certificates.k8s.io", "v1", "certificatesigningrequests");
        assert!(!kind.namespaced);
        assert_eq!(kind.kind, "CertificateSigningRequest");
        assert_eq!(kind.api_version(), "certificates.k8s.io/v1");
        assert_eq!(
            resource_for_kind("certificates.k8s.io", "CertificateSigningRequest"),
            "certificatesigningrequests"
        );
    }
}
