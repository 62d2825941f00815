//! NodePool CRD conformance (issue 11: "A NodePool built by the adapter is admitted by the real
//! NodePool CRD"). Every NodePool the adapter builds, and the ManifestWork carrying it, is checked
//! against the real CRDs (`shared/fixtures/crds/`, beside the repository) with the OpenAPI + CEL
//! validator of `openapi/`; the adapter's validation of the HyperFleet spec is compared with what
//! the CRD accepts, both ways; the CRD's transition rules are compared with the adapter's list of
//! immutable fields. Negative tests show the validator rejects broken NodePools, so a passing run
//! means something.
//!
//! To compare validation with the CRD on values the adapter refuses (and so never builds), the
//! test maps a raw HyperFleet spec to a NodePool field by field without validating anything
//! ([`unvalidated_node_pool`]); on every spec the adapter accepts, that mapping must equal the
//! adapter's own NodePool, so it says what the adapter would send.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::LazyLock;

use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec};
use hypershift_adapter::hyperfleet::nodepool::{ControlPlane, DEFAULT_MACHINE_TYPE, NodePoolSpec};
use hypershift_adapter::hyperfleet::spec::SpecViolation;
use hypershift_adapter::hyperfleet::{CLUSTER_ID_LABEL, NODEPOOL_ID_LABEL};
use hypershift_adapter::hypershift::hostedcluster;
use hypershift_adapter::hypershift::nodepool::immutable::immutable_changes;
use hypershift_adapter::hypershift::nodepool::{self as np, Placement};
use hypershift_adapter::pulse::nodepool::manifest_work;
use serde_json::{Map, Value, json};
use testbed::ids::{CLUSTER_ID, LONGEST_CLUSTER_NAME};
use testbed::openapi::{Outcome, crd_schema, validate};

/// The team's CRD fixtures (`shared/fixtures/crds` beside the repository); `None` on a clone
/// without the team folder, where every test here skips.
static CRDS: LazyLock<Option<PathBuf>> =
    LazyLock::new(|| job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/crds"));
const NODE_POOL_CRD: &str = "nodepools.hypershift.openshift.io-TechPreviewNoUpgrade.yaml";
const MANIFEST_WORK_CRD: &str = "manifestworks.work.open-cluster-management.io.yaml";

static NODE_POOL_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let dir = CRDS.as_ref().expect("each test checks CRDS first");
    crd_schema(&dir.join(NODE_POOL_CRD), "v1beta1")
});
static MANIFEST_WORK_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let dir = CRDS.as_ref().expect("each test checks CRDS first");
    crd_schema(&dir.join(MANIFEST_WORK_CRD), "v1")
});

/// The cluster the NodePools join (region `europe-west2`, PSC subnet `hcp-psc-subnet`, 4.17.0).
const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
/// A HyperFleet NodePool id (UUIDv7, 36 characters).
const NODEPOOL_ID: &str = "01a01e83-2b42-79c4-a5e8-d17b3a6f0c41";
/// The longest HyperFleet NodePool name (15 characters).
const LONGEST_NAME: &str = "workers-europe2";
const RELEASE: &str = "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64";
/// The consumer (management cluster) the works go to.
const CONSUMER: &str = "us-east-mgmt-01";

/// The HostedCluster the control-plane adapter builds for the test cluster named `name` (its id
/// when `None`): what a NodePool joins.
fn hosted_cluster(name: Option<&str>) -> Value {
    let input = ClusterInput::from_json(CLUSTER).unwrap();
    let spec = ClusterSpec::validate(CLUSTER_ID, name, &input.spec).unwrap();
    hostedcluster::hosted_cluster(&spec)
}

/// The HostedClusters NodePools join here: named, with the longest name, named by its id.
static HOSTED_CLUSTERS: LazyLock<[Value; 3]> = LazyLock::new(|| {
    [
        hosted_cluster(Some("prod-eu-1")),
        hosted_cluster(Some(LONGEST_CLUSTER_NAME)),
        hosted_cluster(None),
    ]
});

/// Where a NodePool joining `hc` goes, read from the HostedCluster as the pulse reads it from the
/// control plane's work.
fn placement(hc: &Value) -> Placement<'_> {
    Placement {
        namespace: hc["metadata"]["namespace"].as_str().unwrap(),
        cluster_name: hc["metadata"]["name"].as_str().unwrap(),
        default_subnet: hc
            .pointer("/spec/platform/gcp/networkConfig/privateServiceConnectSubnet/name")
            .and_then(Value::as_str),
        region: hc
            .pointer("/spec/platform/gcp/region")
            .and_then(Value::as_str),
        release_image: hc.pointer("/spec/release/image").and_then(Value::as_str),
    }
}

/// What the pulse checks a NodePool against before sending it (the HostedCluster's facts).
fn control_plane(hc: &Value) -> ControlPlane {
    let text = |p: &str| hc.pointer(p).and_then(Value::as_str).map(str::to_owned);
    ControlPlane {
        name: text("/metadata/name").unwrap(),
        platform: text("/spec/platform/type").unwrap(),
        region: text("/spec/platform/gcp/region"),
        psc_subnet: text("/spec/platform/gcp/networkConfig/privateServiceConnectSubnet/name"),
        release_image: text("/spec/release/image"),
        version: "4.17.0".to_owned(),
    }
}

/// A raw HyperFleet NodePool spec: a minimal GCP one, edited.
fn raw(edit: impl FnOnce(&mut Map<String, Value>)) -> Map<String, Value> {
    let Value::Object(mut spec) = json!({
        "platform": {"type": "gcp", "gcp": {"machine_type": "n2-standard-4", "zone": "europe-west2-a"}},
        "release": {"image": RELEASE},
        "replicas": 2,
    }) else {
        unreachable!()
    };
    edit(&mut spec);
    spec
}

/// Sets `value` at the dotted `path` of a raw spec, creating objects on the way.
fn set(spec: &mut Map<String, Value>, path: &str, value: Value) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().unwrap();
    let mut object = spec;
    for part in parts {
        object = object
            .entry(part)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .unwrap();
    }
    object.insert(last.to_owned(), value);
}

/// One NodePool the adapter builds: its input and the HostedCluster it joins.
struct Variant {
    what: &'static str,
    nodepool_id: String,
    cluster_id: String,
    name: String,
    raw: Map<String, Value>,
    hc: &'static Value,
}

impl Variant {
    fn new(what: &'static str, edit: impl FnOnce(&mut Map<String, Value>)) -> Self {
        Variant {
            what,
            nodepool_id: NODEPOOL_ID.to_owned(),
            cluster_id: CLUSTER_ID.to_owned(),
            name: "workers".to_owned(),
            raw: raw(edit),
            hc: &HOSTED_CLUSTERS[0],
        }
    }

    /// A variant in HyperFleet's shape: `spec` is the whole raw spec.
    fn hyperfleet(what: &'static str, spec: Value) -> Self {
        let Value::Object(raw) = spec else {
            unreachable!()
        };
        Variant {
            raw,
            ..Variant::new(what, |_| {})
        }
    }

    fn spec(&self) -> NodePoolSpec {
        NodePoolSpec::validate(
            &self.nodepool_id,
            &self.cluster_id,
            Some(&self.name),
            &self.raw,
        )
        .unwrap_or_else(|v| panic!("{}: the adapter refuses the variant: {v:#?}", self.what))
    }

    fn node_pool(&self) -> Value {
        np::node_pool(&self.spec(), &placement(self.hc))
    }

    fn manifest_work(&self) -> Value {
        manifest_work(&self.spec(), &placement(self.hc), CONSUMER, Some(7))
    }
}

/// `n` characters: `head`, then `fill` repeated, then `tail`.
fn sized(head: &str, fill: char, tail: &str, n: usize) -> String {
    let fill_len = n - head.chars().count() - tail.chars().count();
    format!("{head}{}{tail}", fill.to_string().repeat(fill_len))
}

/// The NodePools we build: every optional branch of the builder, the bounds of every field, the
/// longest names.
fn variants() -> Vec<Variant> {
    let longest_email = format!(
        "{}@{}.iam.gserviceaccount.com",
        sized("a", 'b', "1", 30),
        sized("p", 'q', "9", 30)
    );
    vec![
        Variant::new(
            "GCP minimal: subnet from the HostedCluster's PSC subnet",
            |_| {},
        ),
        Variant::new("GCP with every optional field", |s| {
            let gcp = s["platform"]["gcp"].as_object_mut().unwrap();
            gcp.insert("subnet".into(), json!("workers-subnet"));
            gcp.insert(
                "image".into(),
                json!("projects/rhcos-cloud/global/images/family/rhcos-417"),
            );
            gcp.insert("boot_disk_size_gb".into(), json!(128));
            gcp.insert("boot_disk_type".into(), json!("pd-ssd"));
            gcp.insert(
                "service_account_email".into(),
                json!("hc-nodepool@my-project-123.iam.gserviceaccount.com"),
            );
            gcp.insert("provisioning_model".into(), json!("Spot"));
            gcp.insert("network_tags".into(), json!(["workers", "egress"]));
            gcp.insert(
                "resource_labels".into(),
                json!({"team": "platform", "cost-center": "", "env_1": "prod"}),
            );
            s.remove("replicas");
            s.insert("autoscaling".into(), json!({"min": 2, "max": 6}));
            s.insert("arch".into(), json!("arm64"));
            s.insert(
                "management".into(),
                json!({"upgrade_type": "InPlace", "auto_repair": true}),
            );
        }),
        Variant::new("GCP at every upper bound", |s| {
            let tags: Vec<String> = (0..64)
                .map(|i| sized(&format!("t{i}-"), 'x', "z", 63))
                .collect();
            let labels: Map<String, Value> = (0..60)
                .map(|i| {
                    (
                        sized(&format!("k{i}_"), 'x', "9", 63),
                        json!(sized("v", '-', "0", 63)),
                    )
                })
                .collect();
            let gcp = s["platform"]["gcp"].as_object_mut().unwrap();
            gcp.insert("machine_type".into(), json!(sized("n2-", 'a', "-8", 255)));
            gcp.insert("zone".into(), json!(sized("europe-west2-", 'z', "-b", 63)));
            gcp.insert("subnet".into(), json!(sized("s", '-', "1", 63)));
            gcp.insert(
                "image".into(),
                json!(sized("projects/x/global/images/", 'i', "", 2048)),
            );
            gcp.insert("boot_disk_size_gb".into(), json!(65536));
            gcp.insert("boot_disk_type".into(), json!("pd-standard"));
            gcp.insert("service_account_email".into(), json!(longest_email));
            gcp.insert("provisioning_model".into(), json!("Preemptible"));
            gcp.insert("network_tags".into(), json!(tags));
            gcp.insert("resource_labels".into(), Value::Object(labels));
            s.insert("replicas".into(), json!(i32::MAX));
            s.insert(
                "release".into(),
                json!({"image": sized("quay.io/openshift-release-dev/ocp-release:4.17.0-", 'x', "", 253)}),
            );
            s.insert(
                "management".into(),
                json!({"upgrade_type": "Replace", "auto_repair": false}),
            );
        }),
        Variant::new("GCP at every lower bound", |s| {
            let gcp = s["platform"]["gcp"].as_object_mut().unwrap();
            gcp.insert("machine_type".into(), json!("e"));
            gcp.insert("subnet".into(), json!("s"));
            gcp.insert("image".into(), json!("i"));
            gcp.insert("boot_disk_size_gb".into(), json!(20));
            gcp.insert("boot_disk_type".into(), json!("pd-balanced"));
            gcp.insert(
                "service_account_email".into(),
                json!("abcdef@pqrstu.iam.gserviceaccount.com"),
            );
            gcp.insert("provisioning_model".into(), json!("Standard"));
            gcp.insert("network_tags".into(), json!(["t"]));
            gcp.insert("resource_labels".into(), json!({"k": ""}));
            s.remove("replicas");
            s.insert("autoscaling".into(), json!({"min": 1, "max": 1}));
            s.insert("release".into(), json!({"image": "a:"}));
        }),
        Variant::new("GCP, replicas 0", |s| {
            s.insert("replicas".into(), json!(0));
        }),
        Variant::new("platform None", |s| {
            s.insert("platform".into(), json!({"type": "none"}));
            s.insert("replicas".into(), json!(3));
        }),
        Variant::new("platform None, autoscaling, arm64, Replace", |s| {
            s.insert("platform".into(), json!({"type": "None"}));
            s.remove("replicas");
            s.insert("autoscaling".into(), json!({"min": 1, "max": 2147483647}));
            s.insert("arch".into(), json!("arm64"));
            s.insert(
                "management".into(),
                json!({"upgrade_type": "Replace", "auto_repair": false}),
            );
        }),
        Variant {
            name: LONGEST_NAME.to_owned(),
            hc: &HOSTED_CLUSTERS[1],
            ..Variant::new(
                "longest names: 15-character NodePool, 53-character cluster, UUIDv7 ids",
                |_| {},
            )
        },
        Variant {
            name: "123".to_owned(),
            hc: &HOSTED_CLUSTERS[2],
            ..Variant::new(
                "shortest digit-first name, HostedCluster named by its id",
                |_| {},
            )
        },
        Variant {
            name: LONGEST_NAME.to_owned(),
            nodepool_id: sized("p", '0', "z", 63),
            cluster_id: sized("c", '1', "y", 47),
            ..Variant::new("the longest ids the validation allows (63 and 47)", |s| {
                s.insert("platform".into(), json!({"type": "none"}));
            })
        },
        Variant::hyperfleet(
            "HyperFleet shape: every key of its GCP model the adapter maps",
            json!({
                "clusterName": "prod-eu-1",
                "platform": {"type": "gcp", "gcp": {
                    "machineType": "n2-standard-8",
                    "diskSize": 100,
                    "diskType": "pd-standard",
                    "zones": ["europe-west2-c"],
                    "preemptible": true,
                    "accelerators": [],
                    "labels": {"team": "platform", "managedby": "hyperfleet", "node.example.com/pool": ""},
                    "taints": [
                        {"key": "dedicated", "value": "batch", "effect": "NoSchedule"},
                        {"key": "example.com/spot", "effect": "NoExecute"},
                        {"key": "x", "value": "", "effect": "PreferNoSchedule"},
                    ],
                    "subnet": "workers-subnet",
                    "serviceAccount": {"email": "hc-nodepool@my-project-123.iam.gserviceaccount.com"},
                    "networkTags": ["workers"],
                    "resourceLabels": {"team": "platform"},
                }},
                "nodeCount": 3,
                "autoscaling": {"enabled": true, "minNodes": 1, "maxNodes": 10},
                "release": {"image": RELEASE},
                "management": {"upgradeType": "Replace", "autoRepair": true},
            }),
        ),
        Variant::hyperfleet(
            "HyperFleet shape: only what its model requires; the rest defaults",
            json!({"platform": {"type": "gcp", "gcp": {}}, "nodeCount": 0}),
        ),
        Variant::hyperfleet(
            "HyperFleet shape at the taint and label bounds",
            json!({
                "platform": {"type": "gcp", "gcp": {
                    "instanceType": "n1-standard-8",
                    "labels": {
                        format!("{}/{}", sized("a", 'b', ".c", 253 - 64), sized("n", '_', "9", 63)): sized("v", '.', "0", 63),
                    },
                    "taints": (0..50).map(|i| json!({
                        "key": format!("{}/{}", sized(&format!("p{i}"), 'q', ".io", 253 - 64), sized("k", '-', "z", 63)),
                        "value": sized("v", '_', "1", 253),
                        "effect": "NoExecute",
                    })).collect::<Vec<Value>>(),
                }},
                "replicas": 2147483647,
                "autoscaling": {"enabled": false, "minNodes": 1, "maxNodes": 3},
            }),
        ),
    ]
}

#[track_caller]
fn assert_conforms(what: &str, outcome: &Outcome) {
    assert!(
        outcome.errors.is_empty(),
        "{what}: rejected by the CRD:\n{:#?}",
        outcome.errors
    );
    assert!(
        outcome.unevaluated.is_empty(),
        "{what}: CEL rules on generated fields that the test cannot evaluate; add them to openapi/cel.rs:\n{:#?}",
        outcome.unevaluated
    );
}

#[track_caller]
fn assert_rejected(outcome: &Outcome, path: &str, needle: &str) {
    assert!(
        outcome.has_error(path, needle),
        "expected an error at {path} containing {needle:?}, got:\n{:#?}",
        outcome.errors
    );
}

/// `(JSON pointer, schema path)` of every leaf of `value` (`spec.platform.gcp.networkTags[]`).
fn leaves(value: &Value) -> Vec<(String, String)> {
    fn walk(value: &Value, pointer: &str, path: &str, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let escaped = k.replace('~', "~0").replace('/', "~1");
                    walk(v, &format!("{pointer}/{escaped}"), &join(path, k), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, &format!("{pointer}/{i}"), &format!("{path}[]"), out);
                }
            }
            _ => out.push((pointer.to_owned(), path.to_owned())),
        }
    }
    let mut out = Vec::new();
    walk(value, "", "", &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Whether schema path `path` is `ancestor` or under it.
fn under(path: &str, ancestor: &str) -> bool {
    path.strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

#[test]
fn every_node_pool_the_adapter_builds_conforms_to_the_crd() {
    if CRDS.is_none() {
        return;
    }
    let mut sent = BTreeSet::new();
    for v in variants() {
        let object = v.node_pool();
        assert_conforms(v.what, &validate(&NODE_POOL_SCHEMA, &object));
        // What the pulse checks before sending: the variants are NodePools it would send.
        let violations = v.spec().check_against(&control_plane(v.hc));
        assert!(violations.is_empty(), "{}: {violations:#?}", v.what);
        sent.extend(leaves(&object).into_iter().map(|(_, path)| path));
    }
    // The variants reach every optional branch of the builder.
    for path in [
        "spec.platform.gcp.subnet",
        "spec.platform.gcp.image",
        "spec.platform.gcp.bootDisk.diskSizeGB",
        "spec.platform.gcp.bootDisk.diskType",
        "spec.platform.gcp.serviceAccount.email",
        "spec.platform.gcp.provisioningModel",
        "spec.platform.gcp.networkTags[]",
        "spec.platform.gcp.resourceLabels[].key",
        "spec.platform.gcp.resourceLabels[].value",
        "spec.replicas",
        "spec.autoScaling.min",
        "spec.autoScaling.max",
        "spec.management.autoRepair",
        "spec.taints[].key",
        "spec.taints[].value",
        "spec.taints[].effect",
    ] {
        assert!(sent.contains(path), "no variant sends {path}");
    }
    assert!(
        sent.iter().any(|p| p.starts_with("spec.nodeLabels.")),
        "no variant sends spec.nodeLabels"
    );
}

#[test]
fn the_variants_are_what_they_say() {
    let all = variants();
    let minimal = all[0].node_pool();
    assert_eq!(
        minimal["spec"]["platform"]["gcp"]["subnet"], "hcp-psc-subnet",
        "the HostedCluster's PSC subnet"
    );
    assert_eq!(
        all[0].hc["spec"]["platform"]["gcp"]["networkConfig"]["privateServiceConnectSubnet"]["name"],
        "hcp-psc-subnet"
    );
    let full = all[1].node_pool();
    assert_eq!(full["spec"]["platform"]["gcp"]["subnet"], "workers-subnet");
    assert_eq!(full["spec"]["arch"], "arm64");
    assert!(full["spec"].get("replicas").is_none());
    let upper = all[2].node_pool();
    assert_eq!(
        upper["spec"]["platform"]["gcp"]["networkTags"]
            .as_array()
            .unwrap()
            .len(),
        64
    );
    assert_eq!(
        upper["spec"]["platform"]["gcp"]["resourceLabels"]
            .as_array()
            .unwrap()
            .len(),
        60
    );
    assert_eq!(all[4].node_pool()["spec"]["replicas"], 0);
    assert_eq!(
        all[5].node_pool()["spec"]["platform"],
        json!({"type": "None"})
    );
    let longest = all[7].node_pool();
    assert_eq!(longest["spec"]["clusterName"].as_str().unwrap().len(), 53);
    assert_eq!(
        longest["metadata"]["name"].as_str().unwrap().len(),
        15 + 1 + 36
    );
    assert_eq!(all[8].node_pool()["spec"]["clusterName"], CLUSTER_ID);
    let longest_ids = all[9].node_pool();
    assert_eq!(longest_ids["metadata"]["name"].as_str().unwrap().len(), 63);
    assert_eq!(
        longest_ids["metadata"]["labels"][NODEPOOL_ID_LABEL]
            .as_str()
            .unwrap()
            .len(),
        63
    );
}

#[test]
fn every_node_pool_manifest_work_conforms_to_the_crd() {
    if CRDS.is_none() {
        return;
    }
    for v in variants() {
        let work = v.manifest_work();
        assert_conforms(v.what, &validate(&MANIFEST_WORK_SCHEMA, &work));
        // Its only manifest is the NodePool, which must conform too, and the work names it.
        let manifests = work["spec"]["workload"]["manifests"].as_array().unwrap();
        assert_eq!(manifests, &[v.node_pool()], "{}", v.what);
        assert_conforms(v.what, &validate(&NODE_POOL_SCHEMA, &manifests[0]));
        let id = &work["spec"]["manifestConfigs"][0]["resourceIdentifier"];
        assert_eq!(
            id,
            &json!({
                "group": "hypershift.openshift.io",
                "resource": "nodepools",
                "namespace": manifests[0]["metadata"]["namespace"],
                "name": manifests[0]["metadata"]["name"],
            }),
            "{}",
            v.what
        );
        assert_eq!(
            work["metadata"]["labels"][NODEPOOL_ID_LABEL], v.nodepool_id,
            "{}",
            v.what
        );
    }
}

/// The full variant's NodePool with the value at `pointer` replaced (`None` removes it).
fn broken(pointer: &str, new: Option<Value>) -> Outcome {
    let mut object = variants().remove(1).node_pool();
    edit(&mut object, pointer, new);
    validate(&NODE_POOL_SCHEMA, &object)
}

fn edit(object: &mut Value, pointer: &str, new: Option<Value>) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let parent = object
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    match (parent, new) {
        (Value::Object(map), Some(v)) => {
            map.insert(last.to_owned(), v);
        }
        (Value::Object(map), None) => {
            map.remove(last);
        }
        (Value::Array(items), Some(v)) => items[last.parse::<usize>().unwrap()] = v,
        (Value::Array(items), None) => {
            items.remove(last.parse::<usize>().unwrap());
        }
        _ => panic!("{pointer} is not in an object or array"),
    }
}

#[test]
fn the_validator_rejects_broken_node_pools() {
    if CRDS.is_none() {
        return;
    }
    assert_rejected(
        &broken("/spec/clusterName", None),
        ".spec.clusterName",
        "Required value",
    );
    assert_rejected(
        &broken("/spec/management/upgradeType", None),
        ".spec.management.upgradeType",
        "Required value",
    );
    assert_rejected(
        &broken("/spec/replicas", Some(json!(3))),
        ".spec",
        "Both replicas or autoScaling should not be set",
    );
    assert_rejected(
        &broken("/spec/autoScaling/min", Some(json!(0))),
        ".spec",
        "Scale-from-zero (autoScaling.min=0) is currently only supported",
    );
    assert_rejected(
        &broken("/spec/autoScaling", Some(json!({"min": 4, "max": 3}))),
        ".spec.autoScaling",
        "max must be equal or greater than min",
    );
    assert_rejected(
        &broken("/spec/arch", Some(json!("s390x"))),
        ".spec",
        "s390x is only supported on KubeVirt platform",
    );
    assert_rejected(
        &broken("/spec/platform", Some(json!({"type": "OpenStack"}))),
        ".spec",
        "Setting Arch to arm64 is only supported for AWS, Azure, Agent, GCP and None",
    );
    let empty_release = broken("/spec/release/image", Some(json!("")));
    assert_rejected(&empty_release, ".spec.release.image", "minLength 1");
    assert_rejected(
        &empty_release,
        ".spec.release.image",
        "Image must start with a word character",
    );
    assert_rejected(
        &broken("/spec/platform/gcp/image", Some(json!(""))),
        ".spec.platform.gcp.image",
        "minLength 1",
    );
    assert_rejected(
        &broken("/spec/platform/gcp/networkTags", Some(json!([]))),
        ".spec.platform.gcp.networkTags",
        "minItems 1",
    );
    assert_rejected(
        &broken(
            "/spec/platform/gcp/resourceLabels/0",
            Some(json!({"key": "env_1", "value": "other"})),
        ),
        ".spec.platform.gcp.resourceLabels",
        "duplicate keys",
    );
    assert_rejected(
        &broken("/spec/platform/gcp/bootDisk/encryption", Some(json!("x"))),
        ".spec.platform.gcp.bootDisk.encryption",
        "unknown field",
    );
}

/// A GCP NodePool without a subnet of its own on a HostedCluster without a PSC subnet would be
/// refused by the CRD (`subnet` is required): the pulse's check against the HostedCluster refuses
/// it first, naming `platform.gcp.subnet`.
#[test]
fn a_subnet_is_always_sent_or_the_pulse_refuses() {
    if CRDS.is_none() {
        return;
    }
    let v = Variant::new("minimal", |_| {});
    let hc = v.hc;
    let alone = Placement {
        default_subnet: None,
        ..placement(hc)
    };
    let object = np::node_pool(&v.spec(), &alone);
    assert_rejected(
        &validate(&NODE_POOL_SCHEMA, &object),
        ".spec.platform.gcp.subnet",
        "Required value",
    );
    let facts = ControlPlane {
        psc_subnet: None,
        ..control_plane(hc)
    };
    let fields: Vec<&str> = v
        .spec()
        .check_against(&facts)
        .iter()
        .map(|v| v.field)
        .collect();
    assert_eq!(fields, ["platform.gcp.subnet"]);
}

// ---- The adapter's validation against the CRD, both ways -------------------------------------

/// One raw HyperFleet NodePool with its identity and the HostedCluster it joins.
#[derive(Debug, Clone)]
struct Case {
    raw: Map<String, Value>,
    name: Option<String>,
    nodepool_id: String,
    cluster_id: String,
    /// Index into [`HOSTED_CLUSTERS`].
    hc: usize,
}

impl Case {
    fn of(raw: Map<String, Value>) -> Self {
        Case {
            raw,
            name: Some("workers".to_owned()),
            nodepool_id: NODEPOOL_ID.to_owned(),
            cluster_id: CLUSTER_ID.to_owned(),
            hc: 0,
        }
    }

    fn validate(&self) -> Result<NodePoolSpec, Vec<SpecViolation>> {
        NodePoolSpec::validate(
            &self.nodepool_id,
            &self.cluster_id,
            self.name.as_deref(),
            &self.raw,
        )
    }

    fn placement(&self) -> Placement<'static> {
        placement(&HOSTED_CLUSTERS[self.hc])
    }

    /// The CRD's verdict on the NodePool these values make, unvalidated.
    fn crd(&self) -> Outcome {
        validate(&NODE_POOL_SCHEMA, &unvalidated_node_pool(self))
    }
}

/// A raw value as the adapter reads an optional field: absent, `null` and `""` are not set.
fn given<'a>(spec: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = spec.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    (!value.is_null() && value.as_str() != Some("")).then_some(value)
}

/// The NodePool `case` makes when every HyperFleet field is copied to its NodePool field as it
/// is, with the adapter's documented defaults (`hyperfleet/nodepool.rs`, `hypershift/nodepool`),
/// validating nothing. Equal to the adapter's NodePool on every spec the adapter accepts.
fn unvalidated_node_pool(case: &Case) -> Value {
    let raw = &case.raw;
    let placement = case.placement();
    let put = |target: &mut Map<String, Value>, key: &str, value: Option<&Value>| {
        if let Some(v) = value {
            target.insert(key.to_owned(), v.clone());
        }
    };
    let platform_type = given(raw, "platform.type").map(|t| match t.as_str() {
        Some(s) if s.eq_ignore_ascii_case("gcp") => json!("GCP"),
        Some(s) if s.eq_ignore_ascii_case("none") => json!("None"),
        _ => t.clone(),
    });
    let mut platform = Map::new();
    put(&mut platform, "type", platform_type.as_ref());
    match given(raw, "platform.gcp") {
        Some(Value::Object(_)) => {
            let field = |f: &str| given(raw, &format!("platform.gcp.{f}"));
            let mut g = Map::new();
            put(
                &mut g,
                "machineType",
                Some(field("machine_type").unwrap_or(&json!(DEFAULT_MACHINE_TYPE))),
            );
            let default_zone = placement.region.map(|r| Value::from(format!("{r}-a")));
            put(&mut g, "zone", field("zone").or(default_zone.as_ref()));
            let default_subnet = placement.default_subnet.map(Value::from);
            put(
                &mut g,
                "subnet",
                field("subnet").or(default_subnet.as_ref()),
            );
            put(&mut g, "image", field("image"));
            let mut disk = Map::new();
            put(&mut disk, "diskSizeGB", field("boot_disk_size_gb"));
            put(&mut disk, "diskType", field("boot_disk_type"));
            if !disk.is_empty() {
                g.insert("bootDisk".into(), Value::Object(disk));
            }
            if let Some(email) = field("service_account_email") {
                g.insert("serviceAccount".into(), json!({"email": email}));
            }
            put(&mut g, "provisioningModel", field("provisioning_model"));
            match field("network_tags") {
                Some(Value::Array(tags)) if tags.is_empty() => {}
                tags => put(&mut g, "networkTags", tags),
            }
            match field("resource_labels") {
                Some(Value::Object(labels)) if labels.is_empty() => {}
                Some(Value::Object(labels)) => {
                    let mut pairs: Vec<(&String, &Value)> = labels.iter().collect();
                    pairs.sort_by(|a, b| a.0.cmp(b.0));
                    let list = pairs
                        .into_iter()
                        .map(|(k, v)| json!({"key": k, "value": v}))
                        .collect();
                    g.insert("resourceLabels".into(), Value::Array(list));
                }
                labels => put(&mut g, "resourceLabels", labels),
            }
            platform.insert("gcp".into(), Value::Object(g));
        }
        other => put(&mut platform, "gcp", other),
    }
    let mut management = Map::new();
    let upgrade_default = match platform_type.as_ref().and_then(Value::as_str) {
        Some("GCP") => Some(json!("Replace")),
        Some("None") => Some(json!("InPlace")),
        _ => None,
    };
    put(
        &mut management,
        "upgradeType",
        given(raw, "management.upgrade_type").or(upgrade_default.as_ref()),
    );
    put(
        &mut management,
        "autoRepair",
        given(raw, "management.auto_repair"),
    );
    let mut release = Map::new();
    let default_release = placement.release_image.map(Value::from);
    put(
        &mut release,
        "image",
        given(raw, "release.image").or(default_release.as_ref()),
    );
    let mut spec = Map::new();
    spec.insert("clusterName".into(), placement.cluster_name.into());
    spec.insert("release".into(), Value::Object(release));
    put(
        &mut spec,
        "arch",
        Some(given(raw, "arch").unwrap_or(&json!("amd64"))),
    );
    spec.insert("platform".into(), Value::Object(platform));
    spec.insert("management".into(), Value::Object(management));
    put(&mut spec, "replicas", given(raw, "replicas"));
    match given(raw, "autoscaling") {
        Some(Value::Object(bounds)) => {
            let mut a = Map::new();
            put(&mut a, "min", bounds.get("min").filter(|v| !v.is_null()));
            put(&mut a, "max", bounds.get("max").filter(|v| !v.is_null()));
            spec.insert("autoScaling".into(), Value::Object(a));
        }
        other => put(&mut spec, "autoScaling", other),
    }
    json!({
        "apiVersion": "hypershift.openshift.io/v1beta1",
        "kind": "NodePool",
        "metadata": {
            "name": format!("{}-{}", case.name.as_deref().unwrap_or(""), case.cluster_id),
            "namespace": placement.namespace,
            "labels": {CLUSTER_ID_LABEL: case.cluster_id, NODEPOOL_ID_LABEL: case.nodepool_id},
        },
        "spec": spec,
    })
}

/// Why the adapter refuses `v` although the CRD accepts the value, when that is on purpose: the
/// documented places where our validation is stricter than the CRD. `None`: no such reason, so
/// refusing a value the CRD accepts is a bug.
fn stricter_on_purpose(case: &Case, v: &SpecViolation) -> Option<&'static str> {
    let raw = &case.raw;
    let text = |path: &str| given(raw, path).and_then(Value::as_str);
    let has_whitespace =
        |path: &str| text(path).is_some_and(|s| s.chars().any(char::is_whitespace));
    let dns_label = |s: &str, max: usize| {
        s.len() <= max
            && regex::Regex::new("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
                .unwrap()
                .is_match(s)
    };
    let gcp_or_none = |t: &str| t.eq_ignore_ascii_case("gcp") || t.eq_ignore_ascii_case("none");
    match v.field {
        // The CRD never sees the HyperFleet name, only the NodePool name made from it.
        "name"
            if !case
                .name
                .as_deref()
                .is_some_and(|n| n.len() >= 3 && dns_label(n, 15)) =>
        {
            Some(
                "HyperFleet's NodePool name rule (a lowercase DNS label of 3–15 characters), and a name is required: the NodePool is named after it",
            )
        }
        "id" if !dns_label(&case.nodepool_id, 63) => Some(
            "HyperFleet NodePool ids are lowercase DNS labels (UUIDv7); the CRD sees them only as a label value",
        ),
        "owner_references.id" if !dns_label(&case.cluster_id, 47) => Some(
            "cluster ids are lowercase DNS labels of at most 47 characters, so <name>-<cluster id> fits the 63-character labels HyperShift derives from the NodePool name",
        ),
        // The CRD's `replicas` has no minimum.
        "replicas"
            if given(raw, "replicas")
                .and_then(Value::as_i64)
                .is_some_and(|n| n < 0) =>
        {
            Some("a negative replica count is meaningless; the CRD sets no minimum")
        }
        // The CRD lets both be unset (the controller then keeps 0 machines).
        "replicas" if given(raw, "replicas").is_none() && given(raw, "autoscaling").is_none() => {
            Some(
                "the size is required (replicas, 0 allowed, or autoscaling; hypershift-api.md §6: replicas xor autoScaling): a forgotten size would silently mean no workers",
            )
        }
        // The same in HyperFleet's shape, where the count is `nodeCount` (or `replicas`).
        "nodeCount"
            if given(raw, "nodeCount").is_none()
                && given(raw, "replicas").is_none()
                && given(raw, "autoscaling.enabled") != Some(&json!(true)) =>
        {
            Some(
                "the size is required (nodeCount, 0 allowed, or autoscaling enabled with minNodes and maxNodes): a forgotten size would silently mean no workers",
            )
        }
        // Scale-from-zero is for AWS and Azure, which the adapter refuses anyway.
        "autoscaling.min"
            if given(raw, "autoscaling.min").and_then(Value::as_i64) == Some(0)
                && !text("platform.type").is_some_and(gcp_or_none) =>
        {
            Some(
                "autoscaling.min 0 is for AWS and Azure NodePools only; the adapter builds GCP and None",
            )
        }
        "arch" if text("arch") == Some("ppc64le") => Some(
            "ppc64le is in the CRD's enum but not supported for GCP and None NodePools (ValidArchPlatform=False)",
        ),
        "platform.type" if text("platform.type").is_some_and(|t| !gcp_or_none(t)) => {
            Some("the adapter builds GCP and None NodePools only")
        }
        "platform.gcp"
            if given(raw, "platform.gcp").is_some()
                && text("platform.type").is_some_and(|t| t.eq_ignore_ascii_case("none")) =>
        {
            Some(
                "platform.gcp is ignored on a None NodePool: refused so the fields are not silently dropped",
            )
        }
        "platform.gcp"
            if !matches!(given(raw, "platform.gcp"), Some(Value::Object(_)))
                && text("platform.type").is_some_and(|t| t.eq_ignore_ascii_case("gcp")) =>
        {
            Some(
                "a GCP NodePool needs platform.gcp (hypershift-api.md §3.2); the CRD accepts a GCP NodePool without it, whose machines cannot be created",
            )
        }
        // No pattern on `platform.gcp.image` in the CRD; RE2's `\S` in `release.image`'s rule
        // lets Unicode whitespace (a non-breaking space, `\v`) through.
        "platform.gcp.image" | "release.image" if has_whitespace(v.field) => {
            Some("an image reference never contains whitespace")
        }
        _ => None,
    }
}

/// Values the CRD rejects (checked here first) that `NodePoolSpec::validate` refuses, naming the
/// HyperFleet field.
#[test]
fn values_the_crd_rejects_are_refused_naming_the_hyperfleet_field() {
    if CRDS.is_none() {
        return;
    }
    let tags_65: Vec<String> = (0..65).map(|i| format!("t{i}")).collect();
    let labels_61: Map<String, Value> = (0..61).map(|i| (format!("k{i}"), json!(""))).collect();
    // (HyperFleet field the adapter names, where the CRD rejects it, a word of the CRD's message,
    // values). An `autoscaling.*` value is the whole `autoscaling` object, sent instead of
    // `replicas`; an `autoscaling` value is sent beside `replicas`.
    let rows: Vec<(&str, &str, &str, Vec<Value>)> = vec![
        (
            "platform.gcp.zone",
            ".spec.platform.gcp.zone",
            "",
            vec![
                json!("europe-west2"),
                json!("Europe-west2-a"),
                json!(sized("europe-west2-", 'z', "-b", 64)),
            ],
        ),
        (
            "platform.gcp.machine_type",
            ".spec.platform.gcp.machineType",
            "",
            vec![
                json!("N2-standard-4"),
                json!("n2--standard"),
                json!("n2-standard-"),
            ],
        ),
        (
            "platform.gcp.boot_disk_size_gb",
            ".spec.platform.gcp.bootDisk.diskSizeGB",
            "",
            vec![json!(19), json!(65537), json!(64.5)],
        ),
        (
            "platform.gcp.boot_disk_type",
            ".spec.platform.gcp.bootDisk.diskType",
            "is not one of",
            vec![json!("ssd"), json!("PD-SSD")],
        ),
        (
            "platform.gcp.subnet",
            ".spec.platform.gcp.subnet",
            "",
            vec![
                json!("1subnet"),
                json!("subnet-"),
                json!(sized("s", 'u', "b", 64)),
            ],
        ),
        (
            "platform.gcp.image",
            ".spec.platform.gcp.image",
            "maxLength",
            vec![json!(sized("projects/x/global/images/", 'i', "", 2049))],
        ),
        (
            "platform.gcp.service_account_email",
            ".spec.platform.gcp.serviceAccount.email",
            "",
            vec![
                json!("me@example.com"),
                json!("Nodes@my-project-123.iam.gserviceaccount.com"),
            ],
        ),
        (
            "platform.gcp.provisioning_model",
            ".spec.platform.gcp.provisioningModel",
            "is not one of",
            vec![json!("spot")],
        ),
        (
            "platform.gcp.network_tags",
            ".spec.platform.gcp.networkTags",
            "",
            vec![
                json!(["workers", ""]),
                json!(["Workers"]),
                json!(["workers-"]),
                json!(["a", "b", "a"]),
                json!(tags_65),
                json!("workers"),
            ],
        ),
        (
            "platform.gcp.resource_labels",
            ".spec.platform.gcp.resourceLabels",
            "",
            vec![
                json!({"googlers": "x"}),
                json!({"goog": ""}),
                json!({"team": "1platform"}),
                json!({"team": "Platform"}),
                json!({"team": "platform-"}),
                json!({"Team": "x"}),
                json!({"1team": "x"}),
                json!({"team": 1}),
                Value::Object(labels_61),
            ],
        ),
        (
            "autoscaling.min",
            ".spec",
            "Scale-from-zero",
            vec![json!({"min": 0, "max": 3})],
        ),
        (
            "autoscaling.max",
            ".spec.autoScaling",
            "",
            vec![
                json!({"min": 4, "max": 3}),
                json!({"min": 1}),
                json!({"min": 1, "max": 2147483648_i64}),
            ],
        ),
        (
            "autoscaling",
            ".spec",
            "Both replicas or autoScaling",
            vec![json!({"min": 1, "max": 3})],
        ),
        (
            "replicas",
            ".spec.replicas",
            "",
            vec![json!(2147483648_i64), json!("3"), json!(2.5)],
        ),
        (
            "arch",
            ".spec",
            "s390x is only supported",
            vec![json!("s390x")],
        ),
        ("arch", ".spec.arch", "is not one of", vec![json!("x86_64")]),
        (
            "release.image",
            ".spec.release.image",
            "",
            vec![
                json!("quay.io/ocp release:4.17.0"),
                json!("quay.io/ocp-release:4.17.0\t"),
                json!("-quay.io/ocp-release:4.17.0"),
                json!("q"),
                // `""` is not set: the NodePool takes the HostedCluster's release image.
                json!(sized("quay.io/", 'x', "", 254)),
            ],
        ),
        (
            "management.upgrade_type",
            ".spec.management.upgradeType",
            "is not one of",
            vec![json!("replace"), json!("Rolling")],
        ),
        (
            "management.auto_repair",
            ".spec.management.autoRepair",
            "must be of type",
            vec![json!("yes")],
        ),
        (
            "platform.type",
            ".spec.platform.type",
            "is not one of",
            vec![json!("gce")],
        ),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (field, crd_path, needle, values) in rows {
        for value in values {
            let case = Case::of(raw(|s| {
                if field.starts_with("autoscaling") {
                    if field != "autoscaling" {
                        s.remove("replicas");
                    }
                    s.insert("autoscaling".into(), value);
                } else {
                    set(s, field, value);
                }
            }));
            checked += 1;
            let outcome = case.crd();
            let at = |path: &str| path == crd_path || under(path, crd_path);
            if !outcome
                .errors
                .iter()
                .any(|e| at(&e.path) && e.message.contains(needle))
            {
                failures.push(format!(
                    "{field} {:?}: the CRD should reject it at {crd_path} ({needle:?}), found {:#?}",
                    case.raw, outcome.errors
                ));
            }
            match case.validate() {
                Ok(_) => failures.push(format!("{field} {:?}: accepted by the adapter", case.raw)),
                Err(v) if !v.iter().any(|v| v.field == field) => failures.push(format!(
                    "{field} {:?}: refused naming other fields: {v:#?}",
                    case.raw
                )),
                Err(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 40, "{checked}");
}

/// Where our validation is stricter than the CRD on purpose: the CRD accepts these values (checked
/// here, so the list stays true), the adapter refuses them naming the field, and
/// [`stricter_on_purpose`] gives the reason.
#[test]
fn where_the_adapter_is_stricter_than_the_crd_it_is_on_purpose() {
    if CRDS.is_none() {
        return;
    }
    let with = |path: &'static str, value: Value| Case::of(raw(|s| set(s, path, value)));
    // A missing name is refused too (the NodePool is named after it); the CRD has nothing to
    // compare it with.
    let cases: Vec<(&str, Case)> = vec![
        (
            "name",
            Case {
                name: Some("workers-europe-2".into()),
                ..with("replicas", json!(1))
            },
        ),
        (
            "name",
            Case {
                name: Some("ab".into()),
                ..with("replicas", json!(1))
            },
        ),
        (
            "id",
            Case {
                nodepool_id: "NodePool_1".into(),
                ..with("replicas", json!(1))
            },
        ),
        (
            "owner_references.id",
            Case {
                cluster_id: sized("c", '1', "y", 48),
                ..with("replicas", json!(1))
            },
        ),
        ("replicas", with("replicas", json!(-1))),
        (
            "replicas",
            Case::of(raw(|s| {
                s.remove("replicas");
            })),
        ),
        (
            "autoscaling.min",
            Case::of(raw(|s| {
                set(s, "platform", json!({"type": "AWS"}));
                set(s, "management.upgrade_type", json!("Replace"));
                s.remove("replicas");
                set(s, "autoscaling", json!({"min": 0, "max": 3}));
            })),
        ),
        ("arch", with("arch", json!("ppc64le"))),
        (
            "platform.type",
            Case::of(raw(|s| {
                set(s, "platform", json!({"type": "AWS"}));
                set(s, "management.upgrade_type", json!("Replace"));
            })),
        ),
        ("platform.gcp", with("platform.type", json!("none"))),
        ("platform.gcp", with("platform", json!({"type": "gcp"}))),
        (
            "platform.gcp.image",
            with(
                "platform.gcp.image",
                json!("projects/x/global/images/my image"),
            ),
        ),
        (
            "release.image",
            with("release.image", json!("quay.io/ocp-release:4.17.0\u{a0}x")),
        ),
        (
            "release.image",
            with("release.image", json!("quay.io/ocp-release:4.17.0\u{b}x")),
        ),
    ];
    let mut failures = Vec::new();
    for (field, case) in &cases {
        let outcome = case.crd();
        if !outcome.errors.is_empty() || !outcome.unevaluated.is_empty() {
            failures.push(format!(
                "{field} {case:?}: the CRD does not accept it: {outcome:#?}"
            ));
        }
        match case.validate() {
            Ok(_) => failures.push(format!("{field} {case:?}: accepted by the adapter")),
            Err(v) => {
                for v in &v {
                    if stricter_on_purpose(case, v).is_none() {
                        failures.push(format!(
                            "{field} {case:?}: refused without a documented reason: {v}"
                        ));
                    }
                }
                if !v.iter().any(|v| v.field == *field) {
                    failures.push(format!(
                        "{field} {case:?}: refused naming other fields: {v:#?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

mod validated_specs_and_the_crd_agree {
    //! Whatever `NodePoolSpec::validate` accepts, the CRD accepts (and the ManifestWork CRD the
    //! work); whatever it refuses while the CRD accepts the same values is refused on purpose
    //! ([`stricter_on_purpose`]). Strategies produce valid values and values around each rule's
    //! edges, per field.

    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    /// Values matching `valid` 19 times in 20, else `edge` (values the rules should reject).
    fn mostly(valid: &'static str, edge: &'static str) -> impl Strategy<Value = Value> {
        prop_oneof![19 => valid.prop_map(Value::from), 1 => edge.prop_map(Value::from)]
    }

    fn opt(s: impl Strategy<Value = Value>) -> impl Strategy<Value = Option<Value>> {
        prop::option::weighted(0.5, s)
    }

    fn values(v: Vec<Value>) -> impl Strategy<Value = Value> {
        select(v)
    }

    /// One of `valid` nine times in ten, else one of `edge`.
    fn pick(valid: Vec<Value>, edge: Vec<Value>) -> impl Strategy<Value = Value> {
        prop_oneof![9 => select(valid), 1 => select(edge)]
    }

    fn integer(
        range: std::ops::RangeInclusive<i64>,
        edges: Vec<Value>,
    ) -> impl Strategy<Value = Value> {
        prop_oneof![2 => range.prop_map(Value::from), 1 => select(edges)]
    }

    fn bounds() -> impl Strategy<Value = Value> {
        let n = || {
            opt(
                prop_oneof![9 => (0..=5_i64).prop_map(Value::from), 1 => values(vec![json!(2147483647), json!(2147483648_i64), json!(-1), json!("2")])],
            )
        };
        // Mostly both bounds present.
        (n(), n(), prop::bool::weighted(0.9)).prop_map(|(min, max, both)| {
            let mut a = Map::new();
            // Never `{}`: an autoscaling object without min or max is HyperFleet's shape
            // (autoscaling not enabled), which the mapping here does not model.
            let (min, max) = if both {
                (min.or(Some(json!(1))), max.or(Some(json!(3))))
            } else if min.is_some() {
                (min, None)
            } else {
                (None, max.or(Some(json!(3))))
            };
            if let Some(min) = min {
                a.insert("min".into(), min);
            }
            if let Some(max) = max {
                a.insert("max".into(), max);
            }
            Value::Object(a)
        })
    }

    prop_compose! {
        fn gcp()(
            machine_type in mostly(
                "(n2|e2|c3|n2d)-(standard|highmem|highcpu)-[0-9]{1,3}|custom-[0-9]{1,2}-[0-9]{4,5}(-ext)?|[a-z0-9]{1,3}",
                "[A-Z][a-z0-9-]{0,5}|[a-z0-9]{1,3}--[a-z]|-[a-z]{2}|[a-z]{1,3}-|[a-z ]{0,3}",
            ),
            zone in mostly(
                "europe-west2-[a-c]|us-central1-[a-f]|[a-z]{1,3}(-[a-z0-9]{1,3}){0,2}-[a-z]",
                "europe-west2|[a-z]{1,3}-[0-9]|[a-z]+-[a-z]{2}|Europe-west2-a|[a-z]{1,3}-[a-z]-",
            ),
            subnet in opt(mostly("[a-z]([-a-z0-9]{0,20}[a-z0-9])?", "[0-9-][a-z]{0,3}|[a-z]{1,3}-|[a-z]{64}|")),
            image in opt(mostly(
                "projects/[a-z][a-z0-9-]{4,10}/global/images/(family/)?[a-z][a-z0-9-]{0,20}|https://www\\.googleapis\\.com/compute/v1/projects/rhcos-cloud/global/images/rhcos-[0-9]{3}",
                "[a-z]{1,4}[ \\t\\x{A0}][a-z]{1,4}|[^ ]{1,3}",
            )),
            disk_size in opt(integer(20..=65536, vec![json!(-1), json!(0), json!(19), json!(20), json!(65536), json!(65537), json!(64.5), json!("64")])),
            disk_type in opt(pick(vec![json!("pd-standard"), json!("pd-ssd"), json!("pd-balanced")], vec![json!("ssd"), json!("")])),
            email in opt(mostly(
                "[a-z][a-z0-9-]{4,12}[a-z0-9]@[a-z][a-z0-9-]{4,12}[a-z0-9]\\.iam\\.gserviceaccount\\.com",
                "[a-z]{1,6}@example\\.com|[a-z]{5}@[a-z]{3}\\.iam\\.gserviceaccount\\.com|[A-Z][a-z]{5}@[a-z]{6}\\.iam\\.gserviceaccount\\.com",
            )),
            model in opt(pick(vec![json!("Standard"), json!("Spot"), json!("Preemptible")], vec![json!("spot"), json!("")])),
            tags in opt(prop_oneof![
                9 => prop::collection::vec(mostly("[a-z]([-a-z0-9]{0,6}[a-z0-9])?", "|[0-9A-Z-][a-z]{0,3}|[a-z]{1,3}-|[a-z]{64}"), 0..4).prop_map(Value::from),
                1 => values(vec![json!("workers"), json!([1])]),
            ]),
            labels in opt(prop_oneof![
                9 => prop::collection::btree_map(
                    prop_oneof![9 => "[a-z]([_a-z0-9-]{0,6}[a-z0-9])?", 1 => "goog[a-z0-9]{0,3}|[0-9A-Z_-][a-z]{0,3}|[a-z]{1,3}[-_]|[a-z]{64}"],
                    mostly("|[a-z]([_a-z0-9-]{0,6}[a-z0-9])?", "[0-9A-Z_-][a-z]{0,3}|[a-z]{1,3}[-_]|[a-z]{64}"),
                    0..4,
                ).prop_map(|m| Value::Object(m.into_iter().collect())),
                1 => values(vec![json!(["team"]), json!({"team": 1})]),
            ]),
        ) -> Value {
            let mut g = Map::new();
            g.insert("machine_type".into(), machine_type);
            g.insert("zone".into(), zone);
            for (k, v) in [
                ("subnet", subnet),
                ("image", image),
                ("boot_disk_size_gb", disk_size),
                ("boot_disk_type", disk_type),
                ("service_account_email", email),
                ("provisioning_model", model),
                ("network_tags", tags),
                ("resource_labels", labels),
            ] {
                if let Some(v) = v {
                    g.insert(k.into(), v);
                }
            }
            Value::Object(g)
        }
    }

    prop_compose! {
        fn case()(
            platform_type in pick(vec![json!("gcp"), json!("gcp"), json!("gcp"), json!("GCP"), json!("none"), json!("None")], vec![json!("AWS"), json!(""), json!(1)]),
            gcp in gcp(),
            stray_gcp in prop::bool::weighted(0.1),
            scaling in prop_oneof![
                5 => integer(0..=10, vec![json!(i32::MAX), json!(-1), json!(2147483648_i64), json!(2.5)]).prop_map(|n| (Some(n), None)),
                4 => bounds().prop_map(|a| (None, Some(a))),
                1 => (Just(Some(json!(1))), bounds().prop_map(Some)),
                1 => Just((None::<Value>, None::<Value>)),
            ],
            release in mostly(
                "quay\\.io/openshift-release-dev/ocp-release:4\\.1[4-7]\\.[0-9]{1,2}-(x86_64|multi|aarch64)|registry\\.example\\.com:5000/ocp@sha256:[0-9a-f]{64}|[a-z0-9_][a-z0-9./:@-]{1,20}",
                "[-. :]{0,2}[a-z]{0,4}|[a-z]{1,3}[ \\t\\x{0B}\\x{A0}][a-z]{1,3}|[a-z]{254}|[a-z]",
            ),
            arch in opt(pick(vec![json!("amd64"), json!("arm64")], vec![json!("ppc64le"), json!("s390x"), json!("x86_64"), json!("")])),
            upgrade_type in opt(pick(vec![json!("Replace"), json!("InPlace")], vec![json!("replace"), json!("")])),
            auto_repair in opt(pick(vec![json!(true), json!(false)], vec![json!("yes"), json!(null)])),
            name in prop::option::weighted(0.97, prop_oneof![
                9 => "[a-z0-9]([-a-z0-9]{1,13}[a-z0-9])",
                1 => "[a-z]{16,20}|[a-z]{1,2}|-[a-z]{3}|[A-Z][a-z]{3}|[a-z]{3}-",
            ]),
            nodepool_id in prop_oneof![
                9 => "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                1 => "[a-z0-9]([-a-z0-9]{58,62}[a-z0-9])|[A-Z0-9_]{1,10}",
            ],
            cluster_id in prop_oneof![
                9 => "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                1 => "[a-z0-9]([-a-z0-9]{44,47}[a-z0-9])|[A-Z0-9_]{1,10}",
            ],
            hc in 0..3_usize,
        ) -> Case {
            let mut platform = Map::new();
            platform.insert("type".into(), platform_type.clone());
            let gcp_type = platform_type.as_str().is_some_and(|t| t.eq_ignore_ascii_case("gcp"));
            if gcp_type || stray_gcp {
                platform.insert("gcp".into(), gcp);
            }
            let mut raw = Map::new();
            raw.insert("platform".into(), Value::Object(platform));
            raw.insert("release".into(), json!({"image": release}));
            let (replicas, autoscaling) = scaling;
            for (key, value) in [("replicas", replicas), ("autoscaling", autoscaling), ("arch", arch)] {
                if let Some(v) = value {
                    raw.insert(key.into(), v);
                }
            }
            let mut management = Map::new();
            for (key, value) in [("upgrade_type", upgrade_type), ("auto_repair", auto_repair)] {
                if let Some(v) = value {
                    management.insert(key.into(), v);
                }
            }
            if !management.is_empty() {
                raw.insert("management".into(), Value::Object(management));
            }
            Case { raw, name, nodepool_id, cluster_id, hc }
        }
    }

    /// What the two sides say about one case: `Err` explains a disagreement.
    fn check(case: &Case) -> Result<Verdict, String> {
        let outcome = case.crd();
        match case.validate() {
            Ok(spec) => {
                let built = np::node_pool(&spec, &case.placement());
                let unvalidated = unvalidated_node_pool(case);
                if built != unvalidated {
                    return Err(format!(
                        "the test's mapping is not the adapter's:\nadapter: {built:#}\ntest: {unvalidated:#}"
                    ));
                }
                let outcome = validate(&NODE_POOL_SCHEMA, &built);
                if !outcome.errors.is_empty() || !outcome.unevaluated.is_empty() {
                    return Err(format!(
                        "accepted by the adapter, refused by the CRD: {outcome:#?}\n{built:#}"
                    ));
                }
                let work = manifest_work(&spec, &case.placement(), CONSUMER, Some(1));
                let outcome = validate(&MANIFEST_WORK_SCHEMA, &work);
                if !outcome.errors.is_empty() || !outcome.unevaluated.is_empty() {
                    return Err(format!("ManifestWork refused by its CRD: {outcome:#?}"));
                }
                Ok(Verdict::BothAccept)
            }
            Err(violations) if outcome.errors.is_empty() => {
                if !outcome.unevaluated.is_empty() {
                    return Err(format!(
                        "CEL rules not evaluated: {:#?}",
                        outcome.unevaluated
                    ));
                }
                let unexplained: Vec<String> = violations
                    .iter()
                    .filter(|v| stricter_on_purpose(case, v).is_none())
                    .map(ToString::to_string)
                    .collect();
                if unexplained.is_empty() {
                    Ok(Verdict::StricterOnPurpose)
                } else {
                    Err(format!(
                        "refused by the adapter without a documented reason, accepted by the CRD:\n{}",
                        unexplained.join("\n")
                    ))
                }
            }
            Err(_) => Ok(Verdict::BothRefuse),
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Verdict {
        BothAccept,
        BothRefuse,
        StricterOnPurpose,
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn validation_and_the_crd_agree(case in case()) {
            if CRDS.is_none() {
                return Ok(());
            }
            if let Err(why) = check(&case) {
                prop_assert!(false, "{why}\ncase: {case:#?}");
            }
        }
    }

    /// Guards against a vacuous property: the strategies reach every verdict.
    #[test]
    fn the_strategies_reach_every_verdict() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        if CRDS.is_none() {
            return;
        }
        let mut runner = TestRunner::deterministic();
        let mut counts = [0_usize; 3];
        for _ in 0..300 {
            let case = case().new_tree(&mut runner).unwrap().current();
            let verdict = check(&case).unwrap_or_else(|why| panic!("{why}\ncase: {case:#?}"));
            counts[verdict as usize] += 1;
        }
        let [accept, refuse, stricter] = counts;
        assert!(
            accept >= 30 && refuse >= 30 && stricter >= 5,
            "of 300 cases: {accept} accepted by both, {refuse} refused by both, {stricter} refused on purpose"
        );
    }
}

// ---- Immutable fields ---------------------------------------------------------------------------

/// A CRD transition rule (one using `oldSelf`) and where it sits.
#[derive(Debug)]
struct TransitionRule {
    /// Schema path, e.g. `spec.platform.type`, `spec.platform.gcp.networkTags[]`.
    path: String,
    /// Whitespace collapsed.
    rule: String,
    message: String,
}

impl TransitionRule {
    /// `self == oldSelf`: the field (and all under it) cannot change.
    fn immutable(&self) -> bool {
        self.rule == "self == oldSelf"
    }
}

/// Every transition rule of a CRD version's `openAPIV3Schema`.
fn transition_rules(schema: &Value) -> Vec<TransitionRule> {
    fn walk(schema: &Value, path: &str, out: &mut Vec<TransitionRule>) {
        let rules = schema["x-kubernetes-validations"].as_array();
        for rule in rules.into_iter().flatten() {
            let text = rule["rule"].as_str().unwrap_or_default();
            if text.contains("oldSelf") {
                out.push(TransitionRule {
                    path: path.to_owned(),
                    rule: text.split_whitespace().collect::<Vec<_>>().join(" "),
                    message: rule["message"].as_str().unwrap_or_default().to_owned(),
                });
            }
        }
        for (name, child) in schema["properties"].as_object().into_iter().flatten() {
            walk(child, &join(path, name), out);
        }
        if let Some(items) = schema.get("items") {
            walk(items, &format!("{path}[]"), out);
        }
        if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            walk(values, &join(path, "*"), out);
        }
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

/// What the adapter compares beyond the CRD's rules: renaming or moving the NodePool would make
/// the work agent delete it and create another (`hypershift/nodepool/immutable.rs`).
const OUR_OWN_IMMUTABLE: [&str; 2] = ["metadata.name", "metadata.namespace"];

/// `object` with the leaf at `pointer` changed to another value of its type.
fn changed(object: &Value, pointer: &str) -> Value {
    let mut new = object.clone();
    let leaf = new.pointer_mut(pointer).unwrap();
    *leaf = match leaf.take() {
        Value::String(s) => Value::String(format!("{s}x")),
        Value::Number(n) => Value::from(n.as_i64().unwrap() + 1),
        Value::Bool(b) => Value::Bool(!b),
        other => panic!("{pointer}: unexpected leaf {other}"),
    };
    new
}

/// Changes every field of every NodePool we build, alone, and compares what the adapter reports
/// as an immutable change with the NodePool `schema`: reported exactly when the schema has an
/// `self == oldSelf` rule on the field or on an object holding it, or the field is
/// `metadata.name`/`namespace`. Returns the disagreements and the immutable schema paths found on
/// what we send.
fn immutable_mismatches(schema: &Value) -> (Vec<String>, BTreeSet<String>) {
    let rules = transition_rules(schema);
    let immutable: Vec<&str> = rules
        .iter()
        .filter(|r| r.immutable())
        .map(|r| r.path.as_str())
        .collect();
    let mut failures = Vec::new();
    let mut sent_immutable = BTreeSet::new();
    for v in variants() {
        let object = v.node_pool();
        for (pointer, path) in leaves(&object) {
            let crd_rule = immutable.iter().find(|q| under(&path, q));
            let expected = crd_rule.is_some() || OUR_OWN_IMMUTABLE.contains(&path.as_str());
            if let Some(q) = crd_rule {
                sent_immutable.insert((*q).to_owned());
            }
            let changes = immutable_changes(&object, &changed(&object, &pointer), v.spec().shape);
            match (expected, changes.as_slice()) {
                (true, []) => failures.push(format!(
                    "{}: {path} is immutable ({}) but the adapter would send a change of it",
                    v.what,
                    crd_rule.map_or("our own addition", |q| q),
                )),
                (false, [_, ..]) => failures.push(format!(
                    "{}: the adapter refuses to change {path}, which the CRD lets change: {changes:?}",
                    v.what
                )),
                (true, [change]) if !under(&path, &change.path) => failures.push(format!(
                    "{}: a change of {path} is reported as {}",
                    v.what, change.path
                )),
                (true, [_]) | (false, []) => {}
                (true, more) => failures.push(format!(
                    "{}: one change of {path} is reported as several: {more:?}",
                    v.what
                )),
            }
        }
    }
    (failures, sent_immutable)
}

/// For every field of every NodePool we build: the adapter refuses to change it exactly when the
/// CRD does (or it is `metadata.name`/`namespace`, our own addition). Fails when the CRD grows an
/// immutable field on something we send, and when the adapter's list holds a field the CRD lets
/// change.
#[test]
fn the_adapters_immutable_fields_are_the_crds_on_what_we_send() {
    if CRDS.is_none() {
        return;
    }
    let (failures, sent_immutable) = immutable_mismatches(&NODE_POOL_SCHEMA);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Not vacuous: the CRD's rules were found on fields we send.
    assert!(
        sent_immutable.len() >= 4,
        "immutable CRD fields we send: {sent_immutable:?}"
    );
}

/// The comparison above fails on a CRD that differs from the adapter: one that grows an
/// immutable field we send (on the field, or on an object holding it), and one that lets an
/// immutable field of the adapter's list change.
#[test]
fn the_immutable_field_comparison_catches_a_changed_crd() {
    if CRDS.is_none() {
        return;
    }
    let doctored = |pointer: &str, rules: Value| {
        let mut schema = NODE_POOL_SCHEMA.clone();
        let node = schema
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}"));
        node["x-kubernetes-validations"] = rules;
        immutable_mismatches(&schema).0.join("\n")
    };
    let gcp = "/properties/spec/properties/platform/properties/gcp/properties";
    let immutable = json!([{"rule": "self == oldSelf", "message": "Zone is immutable"}]);
    let grown = doctored(&format!("{gcp}/zone"), immutable.clone());
    assert!(
        grown.contains("spec.platform.gcp.zone is immutable"),
        "{grown}"
    );
    let holder = doctored(&format!("{gcp}/bootDisk"), immutable);
    assert!(
        holder.contains("spec.platform.gcp.bootDisk.diskSizeGB is immutable"),
        "{holder}"
    );
    let relaxed = doctored("/properties/spec/properties/arch", json!([]));
    assert!(
        relaxed.contains("the adapter refuses to change spec.arch, which the CRD lets change"),
        "{relaxed}"
    );
}

/// The adapter's list, read back by comparing each NodePool with nothing: every field in it is
/// immutable in the CRD, except `metadata.name`/`namespace` (documented as our addition).
#[test]
fn every_field_in_the_adapters_list_is_immutable_in_the_crd() {
    if CRDS.is_none() {
        return;
    }
    let rules = transition_rules(&NODE_POOL_SCHEMA);
    let mut listed = BTreeSet::new();
    for v in variants() {
        let object = v.node_pool();
        let nothing = json!({});
        let shape = v.spec().shape;
        for change in immutable_changes(&object, &nothing, shape)
            .into_iter()
            .chain(immutable_changes(&nothing, &object, shape))
        {
            listed.insert(change.path);
        }
    }
    for path in &listed {
        let crd = rules.iter().any(|r| r.immutable() && under(path, &r.path));
        assert!(
            crd || OUR_OWN_IMMUTABLE.contains(&path.as_str()),
            "the adapter treats {path} as immutable; the CRD does not"
        );
    }
    for ours in OUR_OWN_IMMUTABLE {
        assert!(listed.contains(ours), "{ours} is not compared: {listed:?}");
    }
}

/// The schema's other transition rules on what we send: "cannot be removed once set"
/// (`!has(oldSelf.x) || has(self.x)`) holds when we send such a field always or never; any other
/// transition rule on a node we send is a problem until this test understands it. Returns the
/// problems and how many rules held.
fn other_transition_rule_problems(schema: &Value) -> (Vec<String>, usize) {
    let sent: Vec<BTreeSet<String>> = variants()
        .iter()
        .map(|v| {
            let mut nodes = BTreeSet::from([String::new()]);
            for (_, path) in leaves(&v.node_pool()) {
                let mut prefix = String::new();
                for part in path.split('.') {
                    prefix = join(&prefix, part);
                    nodes.insert(prefix.clone());
                    // A list is sent when its items are.
                    nodes.insert(prefix.trim_end_matches("[]").to_owned());
                }
            }
            nodes
        })
        .collect();
    let sent_by_some = |path: &str| sent.iter().any(|s| s.contains(path));
    let cannot_remove =
        regex::Regex::new(r"^!has\(oldSelf\.(\w+)\) \|\| has\(self\.(\w+)\)$").unwrap();
    let (mut problems, mut held) = (Vec::new(), 0);
    for r in transition_rules(schema) {
        if r.immutable() || !sent_by_some(&r.path) {
            continue;
        }
        match cannot_remove.captures(&r.rule) {
            Some(c) if c[1] == c[2] => {
                let field = join(&r.path, &c[1]);
                let sent_by = sent.iter().filter(|s| s.contains(&field)).count();
                if sent_by == sent.len() {
                    held += 1;
                } else if sent_by > 0 {
                    problems.push(format!(
                        "{field} is sent by some NodePools only, but {:?}",
                        r.message
                    ));
                }
            }
            _ => problems.push(format!(
                "a transition rule on {} (which we send) that this test does not understand: {} ({})",
                r.path, r.rule, r.message
            )),
        }
    }
    (problems, held)
}

#[test]
fn the_other_transition_rules_hold_for_what_we_send() {
    if CRDS.is_none() {
        return;
    }
    let (problems, held) = other_transition_rule_problems(&NODE_POOL_SCHEMA);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Not vacuous: `Arch is required once set` is on spec, and we always send arch.
    assert!(
        held >= 1,
        "no 'cannot be removed once set' rule on a field we send"
    );

    // And the check bites: a rule on something only some NodePools send, a rule it cannot read.
    let mut schema = NODE_POOL_SCHEMA.clone();
    let rules = schema
        .pointer_mut("/properties/spec/x-kubernetes-validations")
        .and_then(Value::as_array_mut)
        .unwrap();
    rules.push(json!({"rule": "!has(oldSelf.replicas) || has(self.replicas)", "message": "m1"}));
    rules.push(json!({"rule": "!has(oldSelf.replicas) || self.replicas >= oldSelf.replicas", "message": "m2"}));
    let (problems, _) = other_transition_rule_problems(&schema);
    let problems = problems.join("\n");
    assert!(
        problems.contains("spec.replicas is sent by some NodePools only"),
        "{problems}"
    );
    assert!(
        problems.contains(
            "does not understand: !has(oldSelf.replicas) || self.replicas >= oldSelf.replicas"
        ),
        "{problems}"
    );
}

// ---- HyperFleet's own NodePool payloads ------------------------------------------------------

/// What HyperFleet's own projects put in a NodePool's `spec` (`fixtures/hyperfleet/spec-shapes/`);
/// `None` (after one line saying so) without the team folder.
fn spec_shapes() -> Option<PathBuf> {
    job_report::team_folder::find(
        env!("CARGO_MANIFEST_DIR"),
        "fixtures/hyperfleet/spec-shapes",
    )
}

/// The `spec: #{…}` value of the first example in a TypeSpec file, as JSON (`#{…}` objects,
/// `#[…]` lists, bare keys, trailing commas).
fn tsp_spec(text: &str) -> Map<String, Value> {
    let start = text.find("spec: #{").expect("a spec") + "spec: #".len();
    let mut depth = 0;
    let mut end = start;
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = start + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let body = text[start..end].replace("#{", "{").replace("#[", "[");
    let keys = regex::Regex::new(r"([{,\s])([A-Za-z_][A-Za-z0-9_]*)\s*:").unwrap();
    let body = keys.replace_all(&body, "$1\"$2\":");
    let trailing = regex::Regex::new(r",(\s*[}\]])").unwrap();
    let body = trailing.replace_all(&body, "$1");
    match serde_json::from_str(&body) {
        Ok(Value::Object(spec)) => spec,
        other => panic!("not a JSON object: {other:?}\n{body}"),
    }
}

/// Validates `raw` as NodePool `name` of the test cluster, checks it against `hc` as the pulse
/// does, builds it and holds the NodePool and its ManifestWork to the real CRDs.
#[track_caller]
fn accepted_and_admitted(what: &str, name: &str, raw: &Map<String, Value>, hc: &Value) -> Value {
    let spec = NodePoolSpec::validate(NODEPOOL_ID, CLUSTER_ID, Some(name), raw)
        .unwrap_or_else(|v| panic!("{what}: refused: {v:#?}"));
    let violations = spec.check_against(&control_plane(hc));
    assert!(violations.is_empty(), "{what}: {violations:#?}");
    let object = np::node_pool(&spec, &placement(hc));
    assert_conforms(what, &validate(&NODE_POOL_SCHEMA, &object));
    let work = manifest_work(&spec, &placement(hc), CONSUMER, Some(1));
    assert_conforms(what, &validate(&MANIFEST_WORK_SCHEMA, &work));
    object
}

fn fields_of(v: &[SpecViolation]) -> Vec<&str> {
    v.iter().map(|v| v.field).collect()
}

/// HyperFleet's e2e GCP NodePool (`create_nodepool_gcp.json`: `clusterName`, `replicas`,
/// `platform.gcp.instanceType`, `release.image`) and its NodePool PATCH (`nodepool-patch.json`,
/// its provider-neutral `template` platform adapted to `gcp` and the GCP model's `diskSize`) are
/// accepted, and the NodePools built from them are admitted by the real CRD. The e2e NodePool's
/// name (17 characters) is longer than HyperFleet's NodePool names may be, and is refused naming
/// `name`.
#[test]
fn hyperfleet_e2e_nodepool_payloads_are_accepted_and_admitted() {
    let (Some(_), Some(dir)) = (CRDS.as_ref(), spec_shapes()) else {
        return;
    };
    let read = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("e2e-payloads").join(file)).unwrap())
            .unwrap()
    };
    let create = read("create_nodepool_gcp.json");
    let Value::Object(create_spec) = create["spec"].clone() else {
        panic!("a spec");
    };
    let cluster_name = create_spec["clusterName"].as_str().unwrap();
    let hc = hosted_cluster(Some(cluster_name));
    let payload_name = create["name"].as_str().unwrap();
    assert_eq!(payload_name, "hp-gcp-nodepool-1");
    let v = NodePoolSpec::validate(NODEPOOL_ID, CLUSTER_ID, Some(payload_name), &create_spec)
        .unwrap_err();
    assert_eq!(fields_of(&v), ["name"], "{v:#?}");

    let created =
        accepted_and_admitted("create_nodepool_gcp.json", LONGEST_NAME, &create_spec, &hc);
    assert_eq!(created["spec"]["clusterName"], cluster_name);
    assert_eq!(created["spec"]["replicas"], 2);
    assert_eq!(
        created["spec"]["platform"]["gcp"]["machineType"],
        "n1-standard-8"
    );
    assert_eq!(created["spec"]["platform"]["gcp"]["zone"], "europe-west2-a");
    assert_eq!(
        created["spec"]["release"]["image"],
        create_spec["release"]["image"]
    );
    // Its clusterName must be the owning cluster's.
    let elsewhere =
        NodePoolSpec::validate(NODEPOOL_ID, CLUSTER_ID, Some(LONGEST_NAME), &create_spec)
            .unwrap()
            .check_against(&control_plane(&HOSTED_CLUSTERS[0]));
    assert_eq!(fields_of(&elsewhere), ["clusterName"]);

    let patch = read("nodepool-patch.json");
    let mut patch_spec = patch["spec"].as_object().unwrap().clone();
    assert_eq!(patch_spec["platform"]["type"], "template");
    let mut platform = patch_spec["platform"]["template"]
        .as_object()
        .unwrap()
        .clone();
    let disk = platform
        .remove("diskSizeGb")
        .expect("the template's diskSizeGb");
    platform.insert("diskSize".into(), disk);
    patch_spec.insert("platform".into(), json!({"type": "gcp", "gcp": platform}));
    let patched =
        accepted_and_admitted("nodepool-patch.json (gcp)", LONGEST_NAME, &patch_spec, &hc);
    assert_eq!(patched["spec"]["replicas"], 3);
    assert_eq!(
        patched["spec"]["platform"]["gcp"]["bootDisk"],
        json!({"diskSizeGB": 200, "diskType": "pd-ssd"})
    );
    assert_eq!(
        patched["spec"]["platform"]["gcp"]["machineType"],
        "n1-standard-16"
    );
    // The control plane's release when the spec names none.
    assert_eq!(
        patched["spec"]["release"]["image"],
        hc["spec"]["release"]["image"]
    );
}

/// The NodePool examples of HyperFleet's GCP API model (`example_nodepool.tsp`,
/// `example_post.tsp`, `example_patch.tsp`) ask for two zones and a CPU utilization target,
/// which a HyperShift NodePool cannot honour: exactly those are refused, by HyperFleet path; with
/// one zone and no target the rest (machine type, disk, preemptible, labels, nodeCount within
/// the enabled autoscaling bounds) is accepted and the NodePool is admitted by the real CRD.
#[test]
fn hyperfleet_api_model_nodepool_examples_are_read() {
    let (Some(_), Some(dir)) = (CRDS.as_ref(), spec_shapes()) else {
        return;
    };
    let hc = &HOSTED_CLUSTERS[0];
    for file in [
        "example_nodepool.tsp",
        "example_post.tsp",
        "example_patch.tsp",
    ] {
        let text =
            std::fs::read_to_string(dir.join("api-spec-gcp-models/nodepool").join(file)).unwrap();
        let raw = tsp_spec(&text);
        assert_eq!(raw["nodeCount"], 3, "{file}");
        let v =
            NodePoolSpec::validate(NODEPOOL_ID, CLUSTER_ID, Some(LONGEST_NAME), &raw).unwrap_err();
        assert_eq!(
            fields_of(&v),
            ["platform.gcp.zones", "autoscaling.targetCPUUtilization"],
            "{file}: {v:#?}"
        );
        let mut one_zone = raw.clone();
        one_zone["platform"]["gcp"]["zones"] = json!(["europe-west2-a"]);
        one_zone["autoscaling"]
            .as_object_mut()
            .unwrap()
            .remove("targetCPUUtilization");
        let object = accepted_and_admitted(file, LONGEST_NAME, &one_zone, hc);
        let spec = &object["spec"];
        assert_eq!(spec["autoScaling"], json!({"min": 1, "max": 10}), "{file}");
        assert!(spec.get("replicas").is_none(), "{file}");
        assert_eq!(
            spec["platform"]["gcp"],
            json!({
                "machineType": "n1-standard-4",
                "zone": "europe-west2-a",
                "subnet": "hcp-psc-subnet",
                "bootDisk": {"diskSizeGB": 100, "diskType": "pd-standard"},
            }),
            "{file}"
        );
        assert_eq!(
            spec["nodeLabels"],
            json!({"managedby": "hyperfleet", "team": "platform"}),
            "{file}"
        );
        assert_eq!(spec["release"]["image"], hc["spec"]["release"]["image"]);
    }
}
