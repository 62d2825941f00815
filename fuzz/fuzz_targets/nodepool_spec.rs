//! A HyperFleet NodePool, as the HyperFleet API answers `GET …/nodepools/{id}` or as
//! `NODEPOOL_SPEC_FILE` holds it (an object or a bare spec, HyperFleet or flat shape), through
//! what `hypershift-adapter nodepool` does with it: `NodePoolInput::from_json`, then
//! `nodepool::run` on a backend holding the cluster's available control plane (validate, check
//! against the HostedCluster, build, create; a deleting NodePool is deleted), for the Maestro and
//! the hub backend.
//!
//! Properties: the report is writable; an input that is not a NodePool, or a spec that does not
//! validate or fit the HostedCluster, is `InvalidNodePoolSpec` naming the fields and sends
//! nothing; a spec that validates is created, and the ManifestWork and its NodePool pass the real
//! CRDs.
#![no_main]

use std::sync::LazyLock;

use hypershift_adapter::hyperfleet::nodepool::NodePoolInput;
use hypershift_adapter::hyperfleet::spec::SpecViolation;
use hypershift_adapter::pulse::nodepool::{self, Args, INVALID_NODE_POOL_SPEC};
use hypershift_fuzz::{
    CLUSTER_ID, CONSUMER, Crds, FakeWorks, NODEPOOL_ID, assert_reasons, assert_work_conforms,
    assert_writable, block_on, now, parse_args, reason,
};
use libfuzzer_sys::fuzz_target;

/// The flags of a Job reading `NODEPOOL_SPEC_FILE` for `backend`, with `--nodepool-id` and
/// `--cluster-id` when the object does not carry them.
fn args(backend: &str, nodepool_id: bool, cluster_id: bool) -> Args {
    let mut argv = vec![
        "nodepool",
        "--nodepool-spec",
        "/etc/hyperfleet/nodepool.json",
        "--consumer",
        CONSUMER,
        "--backend",
        backend,
    ];
    if backend == "maestro" {
        argv.extend(["--maestro-api-url", "http://maestro:8000"]);
        argv.extend(["--maestro-grpc-url", "http://maestro-grpc:8090"]);
    }
    if nodepool_id {
        argv.extend(["--nodepool-id", NODEPOOL_ID]);
    }
    if cluster_id {
        argv.extend(["--cluster-id", CLUSTER_ID]);
    }
    let args: Args = parse_args(&argv);
    args.check()
        .unwrap_or_else(|e| panic!("flags {argv:?}: {e}"));
    args
}

/// Per backend, the flags indexed by `[object has an id][object names its cluster]`.
static ARGS: LazyLock<[[[Args; 2]; 2]; 2]> = LazyLock::new(|| {
    ["maestro", "hub"].map(|b| {
        [
            [args(b, true, true), args(b, true, false)],
            [args(b, false, true), args(b, false, false)],
        ]
    })
});

const REFUSED: &[&str] = &[INVALID_NODE_POOL_SPEC];

fuzz_target!(|data: &[u8]| {
    let Some(text) = hypershift_fuzz::text(data) else {
        return;
    };
    let input = match NodePoolInput::from_json(text) {
        Ok(input) => input,
        Err(e) => {
            // `execute`: the input is not a NodePool object or spec.
            let violation = SpecViolation {
                field: "nodepool",
                problem: format!("/etc/hyperfleet/nodepool.json: {e}"),
            };
            let report = nodepool::report_invalid_spec(&[violation], None);
            assert_writable(&report, "not a NodePool");
            assert_reasons(&report, REFUSED, "not a NodePool");
            return;
        }
    };
    let has = |v: &Option<String>| usize::from(v.as_deref().is_some_and(|s| !s.is_empty()));
    for by_backend in ARGS.iter() {
        let args = &by_backend[has(&input.id)][has(&input.cluster_id)];
        let work = FakeWorks {
            control_plane: true,
            ..FakeWorks::default()
        };
        let pulse = nodepool::run(args, &work, input.clone(), now(), std::future::pending());
        let report = match block_on(pulse) {
            Ok(report) => report,
            Err(e) => panic!("a NodePool input gave a configuration error: {e}"),
        };
        assert_writable(&report, "NodePool");
        let sent = work.take_sent();
        match reason(&report, "Applied") {
            INVALID_NODE_POOL_SPEC => {
                assert_reasons(&report, REFUSED, "invalid NodePool");
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
                    "a deleting NodePool was created"
                );
                assert_eq!(sent.len(), 1, "one work per created NodePool");
                if let Some(crds) = Crds::get() {
                    assert_work_conforms(&sent[0], "NodePool", &crds.node_pool, "NodePool");
                }
            }
            "CleanupConfirmed" => {
                assert!(input.deleted_time.is_some() && sent.is_empty());
                assert_eq!(reason(&report, "Finalized"), "CleanupConfirmed");
            }
            other => panic!("unexpected Applied reason {other:?}\n{report:#?}"),
        }
    }
});
