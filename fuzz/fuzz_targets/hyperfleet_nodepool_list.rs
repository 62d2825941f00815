//! A cluster's NodePool list, as the HyperFleet API answers `GET …/clusters/{id}/nodepools` or
//! as `NODEPOOLS_FILE` holds it, read when the cluster is being deleted: `run::load_nodepools`
//! (bounded read, `NodePools::from_list`), then `controlplane::run_with` of the deleting cluster
//! (the nested fixture with `deleted_time`) whose work is on the management cluster.
//!
//! Properties: a list that cannot be read holds the deletion as `NodePoolsUnknown` (nothing
//! deleted) saying why; NodePools listed hold it as `NodePoolsExist` naming them (at most ten,
//! then how many more); an empty list lets the work be deleted (`DeletionRequested`); the report
//! carries `Finalized` and is writable.
#![no_main]

use std::sync::LazyLock;

use hypershift_adapter::hyperfleet::cluster::ClusterInput;
use hypershift_adapter::pulse::controlplane::{self, Args, run::PulseInputs};
use hypershift_fuzz::{
    CLUSTER_NESTED, CONSUMER, CONTROLPLANE_REASONS, FakeWorks, assert_reasons, assert_writable,
    block_on, now, parse_args, reason, scratch_file,
};
use libfuzzer_sys::fuzz_target;

static CLUSTER: LazyLock<ClusterInput> = LazyLock::new(|| {
    let mut cluster = ClusterInput::from_json(CLUSTER_NESTED)
        .unwrap_or_else(|e| panic!("the nested cluster fixture: {e}"));
    cluster.deleted_time = Some("2026-11-26T11:50:00Z".to_owned());
    cluster
});

fuzz_target!(|data: &[u8]| {
    let path = scratch_file("nodepools.json", data);
    let path = path.to_string_lossy();
    let args: Args = parse_args(&[
        "controlplane",
        "--cluster-spec",
        "/etc/hyperfleet/cluster.json",
        "--nodepools-file",
        &path,
        "--consumer",
        CONSUMER,
        "--maestro-api-url",
        "http://maestro:8000",
        "--maestro-grpc-url",
        "http://maestro-grpc:8090",
    ]);
    let nodepools = block_on(controlplane::run::load_nodepools(
        &args,
        CLUSTER.id.as_deref(),
    ));
    if let Err(why) = &nodepools {
        assert!(
            why.contains("NodePool list file"),
            "the refusal must name the file: {why}"
        );
    }
    let listed = nodepools.as_ref().map_or(0, |p| p.total);
    let inputs = PulseInputs {
        nodepools,
        now: now(),
    };
    let work = FakeWorks {
        control_plane: true,
        ..FakeWorks::default()
    };
    let pulse = controlplane::run::run_with(
        &args,
        &work,
        CLUSTER.clone(),
        &inputs,
        std::future::pending(),
    );
    let report = block_on(pulse).unwrap_or_else(|e| panic!("configuration error: {e}"));
    assert_writable(&report, "NodePool list");
    assert_reasons(&report, CONTROLPLANE_REASONS, "NodePool list");
    let deleted = work.deleted.lock().map(|d| d.len()).unwrap_or_default();
    match reason(&report, "Finalized") {
        "NodePoolsUnknown" => assert!(inputs.nodepools.is_err() && deleted == 0),
        "NodePoolsExist" => {
            assert!(listed > 0 && deleted == 0);
            let applied = report
                .condition("Applied")
                .map_or("", |c| c.message.as_str());
            if let Ok(pools) = &inputs.nodepools {
                assert!(applied.contains(&pools.names()) || pools.names().len() > 1000);
            }
        }
        "DeletionRequested" | "FinalizersRunning" => {
            assert_eq!(listed, 0);
            assert_eq!(deleted, 1, "the work is deleted once");
        }
        other => panic!("unexpected Finalized reason {other:?}\n{report:#?}"),
    }
});
