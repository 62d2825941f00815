//! Resource id (= ManifestWork uid) derivation, protocol §3.6.

use uuid::Uuid;

/// `groupResource` part of the id input (`common.ManifestWorkGR.String()`).
pub const MANIFESTWORK_GROUP_RESOURCE: &str = "manifestworks.work.open-cluster-management.io";

/// UUIDv5 (SHA-1, namespace OID) of `"<source_id>-manifestworks.work.open-cluster-management.io-<consumer>-<name>"`.
/// The same id is used for Publish (`ce-resourceid`) and for the REST path.
pub fn resource_id(source_id: &str, consumer: &str, work_name: &str) -> Uuid {
    let input = format!("{source_id}-{MANIFESTWORK_GROUP_RESOURCE}-{consumer}-{work_name}");
    Uuid::new_v5(&Uuid::NAMESPACE_OID, input.as_bytes())
}

/// The placement resource id (inventory modes): the consumer is left out, so two pulses racing to
/// place the same cluster on different management clusters publish the same id and Maestro's
/// primary key refuses the second. UUIDv5 (namespace OID) of
/// `"<source_id>-manifestworks.work.open-cluster-management.io-<work name>"`, and after a failover
/// `"…-<work name>-after-<withdrawn bundle id>"`.
pub fn placement_resource_id(source_id: &str, work_name: &str, after: Option<&str>) -> Uuid {
    let mut input = format!("{source_id}-{MANIFESTWORK_GROUP_RESOURCE}-{work_name}");
    if let Some(withdrawn) = after {
        input.push_str("-after-");
        input.push_str(withdrawn);
    }
    Uuid::new_v5(&Uuid::NAMESPACE_OID, input.as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]
mod tests {
    use super::{placement_resource_id, resource_id};

    #[test]
    fn the_placement_id_leaves_the_consumer_out_and_a_failover_gets_a_new_one() {
        let name = "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
        let placed = placement_resource_id("hyperfleet-adapter", name, None);
        assert_eq!(
            placed,
            uuid::Uuid::new_v5(
                &uuid::Uuid::NAMESPACE_OID,
                format!("hyperfleet-adapter-manifestworks.work.open-cluster-management.io-{name}")
                    .as_bytes()
            )
        );
        assert_ne!(
            placed,
            resource_id("hyperfleet-adapter", "mgmt-use1-a", name)
        );
        let after = placement_resource_id("hyperfleet-adapter", name, Some(&placed.to_string()));
        assert_ne!(after, placed);
        // Deterministic: a retried pulse publishes the same id.
        assert_eq!(
            after,
            placement_resource_id("hyperfleet-adapter", name, Some(&placed.to_string()))
        );
    }

    #[test]
    fn ids_match_protocol_vectors() {
        let vectors = [
            (
                "mw-client-example",
                "7ff1a8f4-8811-49b4-8c19-9271bc51975e",
                "e44ec579-9646-549a-b679-db8d19d6da37",
                "55c61e54-a3f6-563d-9fec-b1fe297bdfdb",
            ),
            (
                "source1",
                "ns",
                "name",
                "93dcb140-df99-55ff-bfbe-0c3526cbb181",
            ),
            (
                "grpc",
                "cluster1",
                "work1",
                "ef6ac7b1-7cbe-5a16-908e-21c595227ca2",
            ),
            (
                "hyperfleet-adapter",
                "us-east-mgmt-01",
                "hostedcluster-abc123",
                "471b5bed-be6e-5516-8c05-3f1edc10b0ad",
            ),
        ];
        for (source, consumer, name, want) in vectors {
            assert_eq!(
                resource_id(source, consumer, name).to_string(),
                want,
                "{source}/{consumer}/{name}"
            );
        }
    }
}
