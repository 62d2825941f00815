//! Synthetic clusters for tests, the testbed and benchmarks: deterministic for a given seed.
//!
//! [`synthetic_cluster`] yields compact [`NodeSummary`]s for the pure judge ([`judge`] and
//! [`judge_csrs`] judge a whole set at once); [`node_object`] and
//! [`lease_object`] turn them into the full Kubernetes objects an API server would serve;
//! [`csr_object`] builds a CertificateSigningRequest around a request the caller made (the
//! testbed makes real ones with rcgen).

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};
use job_report::ConditionStatus;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    ContainerImage, Node, NodeAddress, NodeCondition, NodeSpec, NodeStatus, NodeSystemInfo, Taint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};

use super::csr::{
    CsrState, CsrSummary, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, KubeletSigner,
};
use super::judge::{
    CsrFindings, Findings, Judge, NodeSummary, ReadyState, TaintSummary, Thresholds,
};
use super::source::LeaseRenewal;

/// The verification taint key synthetic nodes carry.
pub const SYNTHETIC_TAINT: &str = "node.example.com/unverified";

/// The limits at the flags' defaults (the `args` tests check that they agree).
impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            not_ready_grace: SignedDuration::from_mins(5),
            stuck_terminating_after: SignedDuration::from_mins(30),
            stale_heartbeat_after: SignedDuration::from_mins(2),
            verification_taints: Vec::new(),
            verification_grace: SignedDuration::from_mins(15),
            min_ready_nodes: 1,
            expected_nodes: None,
            csr_pending_grace: SignedDuration::from_mins(10),
        }
    }
}

/// A synthetic node and its lease.
#[derive(Debug, Clone)]
pub struct SyntheticNode {
    pub summary: NodeSummary,
    pub lease: LeaseRenewal,
}

/// `n` nodes named `node-00000`…, mostly healthy; roughly 1 in 50 has some problem (NotReady,
/// pressure, cordoned, unverified, terminating with a finalizer, stale lease), chosen by a
/// PRNG seeded with `seed`, half of them younger and half older than the default thresholds.
pub fn synthetic_cluster(n: usize, seed: u64, now: Timestamp) -> Vec<SyntheticNode> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let created = now - SignedDuration::from_hours(24 * 7);
    (0..n)
        .map(|i| {
            let name = format!("node-{i:05}");
            let mut summary = NodeSummary {
                name: name.clone(),
                created: Some(created),
                ready: Some(ReadyState {
                    status: ConditionStatus::True,
                    since: Some(created),
                    heartbeat: Some(now - SignedDuration::from_secs(rng.i64(0..300))),
                }),
                ..NodeSummary::default()
            };
            let mut renewed = now - SignedDuration::from_secs(rng.i64(0..10));
            if rng.usize(0..50) == 0 {
                // Half the problems are young (within every grace), half old (past all).
                let age = SignedDuration::from_secs(if rng.bool() {
                    rng.i64(0..100)
                } else {
                    rng.i64(2000..7200)
                });
                match rng.u8(0..8) {
                    0 => {
                        summary.ready = Some(ReadyState {
                            status: ConditionStatus::False,
                            since: Some(now - age),
                            heartbeat: Some(now - age),
                        });
                    }
                    1 => {
                        summary.ready = Some(ReadyState {
                            status: ConditionStatus::Unknown,
                            since: Some(now - age),
                            heartbeat: Some(now - age),
                        });
                        renewed = now - age;
                    }
                    2 => summary.memory_pressure = true,
                    3 => {
                        summary.disk_pressure = true;
                        summary.pid_pressure = rng.bool();
                    }
                    4 => summary.network_unavailable = true,
                    5 => summary.unschedulable = true,
                    6 => {
                        summary.taints.push(TaintSummary {
                            key: SYNTHETIC_TAINT.to_owned(),
                            time_added: Some(now - age),
                        });
                    }
                    _ => {
                        summary.deleting_since = Some(now - age);
                        summary.finalizers = vec!["example.com/node-cleanup".to_owned()];
                    }
                }
            }
            SyntheticNode {
                lease: LeaseRenewal {
                    node: name,
                    renewed: Some(renewed),
                },
                summary,
            }
        })
        .collect()
}

/// Judges a whole set of certificate signing requests at once, as `collect` does page by page.
pub fn judge_csrs<'c>(
    csrs: impl IntoIterator<Item = &'c CsrSummary>,
    now: Timestamp,
    thresholds: &Thresholds,
) -> CsrFindings {
    let judge = Judge {
        now,
        thresholds,
        leases: &HashMap::new(),
    };
    let mut findings = CsrFindings::default();
    for csr in csrs {
        judge.csr(&mut findings, csr);
    }
    findings.sorted()
}

/// Judges a whole set of nodes at once, as `collect` does page by page.
pub fn judge<'n>(
    nodes: impl IntoIterator<Item = &'n NodeSummary>,
    leases: &HashMap<String, Timestamp>,
    now: Timestamp,
    thresholds: &Thresholds,
) -> Findings {
    let judge = Judge {
        now,
        thresholds,
        leases,
    };
    let mut findings = Findings::default();
    for node in nodes {
        judge.node(&mut findings, node);
    }
    findings.leases = leases.len();
    findings.sorted()
}

/// The Node an API server would serve for `summary`, with the bulk a real kubelet adds
/// (addresses, capacity, node info, 20 images) so parsing costs what it costs for real.
pub fn node_object(summary: &NodeSummary) -> Node {
    node_object_with_images(summary, 20)
}

/// [`node_object`] with `images` container images in its status (the kubelet reports up to
/// 50 by default, which makes a Node about 15 KB of JSON).
pub fn node_object_with_images(summary: &NodeSummary, images: u16) -> Node {
    let time = |t: Option<Timestamp>| t.map(Time);
    let condition = |type_: &str, status: &str, since: Option<Timestamp>| NodeCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        last_transition_time: time(since),
        last_heartbeat_time: summary.ready.and_then(|r| r.heartbeat).map(Time),
        reason: Some(format!("Kubelet{type_}")),
        message: Some(format!("kubelet reports {type_} is {status}")),
    };
    let flag = |b: bool| if b { "True" } else { "False" };
    let mut conditions = vec![
        condition(
            "MemoryPressure",
            flag(summary.memory_pressure),
            summary.created,
        ),
        condition("DiskPressure", flag(summary.disk_pressure), summary.created),
        condition("PIDPressure", flag(summary.pid_pressure), summary.created),
        condition(
            "NetworkUnavailable",
            flag(summary.network_unavailable),
            summary.created,
        ),
    ];
    if let Some(ready) = summary.ready {
        conditions.push(condition("Ready", ready.status.as_str(), ready.since));
    }
    let capacity: BTreeMap<String, Quantity> = [
        ("cpu", "16"),
        ("memory", "65843724Ki"),
        ("pods", "250"),
        ("ephemeral-storage", "104845292Ki"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), Quantity(v.to_owned())))
    .collect();
    let images = (0..i64::from(images))
        .map(|i| ContainerImage {
            names: Some(vec![
                format!("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:{i:064x}"),
                format!("quay.io/openshift-release-dev/ocp-v4.0-art-dev:component-{i}"),
            ]),
            size_bytes: Some(400_000_000 + i),
        })
        .collect();
    Node {
        metadata: ObjectMeta {
            name: Some(summary.name.clone()),
            creation_timestamp: time(summary.created),
            deletion_timestamp: time(summary.deleting_since),
            finalizers: (!summary.finalizers.is_empty()).then(|| summary.finalizers.clone()),
            labels: Some(
                [
                    ("kubernetes.io/hostname", summary.name.as_str()),
                    ("kubernetes.io/os", "linux"),
                    ("node-role.kubernetes.io/worker", ""),
                    ("topology.kubernetes.io/zone", "us-east-1a"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            ),
            resource_version: Some("12345".to_owned()),
            uid: Some(format!(
                "00000000-0000-0000-0000-{:012}",
                summary.name.len()
            )),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            unschedulable: summary.unschedulable.then_some(true),
            taints: (!summary.taints.is_empty()).then(|| {
                summary
                    .taints
                    .iter()
                    .map(|t| Taint {
                        key: t.key.clone(),
                        effect: "NoSchedule".to_owned(),
                        time_added: time(t.time_added),
                        value: None,
                    })
                    .collect()
            }),
            provider_id: Some(format!("aws:///us-east-1a/i-{}", summary.name)),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            conditions: Some(conditions),
            addresses: Some(vec![
                NodeAddress {
                    type_: "InternalIP".to_owned(),
                    address: "10.0.1.23".to_owned(),
                },
                NodeAddress {
                    type_: "Hostname".to_owned(),
                    address: summary.name.clone(),
                },
            ]),
            allocatable: Some(capacity.clone()),
            capacity: Some(capacity),
            images: Some(images),
            node_info: Some(NodeSystemInfo {
                architecture: "amd64".to_owned(),
                boot_id: "b".to_owned(),
                container_runtime_version: "cri-o://1.33.0".to_owned(),
                kernel_version: "5.14.0".to_owned(),
                kube_proxy_version: "v1.33.0".to_owned(),
                kubelet_version: "v1.33.0".to_owned(),
                machine_id: "m".to_owned(),
                operating_system: "linux".to_owned(),
                os_image: "Red Hat Enterprise Linux CoreOS".to_owned(),
                system_uuid: "s".to_owned(),
                ..NodeSystemInfo::default()
            }),
            ..NodeStatus::default()
        }),
    }
}

/// The Lease in `kube-node-lease` an API server would serve for `lease`.
pub fn lease_object(lease: &LeaseRenewal) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(lease.node.clone()),
            namespace: Some("kube-node-lease".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(lease.node.clone()),
            lease_duration_seconds: Some(40),
            renew_time: lease.renewed.map(MicroTime),
            ..LeaseSpec::default()
        }),
    }
}

/// The identity OpenShift's node bootstrap requests a joining node's first client certificate as.
pub const BOOTSTRAPPER: &str =
    "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper";

/// A synthetic kubelet certificate signing request, without its request bytes (the caller
/// makes a real request for `CN=system:node:<node>` when it needs the object).
#[derive(Debug, Clone)]
pub struct SyntheticCsr {
    pub name: String,
    pub created: Timestamp,
    pub signer: &'static str,
    pub username: String,
    /// The node the request names.
    pub node: String,
    /// `Approved`, `Denied` or `Failed` conditions; none while pending.
    pub conditions: Vec<&'static str>,
}

impl SyntheticCsr {
    /// What a source makes of this request when its bytes name `node`.
    pub fn summary(&self) -> CsrSummary {
        let state = CsrState::from_conditions(self.conditions.iter().map(|c| (*c, "True")));
        let signer = KubeletSigner::from_name(self.signer);
        let relevant = signer.is_some() && state == CsrState::Pending;
        CsrSummary {
            name: self.name.clone(),
            created: Some(self.created),
            signer,
            state,
            node: relevant.then(|| self.node.clone()),
            requester: if relevant {
                self.username.clone()
            } else {
                String::new()
            },
        }
    }
}

/// `n` certificate signing requests named `csr-00000`… for nodes `node-00000`…, as a busy
/// cluster holds them: mostly approved renewals and serving requests (the API server deletes
/// them an hour later), some bootstrap requests, one in 20 denied, one in 5 pending — half of
/// those within the default grace, half past it — chosen by a PRNG seeded with `seed`.
pub fn synthetic_csrs(n: usize, seed: u64, now: Timestamp) -> Vec<SyntheticCsr> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|i| {
            let node = format!("node-{i:05}");
            let signer = if rng.bool() {
                KUBELET_CLIENT_SIGNER
            } else {
                KUBELET_SERVING_SIGNER
            };
            let username = if signer == KUBELET_CLIENT_SIGNER && rng.u8(0..4) == 0 {
                BOOTSTRAPPER.to_owned()
            } else {
                format!("system:node:{node}")
            };
            let (age, conditions) = match rng.u8(0..20) {
                0 => (rng.i64(60..3000), vec!["Denied"]),
                1..=2 => (rng.i64(0..500), vec![]),
                3..=4 => (rng.i64(700..80_000), vec![]),
                _ => (rng.i64(0..3000), vec!["Approved"]),
            };
            SyntheticCsr {
                name: format!("csr-{i:05}"),
                created: now - SignedDuration::from_secs(age),
                signer,
                username,
                node,
                conditions,
            }
        })
        .collect()
}

/// The CertificateSigningRequest an API server would serve: `request_pem` as `spec.request`,
/// the usages the kubelet asks for with `signer`, and for each of `conditions` (`Approved`,
/// `Denied`, `Failed`) a condition with status `True` as the approver or signer writes it; an
/// approved request also carries a certificate (never parsed by the check).
pub fn csr_object(
    name: &str,
    created: Timestamp,
    signer: &str,
    username: &str,
    request_pem: &[u8],
    conditions: &[&str],
) -> CertificateSigningRequest {
    let usages: &[&str] = if signer == KUBELET_SERVING_SIGNER {
        &["digital signature", "server auth"]
    } else {
        &["digital signature", "client auth"]
    };
    let conditions: Vec<CertificateSigningRequestCondition> = conditions
        .iter()
        .map(|type_| CertificateSigningRequestCondition {
            type_: (*type_).to_owned(),
            status: "True".to_owned(),
            reason: Some(format!("{type_}ByTest")),
            message: Some(format!("{type_} by the test")),
            last_transition_time: Some(Time(created + SignedDuration::from_secs(1))),
            last_update_time: Some(Time(created + SignedDuration::from_secs(1))),
        })
        .collect();
    let certificate = conditions.iter().any(|c| c.type_ == "Approved").then(|| {
        ByteString(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".to_vec())
    });
    CertificateSigningRequest {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            creation_timestamp: Some(Time(created)),
            resource_version: Some("12345".to_owned()),
            uid: Some(format!("00000000-0000-0000-0000-{:012}", name.len())),
            ..ObjectMeta::default()
        },
        spec: CertificateSigningRequestSpec {
            request: ByteString(request_pem.to_vec()),
            signer_name: signer.to_owned(),
            username: Some(username.to_owned()),
            groups: Some(vec![
                "system:authenticated".to_owned(),
                if username.starts_with("system:node:") {
                    "system:nodes".to_owned()
                } else {
                    "system:serviceaccounts".to_owned()
                },
            ]),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            ..CertificateSigningRequestSpec::default()
        },
        status: Some(CertificateSigningRequestStatus {
            certificate,
            conditions: (!conditions.is_empty()).then_some(conditions),
        }),
    }
}

/// A real PKCS#10 request in PEM, as a kubelet makes one: subject `O=system:nodes,
/// CN=<common_name>`, a fresh P-256 key.
#[cfg(test)]
pub(crate) fn request_pem(common_name: &str) -> String {
    #![allow(clippy::unwrap_used)]
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:nodes");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    let key = rcgen::KeyPair::generate().unwrap();
    params.serialize_request(&key).unwrap().pem().unwrap()
}
