//! Production-shaped HyperFleet ids and names for tests, benchmarks and `local-pulse`.
//!
//! Cluster ids are UUIDv7: 36 lowercase characters, version nibble 7, variant 8–b
//! (`hyperfleet-framework.md` §7.1). Cluster names are `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
//! 3–53 characters.

/// The cluster id the tests use (UUIDv7).
pub const CLUSTER_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

/// The longest cluster name the HyperFleet API accepts (53 characters).
pub const LONGEST_CLUSTER_NAME: &str = "prod-eu-1-payments-ledger-primary-region-west-cell-07";

/// The NodePool id the tests use (UUIDv7), a NodePool of [`CLUSTER_ID`].
pub const NODEPOOL_ID: &str = "019a6f2b-8d13-7a64-b5c2-3e9f0d7a1c58";

/// The longest NodePool name the HyperFleet API accepts (15 characters).
pub const LONGEST_NODEPOOL_NAME: &str = "workers-euw2-a1";

/// The `n`-th of a family of distinct UUIDv7 cluster ids (same timestamp, `n` in the random bits).
pub fn cluster_id(n: u64) -> String {
    format!("019a6f1e-4b7c-7d2e-9f3a-{:012x}", n & 0xffff_ffff_ffff)
}

/// Whether `id` has the UUIDv7 shape: 8-4-4-4-12 lowercase hex, version 7, variant 8–b.
pub fn is_uuid_v7(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    lengths == [8, 4, 4, 4, 12]
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        && groups[2].starts_with('7')
        && groups[3].starts_with(['8', '9', 'a', 'b'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_are_uuid_v7() {
        assert!(is_uuid_v7(CLUSTER_ID));
        for n in [0, 1, 0xffff_ffff_ffff] {
            assert!(is_uuid_v7(&cluster_id(n)), "{}", cluster_id(n));
        }
        assert_ne!(cluster_id(1), cluster_id(2));
    }

    #[test]
    fn the_shape_check_rejects_other_ids() {
        for bad in [
            "2a9f3c7d",
            "2a9f3c7d-8e1b-4c5d-9f00-123456789abc", // version 4
            "019a6f1e-4b7c-7d2e-7f3a-1c2d3e4f5a6b", // variant
            "019A6F1E-4B7C-7D2E-9F3A-1C2D3E4F5A6B", // upper case
            "019a6f1e4b7c-7d2e-9f3a-1c2d3e4f5a6b-",
        ] {
            assert!(!is_uuid_v7(bad), "{bad}");
        }
    }

    #[test]
    fn the_longest_name_is_a_valid_cluster_name_of_53() {
        let name = LONGEST_CLUSTER_NAME;
        assert_eq!(name.len(), 53);
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        );
        assert!(!name.starts_with('-') && !name.ends_with('-'));
    }
}
