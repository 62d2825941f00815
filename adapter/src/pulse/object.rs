//! What differs between the objects a pulse ships (a cluster's `HostedCluster`, a NodePool's
//! `NodePool`): one trait, two implementations ([`super::controlplane::ControlPlane`],
//! [`super::nodepool::NodePool`]), driven by one pipeline. Every method is pure.

use job_report::Report;
use serde_json::Value;

use super::step::{Deletion, Ids, Pulse};
use crate::hyperfleet::spec::SpecViolation;
use crate::hypershift::find_in;
use crate::hypershift::immutable::ImmutableChange;
use crate::message::Conditions;
use crate::work::ExistingWork;
use crate::work::feedback::ObjectDeletion;
use crate::work::manifestwork::Owner;
use crate::work::outcome::{ObjectRef, WorkRef};

/// The object of `kind` the work `current` holds and the one `manifest` carries, when both do.
pub fn held_and_new<'a>(
    current: &'a ExistingWork,
    manifest: &'a Value,
    kind: &str,
) -> Option<(&'a Value, &'a Value)> {
    let new = manifest["spec"]["workload"]["manifests"].as_array()?;
    Some((find_in(&current.workload, kind)?, find_in(new, kind)?))
}

/// One kind of object a pulse ships in a work.
pub trait Object {
    /// Its validated spec.
    type Spec;
    /// What the cluster's control plane must offer before the object is sent (`()`: nothing).
    type Gate;
    /// `HostedCluster`, `NodePool`.
    const KIND: &'static str;
    /// The reason of a spec that breaks rules (`InvalidClusterSpec`, `InvalidNodePoolSpec`).
    const INVALID: &'static str;
    /// Whether a create or update waits for the cluster's control plane ([`Self::gate`]).
    const GATED: bool;
    /// Whether placement chooses the object's management cluster (a control plane), or the
    /// object follows the cluster's control plane (a NodePool).
    const PLACES: bool;

    /// The work's name.
    fn work_name(ids: &Ids) -> String;

    /// The labels that make a work this object's.
    fn owner(ids: &Ids) -> Owner;

    /// Whether the cluster's control plane, as its work holds it (`None`: there is none on
    /// `consumer`), can take the object: what it offers, or why not.
    fn gate(
        pulse: &Pulse<Self::Spec>,
        consumer: &str,
        control_plane: Option<&ExistingWork>,
    ) -> Result<Self::Gate, String>;

    /// The region placement chooses a management cluster in (an object placement does not
    /// place has none).
    fn region(_spec: &Self::Spec) -> &str {
        ""
    }

    /// The spec's violations against what the control plane offers (none by default).
    fn fits(_spec: &Self::Spec, _gate: &Self::Gate) -> Vec<SpecViolation> {
        Vec::new()
    }

    /// The work to send for `spec` on `consumer`.
    fn manifest(
        pulse: &Pulse<Self::Spec>,
        spec: &Self::Spec,
        consumer: &str,
        gate: &Self::Gate,
    ) -> Value;

    /// Immutable fields `spec` would change on the object the work holds, known before the
    /// control plane is read (a change needs a person whatever it offers; none by default).
    fn held_changes(_work: &ExistingWork, _spec: &Self::Spec) -> Vec<ImmutableChange> {
        Vec::new()
    }

    /// Immutable fields of the object `current` holds that `manifest` would change.
    fn changes(current: &ExistingWork, manifest: &Value, spec: &Self::Spec)
    -> Vec<ImmutableChange>;

    /// Whether a deletion must wait (the cluster's NodePools are listed, or cannot be; never by
    /// default).
    fn holds_deletion(_pulse: &Pulse<Self::Spec>) -> bool {
        false
    }

    /// The object's `(namespace, name)` for messages: from the spec, the work's manifest, or what
    /// the pulse would build.
    fn place(pulse: &Pulse<Self::Spec>, work: Option<&ExistingWork>) -> (String, String);

    /// The object at `(namespace, name)` as messages and the work's status name it.
    fn object<'a>(place: (&'a str, &'a str)) -> ObjectRef<'a>;

    /// What the agent fed back of the deletion of the object at `place` in `work`.
    fn object_deletion(work: Option<&ExistingWork>, place: (&str, &str)) -> ObjectDeletion {
        let object = Self::object(place);
        let manifest =
            work.and_then(|w| w.manifest(object.group, object.resource, place.0, place.1));
        ObjectDeletion::from_manifest(manifest)
    }

    /// A report with `conditions` and the object's `data` (`asked`: with what the spec of this
    /// pulse asks for).
    fn report(
        generation: Option<i64>,
        conditions: Conditions,
        asked: Option<&Pulse<Self::Spec>>,
    ) -> Report;

    /// The report of a work created now.
    fn created(pulse: &Pulse<Self::Spec>, work: WorkRef<'_>) -> Report;

    /// The report of what the agent and the object's status say about `existing`, at
    /// `generation`.
    fn observed(
        pulse: &Pulse<Self::Spec>,
        work: WorkRef<'_>,
        existing: &ExistingWork,
        generation: Option<i64>,
    ) -> Report;

    /// The report of a deleting resource (the conditions with `Finalized`): the work gone,
    /// its deletion requested, or held.
    fn deletion(pulse: &Pulse<Self::Spec>, work: WorkRef<'_>, deletion: &Deletion) -> Report;

    /// How the "newer generation, work being deleted" row names the management cluster.
    fn deleting_on(consumer: &str) -> String;
}
