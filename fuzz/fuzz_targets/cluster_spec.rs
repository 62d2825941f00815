//! A HyperFleet cluster, as the HyperFleet API answers `GET …/clusters/{id}` or as
//! `CLUSTER_SPEC_FILE` holds it (a cluster object or a bare spec, nested or flat shape), through
//! what `hypershift-adapter controlplane` does with it: `ClusterInput::from_json`, then
//! `controlplane::run_with` on an empty work backend (validate, build, create; a deleting cluster
//! is deleted), for the Maestro and the hub backend.
//!
//! Properties: the report is writable; an input that is not a cluster is `InvalidClusterSpec`
//! (as `execute` reports it), a spec that does not validate is `InvalidClusterSpec` naming every
//! field (never the validator's internal-error safety net) and sends nothing; a spec that
//! validates is created, and the ManifestWork and its HostedCluster pass the real CRDs.
#![no_main]

use std::sync::LazyLock;

use hypershift_adapter::hyperfleet::cluster::{ClusterInput, SpecViolation};
use hypershift_adapter::hyperfleet::nodepools::NodePools;
use hypershift_adapter::pulse::controlplane::{self, Args, run::PulseInputs};
use hypershift_fuzz::{
    CLUSTER_ID, CONSUMER, Crds, FakeWorks, assert_reasons, assert_work_conforms, assert_writable,
    block_on, now, parse_args, reason,
};
use libfuzzer_sys::fuzz_target;

/// The flags of a Job reading `CLUSTER_SPEC_FILE`, for `backend`, with `--cluster-id` when `id`.
fn args(backend: &str, id: bool) -> Args {
    let mut argv = vec![
        "controlplane",
        "--cluster-spec",
        "/etc/hyperfleet/cluster.json",
        "--consumer",
        CONSUMER,
        "--backend",
        backend,
    ];
    if backend == "maestro" {
        argv.extend(["--maestro-api-url", "http://maestro:8000"]);
        argv.extend(["--maestro-grpc-url", "http://maestro-grpc:8090"]);
    }
    if id {
        argv.extend(["--cluster-id", CLUSTER_ID]);
    }
    let args: Args = parse_args(&argv);
    args.check()
        .unwrap_or_else(|e| panic!("flags {argv:?}: {e}"));
    args
}

static ARGS: LazyLock<[(Args, Args); 2]> =
    LazyLock::new(|| ["maestro", "hub"].map(|b| (args(b, false), args(b, true))));

const REFUSED: &[&str] = &["InvalidClusterSpec"];

fuzz_target!(|data: &[u8]| {
    let Some(text) = hypershift_fuzz::text(data) else {
        return;
    };
    let input = match ClusterInput::from_json(text) {
        Ok(input) => input,
        Err(e) => {
            // `execute`: the input is not a cluster object or spec.
            let problem = format!("/etc/hyperfleet/cluster.json: {e}");
            let violation = SpecViolation {
                field: "cluster",
                problem,
            };
            let report = controlplane::report_invalid_spec(&[violation], None);
            assert_writable(&report, "not a cluster");
            assert_reasons(&report, REFUSED, "not a cluster");
            return;
        }
    };
    for (without_id, with_id) in ARGS.iter() {
        let args = if input.id.as_deref().is_some_and(|id| !id.is_empty()) {
            without_id
        } else {
            with_id
        };
        let work = FakeWorks::default();
        let inputs = PulseInputs {
            nodepools: Ok(NodePools::default()),
            now: now(),
        };
        let pulse = controlplane::run::run_with(
            args,
            &work,
            input.clone(),
            &inputs,
            std::future::pending(),
        );
        let report = match block_on(pulse) {
            Ok(report) => report,
            // A configuration error (exit 2, no report): only an id the flags do not give.
            Err(e) => panic!("a cluster input gave a configuration error: {e}"),
        };
        assert_writable(&report, "cluster");
        let sent = work.take_sent();
        match reason(&report, "Applied") {
            "InvalidClusterSpec" => {
                assert_reasons(&report, REFUSED, "invalid cluster");
                assert!(sent.is_empty(), "an invalid spec sent a work");
                let message = report
                    .condition("Applied")
                    .map_or("", |c| c.message.as_str());
                assert!(
                    message.contains("\n- ") && !message.contains("internal error"),
                    "the refusal must name the fields: {message}"
                );
            }
            "ManifestWorkCreated" => {
                assert!(
                    input.deleted_time.is_none(),
                    "a deleting cluster was created"
                );
                assert_eq!(sent.len(), 1, "one work per created cluster");
                if let Some(crds) = Crds::get() {
                    assert_work_conforms(
                        &sent[0],
                        "HostedCluster",
                        &crds.hosted_cluster,
                        "cluster",
                    );
                }
            }
            // A deleting cluster whose work is gone.
            "CleanupConfirmed" => {
                assert!(input.deleted_time.is_some() && sent.is_empty());
                assert_eq!(reason(&report, "Finalized"), "CleanupConfirmed");
            }
            other => {
                panic!("unexpected Applied reason {other:?} for an empty backend\n{report:#?}")
            }
        }
    }
});
