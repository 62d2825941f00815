//! The two shapes of a NodePool spec and the names of the settings they spell differently
//! ([`crate::hyperfleet::spec::shapes`]).

use crate::hyperfleet::spec::Checker;
use crate::hyperfleet::spec::shapes::{ShapeKeys, Written, spec_names};

/// Which spelling a spec is written in (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// HyperFleet's nested camelCase NodePool spec: the primary input.
    HyperFleet,
    /// The flat snake_case keys of `example-nodepool.json`.
    Flat,
}

spec_names! {
    /// The spec field names, in one shape, of the settings both shapes have under different names.
    pub(super) struct Keys {
        /// HyperFleet's names.
        const HYPERFLEET_KEYS;
        /// The flat names.
        const FLAT_KEYS;
        pub machine_type = ("platform.gcp.machineType", "platform.gcp.machine_type"),
        pub zone = ("platform.gcp.zones", "platform.gcp.zone"),
        pub disk_size = ("platform.gcp.diskSize", "platform.gcp.boot_disk_size_gb"),
        pub disk_type = ("platform.gcp.diskType", "platform.gcp.boot_disk_type"),
        pub service_account_email = ("platform.gcp.serviceAccount.email", "platform.gcp.service_account_email"),
        pub provisioning_model = ("platform.gcp.provisioningModel", "platform.gcp.provisioning_model"),
        pub network_tags = ("platform.gcp.networkTags", "platform.gcp.network_tags"),
        pub resource_labels = ("platform.gcp.resourceLabels", "platform.gcp.resource_labels"),
        pub autoscaling_min = ("autoscaling.minNodes", "autoscaling.min"),
        pub autoscaling_max = ("autoscaling.maxNodes", "autoscaling.max"),
        pub upgrade_type = ("management.upgradeType", "management.upgrade_type"),
        pub auto_repair = ("management.autoRepair", "management.auto_repair"),
    }
}

/// The keys only the flat shape has, each with what HyperFleet's shape calls it; and the keys only
/// HyperFleet's shape has.
const SHAPE_KEYS: ShapeKeys = ShapeKeys {
    flat_only: &[
        (FLAT_KEYS.machine_type, HYPERFLEET_KEYS.machine_type),
        (FLAT_KEYS.zone, "platform.gcp.zones (a list of one zone)"),
        (FLAT_KEYS.disk_size, HYPERFLEET_KEYS.disk_size),
        (FLAT_KEYS.disk_type, HYPERFLEET_KEYS.disk_type),
        (
            FLAT_KEYS.service_account_email,
            HYPERFLEET_KEYS.service_account_email,
        ),
        (
            FLAT_KEYS.provisioning_model,
            HYPERFLEET_KEYS.provisioning_model,
        ),
        (FLAT_KEYS.network_tags, HYPERFLEET_KEYS.network_tags),
        (FLAT_KEYS.resource_labels, HYPERFLEET_KEYS.resource_labels),
        (
            FLAT_KEYS.autoscaling_min,
            "autoscaling.minNodes (with autoscaling.enabled true)",
        ),
        (FLAT_KEYS.autoscaling_max, HYPERFLEET_KEYS.autoscaling_max),
        (FLAT_KEYS.upgrade_type, HYPERFLEET_KEYS.upgrade_type),
        (FLAT_KEYS.auto_repair, HYPERFLEET_KEYS.auto_repair),
    ],
    hyperfleet_only: &[
        "clusterName",
        "nodeCount",
        "platform.gcp.machineType",
        "platform.gcp.instanceType",
        "platform.gcp.diskSize",
        "platform.gcp.diskType",
        "platform.gcp.zones",
        "platform.gcp.preemptible",
        "platform.gcp.accelerators",
        "platform.gcp.labels",
        "platform.gcp.taints",
        "platform.gcp.serviceAccount",
        "platform.gcp.provisioningModel",
        "platform.gcp.networkTags",
        "platform.gcp.resourceLabels",
        "autoscaling.enabled",
        "autoscaling.minNodes",
        "autoscaling.maxNodes",
        "autoscaling.targetCPUUtilization",
        "autoscaling.targetMemoryUtilization",
        "autoscaling.scaleDownDelay",
        "autoscaling.scaleUpDelay",
        "management.upgradeType",
        "management.autoRepair",
    ],
};

impl Shape {
    /// The names of the settings the shapes spell differently, in this one.
    pub(super) fn keys(self) -> &'static Keys {
        match self {
            Shape::HyperFleet => &HYPERFLEET_KEYS,
            Shape::Flat => &FLAT_KEYS,
        }
    }

    /// The spec field of the upgrade type (`management.upgradeType` /
    /// `management.upgrade_type`).
    pub fn upgrade_type_field(self) -> &'static str {
        self.keys().upgrade_type
    }
}

/// Which shape the spec is written in: the flat one when it has a key only that shape has,
/// else HyperFleet's. Keys of both shapes in one spec: one violation naming them and the renames,
/// `None`.
pub(super) fn shape(c: &mut Checker<'_>) -> Option<Shape> {
    match SHAPE_KEYS.shape_of(|key| c.set(key).is_some()) {
        Written::HyperFleet => Some(Shape::HyperFleet),
        Written::Flat => Some(Shape::Flat),
        Written::Mixed { flat, hyperfleet } => {
            let hyperfleet = hyperfleet.join(", ");
            let flat_keys = flat.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ");
            let renames: Vec<String> = flat.iter().map(|(k, h)| format!("{k} → {h}")).collect();
            let renames = renames.join("; ");
            c.violation("spec", format!("mixes HyperFleet's NodePool keys ({hyperfleet}) with the flat snake_case keys ({flat_keys}): write the whole spec in HyperFleet's shape ({renames})"));
            None
        }
    }
}
