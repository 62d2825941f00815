//! `networking`: the cluster, service and machine networks, each by the CRD's syntax, and
//! together: one IP family, no overlap with each other (defaults included) or with the
//! OVN-Kubernetes internal subnets.

use std::fmt;

use ipnet::IpNet;
use regex::Regex;
use serde_json::{Map, Value};

use super::names::{SpecNames, SpecShape};
use crate::hyperfleet::spec::{Checker, Invalid, Read, each, json_kind, quoted};

/// OVN-Kubernetes default internal subnets (join and transit switch); cluster, service and machine
/// networks must not overlap them.
const OVN_RESERVED: [(&str, &str); 4] = [
    ("100.64.0.0/16", "the OVN-Kubernetes join subnet"),
    ("100.88.0.0/16", "the OVN-Kubernetes transit subnet"),
    ("fd98::/64", "the OVN-Kubernetes IPv6 join subnet"),
    ("fd97::/64", "the OVN-Kubernetes IPv6 transit subnet"),
];
/// Networks the API server fills in when the spec leaves them out (`hypershift-api.md` §1.4).
const DEFAULT_CLUSTER_NETWORK: &str = "10.132.0.0/14";
const DEFAULT_SERVICE_NETWORK: &str = "172.31.0.0/16";

const EXPECTED: &str = "a network in CIDR notation, IPv4 (10.0.0.0/16) or IPv6 (fd01::/48)";

/// A CIDR as written in the spec (sent verbatim) and parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cidr {
    pub text: String,
    pub net: IpNet,
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One `networking.clusterNetwork[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNetwork {
    pub cidr: Cidr,
    /// `hostPrefix`: the prefix length of each node's share of the network; `None` leaves it to
    /// HyperShift.
    pub host_prefix: Option<u8>,
}

/// The three network lists of a valid spec (each empty when unset).
pub(super) struct Networks {
    pub cluster: Vec<ClusterNetwork>,
    pub service: Vec<Cidr>,
    pub machine: Vec<Cidr>,
}

/// The three networks: syntax per the CRD (1–2 entries per list), a network address (no host
/// bits), `hostPrefix` within the network, one IP family, no overlap with each other (defaults
/// included) or with OVN-Kubernetes internal subnets.
pub(super) fn networks(c: &mut Checker<'_>, names: &SpecNames) -> Read<Networks> {
    let networks = match names.shape {
        SpecShape::Flat => flat(c, names)?,
        SpecShape::Nested => nested(c, names)?,
    };
    let nets = nets(names, &networks);
    one_family(c, &nets)?;
    no_overlaps(c, &nets)?;
    Ok(networks)
}

/// The flat shape's three keys, one CIDR each (the machine network required).
fn flat(c: &mut Checker<'_>, names: &SpecNames) -> Read<Networks> {
    let cluster = cidr_field(c, names.cluster_network_cidr, false);
    let service = cidr_field(c, names.service_network_cidr, false);
    let machine = cidr_field(c, names.machine_network_cidr, true);
    let host_prefix = None;
    let cluster = cluster?.map(|cidr| ClusterNetwork { cidr, host_prefix });
    Ok(Networks {
        cluster: cluster.into_iter().collect(),
        service: service?.into_iter().collect(),
        machine: machine?.into_iter().collect(),
    })
}

/// The nested shape's lists: `clusterNetwork[{cidr, hostPrefix}]`, `serviceNetwork[]` (strings)
/// and `machineNetwork[{cidr}]`.
fn nested(c: &mut Checker<'_>, names: &SpecNames) -> Read<Networks> {
    let unset = format!("the API server then uses {DEFAULT_CLUSTER_NETWORK}");
    let cluster = entries(c, names.cluster_network, &unset, |c, at, item| {
        let entry = entry_object(c, (names.cluster_network, at), item, "{cidr, hostPrefix}")?;
        let cidr = entry_cidr(c, (names.cluster_network_cidr, at), entry.get("cidr"));
        let host_prefix = match entry.get("hostPrefix").filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(v) => host_prefix(c, (names.host_prefix, at), v, cidr.as_ref().ok()).map(Some),
        };
        let (cidr, host_prefix) = (cidr?, host_prefix?);
        Ok(ClusterNetwork { cidr, host_prefix })
    });
    let unset = format!("the API server then uses {DEFAULT_SERVICE_NETWORK}");
    let service = entries(c, names.service_network, &unset, |c, at, item| {
        entry_cidr(c, (names.service_network_cidr, at), Some(item))
    });
    let unset = "the HostedCluster then has no machineNetwork";
    let machine = entries(c, names.machine_network, unset, |c, at, item| {
        let entry = entry_object(c, (names.machine_network, at), item, "{cidr}")?;
        entry_cidr(c, (names.machine_network_cidr, at), entry.get("cidr"))
    });
    let (cluster, service, machine) = (cluster?, service?, machine?);
    Ok(Networks {
        cluster,
        service,
        machine,
    })
}

/// Every entry of the nested list `list` read by `read` (with the prefix naming the entry in a
/// list of two, `entry [1]: `); none when the list is unset. A list that is not an array, is
/// empty or has more than the CRD's 2 entries is refused (`unset` says what leaving it out does).
fn entries<'a, T>(
    c: &mut Checker<'a>,
    list: &'static str,
    unset: &str,
    mut read: impl FnMut(&mut Checker<'a>, &str, &'a Value) -> Read<T>,
) -> Read<Vec<T>> {
    let Some(items) = c.list(list, "an array")? else {
        return Ok(Vec::new());
    };
    let problem = match items.len() {
        0 => format!("is empty: give 1 or 2 entries, or leave it out ({unset})"),
        1 | 2 => {
            return each(items.iter().enumerate(), |(i, item)| {
                read(c, &at(i, items.len()), item)
            });
        }
        n => format!(
            "has {n} entries: the HostedCluster takes 1 or 2 (one IP family, so in practice one)"
        ),
    };
    c.refuse(list, problem)
}

/// A list entry that must be an object `{what}`; `at` says which entry.
fn entry_object<'a>(
    c: &mut Checker<'_>,
    (list, at): (&'static str, &str),
    item: &'a Value,
    what: &str,
) -> Read<&'a Map<String, Value>> {
    let Value::Object(entry) = item else {
        let found = json_kind(item);
        return c.refuse(
            list,
            format!("{at}each entry must be an object {what}, found {found}"),
        );
    };
    Ok(entry)
}

/// The prefix naming entry `i` in a violation, when the list has more than one.
fn at(i: usize, len: usize) -> String {
    if len > 1 {
        format!("entry [{i}]: ")
    } else {
        String::new()
    }
}

/// One entry's CIDR (a string), or a violation naming `field` (`at` says which entry).
fn entry_cidr(
    c: &mut Checker<'_>,
    (field, at): (&'static str, &str),
    value: Option<&Value>,
) -> Read<Cidr> {
    let problem = match value.filter(|v| !v.is_null() && v.as_str() != Some("")) {
        None => format!("{at}is required: {EXPECTED}"),
        Some(Value::String(text)) => return cidr(c, (field, at), text),
        Some(other) => format!(
            "{at}must be a string ({EXPECTED}), found {}",
            json_kind(other)
        ),
    };
    c.refuse(field, problem)
}

/// `text` as a CIDR ([`parse_cidr`]), or a violation naming `field` (`at` says which entry).
fn cidr(c: &mut Checker<'_>, (field, at): (&'static str, &str), text: &str) -> Read<Cidr> {
    match parse_cidr(text) {
        Ok(net) => Ok(Cidr {
            text: text.to_owned(),
            net,
        }),
        Err(problem) => c.refuse(field, format!("{at}{} {problem}", quoted(text))),
    }
}

/// `hostPrefix`: an integer from the network's own prefix length to the address size (32 for
/// IPv4, 128 for IPv6): each node gets a `/hostPrefix` share of the network.
fn host_prefix(
    c: &mut Checker<'_>,
    (field, at): (&'static str, &str),
    value: &Value,
    cidr: Option<&Cidr>,
) -> Read<u8> {
    let (min, max) = match cidr.map(|c| &c.net) {
        Some(net @ IpNet::V4(_)) => (net.prefix_len(), 32),
        Some(net @ IpNet::V6(_)) => (net.prefix_len(), 128),
        None => (0, 128),
    };
    let within = value.as_u64().and_then(|n| u8::try_from(n).ok());
    if let Some(n) = within.filter(|n| (min..=max).contains(n)) {
        return Ok(n);
    }
    let of = cidr.map_or_else(String::new, |c| format!(" for {}", c.text));
    let found = json_kind(value);
    let problem = if value.is_u64() || value.is_i64() {
        format!(
            "{at}{value} is out of range{of}: expected an integer from {min} to {max}, the prefix length of each node's share of the cluster network (e.g. 23)"
        )
    } else {
        format!(
            "{at}must be an integer from {min} to {max} (the prefix length of each node's share of the cluster network), found {found}"
        )
    };
    c.refuse(field, problem)
}

/// One CIDR field of the flat shape: `Ok(None)` when unset (and optional).
fn cidr_field(c: &mut Checker<'_>, field: &'static str, required: bool) -> Read<Option<Cidr>> {
    let text = if required {
        Some(c.required(field, EXPECTED)?)
    } else {
        c.optional(field)
    };
    match text {
        Some(text) => cidr(c, (field, ""), text).map(Some),
        // A value of another type is refused (by `optional`), not unset.
        None if c.set(field).is_some_and(|v| !v.is_string()) => Err(Invalid),
        None => Ok(None),
    }
}

/// Parses a CIDR by the CRD's syntax rule (≤ 43 characters) and as an address/prefix, and refuses
/// host bits.
pub fn parse_cidr(text: &str) -> Result<IpNet, String> {
    if text.len() > 43 || !(cidr_v4_syntax().is_match(text) || cidr_v6_syntax().is_match(text)) {
        return Err(format!("is not valid: expected {EXPECTED}"));
    }
    let net: IpNet = text
        .parse()
        .map_err(|_| format!("is not a valid CIDR: expected {EXPECTED} with octets ≤ 255 and prefix ≤ 32 (IPv4) or ≤ 128 (IPv6)"))?;
    if net.trunc() != net {
        return Err(format!(
            "has host bits set: the network address is {}",
            net.trunc()
        ));
    }
    Ok(net)
}

/// `networking.*Network[].cidr`, IPv4 form of the CRD rule.
fn cidr_v4_syntax() -> &'static Regex {
    regex!(r"^((\d{1,3}\.){3}\d{1,3}/\d{1,2})$")
}

/// `networking.*Network[].cidr`, IPv6 form of the CRD rule.
pub(super) fn cidr_v6_syntax() -> &'static Regex {
    regex!(r"^([0-9a-fA-F]{0,4}:){2,7}([0-9a-fA-F]{0,4})?/[0-9]{1,3}$")
}

/// One network of the three lists (or the default of an unset list), for the cross checks.
struct Net {
    /// The field named when this entry is at fault.
    field: &'static str,
    /// How a violation about it starts: its CIDR, after `entry [1]: ` in a list of two.
    shown: String,
    /// How messages about another entry name it: `spec.networking.clusterNetwork[0].cidr
    /// 10.0.0.0/16`.
    described: String,
    net: IpNet,
    defaulted: bool,
}

impl Net {
    fn family(&self) -> &'static str {
        match self.net {
            IpNet::V4(_) => "IPv4",
            IpNet::V6(_) => "IPv6",
        }
    }

    fn overlaps(&self, other: &IpNet) -> bool {
        self.net.contains(other) || other.contains(&self.net)
    }
}

/// Every network of the three lists, and the default of an unset cluster or service network.
fn nets(names: &SpecNames, networks: &Networks) -> Vec<Net> {
    let cluster: Vec<Cidr> = networks.cluster.iter().map(|n| n.cidr.clone()).collect();
    let lists: [(_, _, &[Cidr], _); 3] = [
        (
            names.cluster_network,
            names.cluster_network_cidr,
            &cluster,
            Some(DEFAULT_CLUSTER_NETWORK),
        ),
        (
            names.service_network,
            names.service_network_cidr,
            &networks.service,
            Some(DEFAULT_SERVICE_NETWORK),
        ),
        (
            names.machine_network,
            names.machine_network_cidr,
            &networks.machine,
            None,
        ),
    ];
    let mut nets = Vec::new();
    for (list, entry, cidrs, default) in lists {
        if cidrs.is_empty() {
            let default = default.and_then(|text| Some((text, text.parse().ok()?)));
            nets.extend(default.map(|(text, net)| Net {
                field: list,
                shown: text.to_owned(),
                described: format!("the default {list} {text} (used because {list} is not set)"),
                net,
                defaulted: true,
            }));
        }
        for (i, Cidr { text, net }) in cidrs.iter().enumerate() {
            let indexed = match names.shape {
                SpecShape::Flat => entry.to_owned(),
                SpecShape::Nested => entry.replacen("[]", &format!("[{i}]"), 1),
            };
            nets.push(Net {
                field: entry,
                shown: format!("{}{text}", at(i, cidrs.len())),
                described: format!("{indexed} {text}"),
                net: *net,
                defaulted: false,
            });
        }
    }
    nets
}

/// One IP family (defaults included): names the explicit one of the first mismatching pair.
fn one_family(c: &mut Checker<'_>, nets: &[Net]) -> Read<()> {
    let mismatch = nets.iter().enumerate().find_map(|(i, a)| {
        let b = nets[i + 1..].iter().find(|b| a.family() != b.family())?;
        // The named entry is explicit: two defaults never conflict.
        Some(if b.defaulted { (a, b) } else { (b, a) })
    });
    let Some((this, other)) = mismatch else {
        return Ok(());
    };
    let (shown, family) = (&this.shown, this.family());
    let (described, other_family) = (&other.described, other.family());
    c.refuse(this.field, format!("{shown} is {family} but {described} is {other_family}: all cluster networks must use one IP family"))
}

/// No network overlaps another (the explicit one of each pair named) or an OVN-Kubernetes
/// internal subnet.
fn no_overlaps(c: &mut Checker<'_>, nets: &[Net]) -> Read<()> {
    let before = c.violations.len();
    for (i, a) in nets.iter().enumerate() {
        for b in nets[i + 1..].iter().filter(|b| a.overlaps(&b.net)) {
            // The named entry is explicit: two defaults never overlap.
            let (this, other) = if b.defaulted { (a, b) } else { (b, a) };
            let (shown, described) = (&this.shown, &other.described);
            c.violation(
                this.field,
                format!("{shown} overlaps {described}; choose non-overlapping ranges"),
            );
        }
        if a.defaulted {
            continue;
        }
        for (reserved, what) in OVN_RESERVED {
            if reserved.parse().is_ok_and(|r| a.overlaps(&r)) {
                let shown = &a.shown;
                c.violation(
                    a.field,
                    format!("{shown} overlaps {what} {reserved}; choose another range"),
                );
            }
        }
    }
    (c.violations.len() == before).then_some(()).ok_or(Invalid)
}
