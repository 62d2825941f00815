//! The plan of one pulse: a pure function from what was read and done so far ([`Seen`]) to the
//! next [`Step`] — read something, write something, or done with an outcome. No IO, no clock
//! read, no logging; [`super::act`] runs it to the end, answering each step.
//!
//! Top to bottom: a spec that breaks rules sends nothing; placement says where the work is
//! ([`place`]); then the work stage ([`work`]).

mod place;
mod work;

use super::object::Object;
use super::step::{Asked, Decision, Seen, Step, Where};
use crate::work::WorkAt;
use crate::work::manifestwork::hosted_cluster_work_name;
use work::{Source, Target, done};

/// The next step of the pulse.
pub fn plan<O: Object>(seen: &Seen<'_, O::Spec>) -> Step {
    let pulse = seen.pulse;
    let name = O::work_name(&pulse.ids);
    if let Asked::Spec(Err(violations)) = &pulse.asked {
        let at = WorkAt::named(pulse.static_consumer(), &name);
        return done(&at, Decision::Invalid(violations.clone()));
    }
    let Where::Static(consumer) = &pulse.placement else {
        return place::plan::<O>(seen, &name);
    };
    let control_plane = hosted_cluster_work_name(&pulse.ids.cluster_id);
    let target = Target {
        at: WorkAt::named(consumer, &name),
        first: None,
        control_plane: Source::Read(WorkAt::named(consumer, &control_plane)),
        search_again: None,
    };
    work::work::<O>(seen, &target)
}
