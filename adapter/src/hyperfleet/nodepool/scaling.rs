//! The NodePool's size: a fixed number of workers, or bounds for the autoscaler.

use super::MAX_REPLICAS;
use crate::hyperfleet::spec::{Checker, Invalid, Read};

/// How many machines: fixed, or bounds for the autoscaler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    Replicas(i64),
    Autoscaling { min: i64, max: i64 },
}

/// HyperFleet autoscaling settings a NodePool has no place for (its `autoScaling` is only
/// `{min, max}`, `hypershift-api.md` §3.2): refused when set rather than dropped.
const UNSUPPORTED_AUTOSCALING: &[&str] = &[
    "autoscaling.targetCPUUtilization",
    "autoscaling.targetMemoryUtilization",
    "autoscaling.scaleDownDelay",
    "autoscaling.scaleUpDelay",
];

const COUNT: (i64, i64) = (0, MAX_REPLICAS);

/// The flat shape's size: `replicas` xor `autoscaling.{min, max}`; autoscaling needs min ≥ 1 on
/// GCP and None. The CRD refuses both together and also accepts neither (0 machines); one is
/// required here on purpose: a forgotten size would silently mean a NodePool without workers.
pub(super) fn flat(c: &mut Checker<'_>) -> Read<Scaling> {
    let replicas = c.integer("replicas", COUNT, "");
    let autoscaling = c.object("autoscaling", "an object {min, max}")?;
    match (replicas?, autoscaling) {
        (Some(_), Some(_)) => c.refuse(
            "autoscaling",
            "cannot be set together with replicas: set replicas for a fixed size, or autoscaling.min and autoscaling.max",
        ),
        (Some(n), None) => Ok(Scaling::Replicas(n)),
        (None, None) => c.refuse(
            "replicas",
            "is required: set replicas (a fixed number of workers, 0 allowed) or autoscaling.min and autoscaling.max",
        ),
        (None, Some(_)) => {
            let min = c.integer("autoscaling.min", (1, MAX_REPLICAS), "");
            let max = c.integer("autoscaling.max", (1, MAX_REPLICAS), "");
            let required = "is required with autoscaling (at least 1: scaling from zero is not supported for GCP and None NodePools)";
            let min = c.require("autoscaling.min", min, required);
            let max = c.require("autoscaling.max", max, required);
            let (min, max) = bounds(c, ("autoscaling.min", "autoscaling.max"), (min, max))?;
            Ok(Scaling::Autoscaling { min, max })
        }
    }
}

/// HyperFleet's size: `nodeCount` or `replicas` (the same setting: its API model says
/// `nodeCount`, its e2e suite `replicas`), and `autoscaling.{enabled, minNodes, maxNodes}`.
/// Autoscaling enabled → the NodePool's `autoScaling {min, max}` (min ≥ 1 on GCP and None), a
/// count given beside it must lie within the bounds and is not sent (the CRD refuses both);
/// disabled → the count, required (0 allowed), bounds ignored; bounds without `enabled` are
/// refused as ambiguous.
pub(super) fn hyperfleet(c: &mut Checker<'_>) -> Read<Scaling> {
    let count = node_count(c);
    c.object("autoscaling", "an object {enabled, minNodes, maxNodes}")?;
    let enabled = c.boolean("autoscaling.enabled");
    let min = c.integer("autoscaling.minNodes", COUNT, "");
    let max = c.integer("autoscaling.maxNodes", COUNT, "");
    for field in UNSUPPORTED_AUTOSCALING {
        if c.set(field).is_some() {
            c.violation(
                field,
                "is not supported: a HyperShift NodePool's autoScaling has only a minimum and a maximum (hypershift-api.md §3.2); remove it",
            );
        }
    }
    let bounds_given = !matches!(min, Ok(None)) || !matches!(max, Ok(None));
    match enabled? {
        Some(true) => autoscaler(c, count, (min, max)),
        None if bounds_given => c.refuse(
            "autoscaling.enabled",
            "is required with autoscaling.minNodes or maxNodes: true to autoscale between them, false for a fixed nodeCount",
        ),
        _ => c
            .require(
                "nodeCount",
                count.1,
                "is required: set nodeCount (a fixed number of workers, 0 allowed) or autoscaling.enabled true with minNodes and maxNodes",
            )
            .map(Scaling::Replicas),
    }
}

/// `nodeCount` or `replicas`, which must agree when both are given: the field named in a
/// violation about the count, and the count.
fn node_count(c: &mut Checker<'_>) -> (&'static str, Read<Option<i64>>) {
    let node_count = c.integer("nodeCount", COUNT, "");
    let replicas = c.integer("replicas", COUNT, "");
    let field = if matches!(node_count, Ok(None)) && !matches!(replicas, Ok(None)) {
        "replicas"
    } else {
        "nodeCount"
    };
    let count = match (node_count, replicas) {
        (Ok(Some(a)), Ok(Some(b))) if a != b => c.refuse(
            "nodeCount",
            format!(
                "is {a} but replicas is {b}: both set the number of workers (HyperFleet's API model says nodeCount, its e2e suite replicas); give one"
            ),
        ),
        (Ok(a), Ok(b)) => Ok(a.or(b)),
        _ => Err(Invalid),
    };
    (field, count)
}

/// Autoscaling enabled: `minNodes` ≥ 1 and `maxNodes` ≥ `minNodes` required, and a count given
/// beside them within them.
fn autoscaler(
    c: &mut Checker<'_>,
    (count_field, count): (&'static str, Read<Option<i64>>),
    (min, max): (Read<Option<i64>>, Read<Option<i64>>),
) -> Read<Scaling> {
    let min = match min {
        Ok(Some(0)) => c.refuse(
            "autoscaling.minNodes",
            "must be at least 1 (got 0): scaling from zero is not supported for GCP and None NodePools",
        ),
        min => c.require(
            "autoscaling.minNodes",
            min,
            "is required with autoscaling.enabled true (at least 1: scaling from zero is not supported for GCP and None NodePools)",
        ),
    };
    let max = c.require(
        "autoscaling.maxNodes",
        max,
        "is required with autoscaling.enabled true (at least autoscaling.minNodes)",
    );
    let fields = ("autoscaling.minNodes", "autoscaling.maxNodes");
    let (min, max) = bounds(c, fields, (min, max))?;
    match count? {
        Some(n) if !(min..=max).contains(&n) => c.refuse(
            count_field,
            format!(
                "is {n}, outside autoscaling.minNodes–maxNodes ({min}–{max}): with autoscaling enabled the autoscaler sizes the NodePool between them; give a count within them or omit it"
            ),
        ),
        _ => Ok(Scaling::Autoscaling { min, max }),
    }
}

/// The autoscaler's bounds (`fields` names them), when both are read and the maximum is at least
/// the minimum.
fn bounds(
    c: &mut Checker<'_>,
    (min_field, max_field): (&'static str, &'static str),
    (min, max): (Read<i64>, Read<i64>),
) -> Read<(i64, i64)> {
    let (min, max) = (min?, max?);
    if max < min {
        return c.refuse(
            max_field,
            format!("must be at least {min_field} ({min}), got {max}"),
        );
    }
    Ok((min, max))
}
