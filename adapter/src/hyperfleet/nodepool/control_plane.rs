//! What a NodePool is checked against once the HostedCluster it joins is known.

use super::gcp::GcpNodePool;
use super::names::Shape;
use super::{NodePoolSpec, PlatformType};
use crate::hyperfleet::spec::{SpecViolation, quoted};

/// What the HostedCluster a NodePool joins is, as the control plane's work holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlPlane {
    /// `metadata.name`: the cluster's name (or id), what the NodePool's `clusterName` is.
    pub name: String,
    /// `spec.platform.type` (`GCP`, `None`, …).
    pub platform: String,
    /// `spec.platform.gcp.region`, for a GCP HostedCluster.
    pub region: Option<String>,
    /// `spec.platform.gcp.networkConfig.privateServiceConnectSubnet.name`: the subnet a GCP
    /// NodePool without `platform.gcp.subnet` uses (the upstream CLI's default).
    pub psc_subnet: Option<String>,
    /// `spec.release.image`: the release of a NodePool without `release.image`.
    pub release_image: Option<String>,
    /// The version it runs (newest `Completed` history entry), `""` when unknown.
    pub version: String,
}

/// A release version `x.y.z` read from a release image tag (`…:4.19.3-x86_64`); `None` for a
/// digest or a tag that does not start with a version.
pub fn release_version(image: &str) -> Option<(u64, u64, u64)> {
    let tag = image.rsplit_once(':')?.1;
    if image.contains('@') {
        return None;
    }
    parse_version(tag)
}

/// `x.y.z` at the start of `text` (anything after the patch number is ignored).
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let patch = digits.parse().ok()?;
    Some((major, minor, patch))
}

/// Most minor versions a NodePool may lag behind its control plane: the NodePool API documents
/// N-2 in the spec and "up to 3 minors" in its condition; only what both refuse is refused here,
/// HyperShift judges the rest (`SupportedVersionSkew`).
pub const MAX_MINOR_SKEW: u64 = 3;

impl NodePoolSpec {
    /// What the NodePool CRD and operator check against the HostedCluster it joins: a GCP
    /// NodePool needs a GCP HostedCluster and a zone in its region; the release may not be newer
    /// than the control plane's, nor more than [`MAX_MINOR_SKEW`] minors older (only when both
    /// versions are known). HyperFleet's `clusterName`, when given, must be the HostedCluster's
    /// name; what defaults from the HostedCluster (zone, subnet, release) must be there.
    pub fn check_against(&self, hc: &ControlPlane) -> Vec<SpecViolation> {
        let mut violations = Vec::new();
        let mut refuse = |field, problem: String| violations.push(SpecViolation { field, problem });
        if let Some(given) = &self.cluster_name
            && !hc.name.is_empty()
            && *given != hc.name
        {
            let (given, name, id) = (quoted(given), quoted(&hc.name), &self.cluster_id);
            refuse(
                "clusterName",
                format!(
                    "is {given} but the NodePool belongs to cluster {name} (owner_references.id {id}): omit clusterName or set it to {name}"
                ),
            );
        }
        if self.platform == PlatformType::Gcp {
            if hc.platform != "GCP" {
                let platform = quoted(&hc.platform);
                refuse(
                    "platform.type",
                    format!(
                        "gcp NodePools need a GCP HostedCluster, but the cluster's HostedCluster has platform {platform}; use platform.type none"
                    ),
                );
            } else if let Some(gcp) = &self.gcp {
                placement(gcp, self.shape, hc, &mut refuse);
            }
        }
        if self.release_image.is_none() && hc.release_image.is_none() {
            refuse(
                "release.image",
                "is required: the cluster's HostedCluster names no release image to default to; give the workers' release pullspec".to_owned(),
            );
        }
        if let Some(problem) = skew(self.release_image.as_deref(), &hc.version) {
            refuse("release.image", problem);
        }
        violations
    }
}

/// A GCP NodePool on a GCP HostedCluster: its zone in the cluster's region, and a zone and a
/// subnet to default to when it names none.
fn placement(
    gcp: &GcpNodePool,
    shape: Shape,
    hc: &ControlPlane,
    refuse: &mut impl FnMut(&'static str, String),
) {
    let zone_field = shape.keys().zone;
    match (&gcp.zone, &hc.region) {
        (Some(zone), Some(region)) if !zone.starts_with(&format!("{region}-")) => {
            let zone = quoted(zone);
            refuse(zone_field, format!("{zone} is not in the cluster's region {region}: use a zone {region}-<letter> (e.g. {region}-a)"));
        }
        (None, None) => refuse(
            zone_field,
            "is required: the cluster's HostedCluster names no region to take the default zone <region>-a from; name a zone of the cluster's region".to_owned(),
        ),
        _ => {}
    }
    if gcp.subnet.is_none() && hc.psc_subnet.is_none() {
        refuse(
            "platform.gcp.subnet",
            "is required: the cluster's HostedCluster has no Private Service Connect subnet to default to; name a subnet of the cluster's VPC in its region".to_owned(),
        );
    }
}

/// What is wrong with the NodePool's release `image` against the control plane's `version`,
/// when both are known.
fn skew(image: Option<&str>, version: &str) -> Option<String> {
    let np = image.and_then(release_version)?;
    let cp = parse_version(version)?;
    let show = |(a, b, c): (u64, u64, u64)| format!("{a}.{b}.{c}");
    let (np_text, cp_text) = (show(np), show(cp));
    if np > cp {
        Some(format!(
            "{np_text} is newer than the control plane, which runs {cp_text}: upgrade the cluster first, then its NodePools"
        ))
    } else if np.0 == cp.0 && cp.1.saturating_sub(np.1) > MAX_MINOR_SKEW {
        Some(format!(
            "{np_text} is more than {MAX_MINOR_SKEW} minor versions older than the control plane's {cp_text}: HyperShift does not support that skew; use a newer release"
        ))
    } else if np.0 < cp.0 {
        Some(format!(
            "{np_text} is a major version older than the control plane's {cp_text}: HyperShift does not support that skew"
        ))
    } else {
        None
    }
}
