//! A planted fake divergence fails: the proof that the differential can fail. A short request
//! sequence of the adapter's path (create, read, report, a refused report, the statuses, delete
//! and the reports that finalize it) goes to the fake and to the real HyperFleet API, recorded
//! and normalized exactly as in the main test. The transcripts agree. Then two of the fake's
//! answers are altered as a wrong fake would answer — the cluster read without its `generation`
//! (a missing field) and the refused report answered 422 instead of 400 (a wrong status code) —
//! and the same [`compare`] must fail, naming exactly those two requests with their diffs.

use jiff::Timestamp;
use serde_json::{Value, json};
use testbed::real::differential::{Transcript, compare};
use testbed::real::{RealSystems, unique};

use super::{
    Body, CLUSTER_ADAPTERS, Finalize, IMAGE_1, Side, Times, compare_sides, fake_side, normalizer,
    report, spec,
};

const SUITE: &str = "real::differential_hyperfleet::planted";
const READ: &str = "GET the cluster";
const REFUSED: &str = "a report without Health (400)";

async fn sequence(side: &mut Side, name: &str, times: &Times) {
    let (_, created) = side
        .call(
            "POST a cluster",
            "POST",
            "/clusters",
            Body::Json(json!({"kind": "Cluster", "name": name, "spec": spec(IMAGE_1)})),
        )
        .await;
    let cluster = format!("/clusters/{}", side.learn(&created, "cluster"));
    let statuses = format!("{cluster}/statuses");
    side.call(READ, "GET", &cluster, Body::None).await;
    side.call(
        "hypershift reports Available=True",
        "PUT",
        &statuses,
        report("hypershift", json!(1), &times.at(1), "True", false),
    )
    .await;
    let Body::Json(mut no_health) = report("hypershift", json!(1), &times.at(2), "True", false)
    else {
        unreachable!()
    };
    no_health["conditions"].as_array_mut().unwrap().remove(2);
    side.call(REFUSED, "PUT", &statuses, Body::Json(no_health))
        .await;
    side.call("the statuses", "GET", &statuses, Body::None)
        .await;
    side.call("DELETE the cluster", "DELETE", &cluster, Body::None)
        .await;
    let finalized = Finalize {
        statuses: &statuses,
        generation: 2,
        first_time: 3,
        read: None,
    };
    finalized
        .by(side, "cluster", &CLUSTER_ADAPTERS, times)
        .await;
    side.call("the cluster, hard-deleted", "GET", &cluster, Body::None)
        .await;
}

/// `fake` with the two planted divergences.
fn planted(fake: &Transcript) -> Transcript {
    let mut t = fake.clone();
    for e in &mut t.exchanges {
        match e.label.as_str() {
            READ => {
                let removed = e.body["body"]
                    .as_object_mut()
                    .and_then(|b| b.remove("generation"));
                assert_eq!(
                    removed,
                    Some(Value::from(1)),
                    "the fake's read had a generation"
                );
            }
            REFUSED => {
                assert_eq!(e.status, 400, "the fake refused the report");
                e.status = 422;
            }
            _ => {}
        }
    }
    t
}

#[tokio::test]
async fn a_planted_fake_divergence_fails_and_names_the_request() {
    let Some(kit) = RealSystems::get(SUITE) else {
        return;
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let name = unique("diff-plant");
    let times = Times(Timestamp::now() - std::time::Duration::from_secs(600));
    let mut real = Side::new(kit.var("HYPERFLEET_API_URL"), None);
    sequence(&mut real, &name, &times).await;
    let mut fake = fake_side().await;
    sequence(&mut fake, &name, &times).await;
    if let Err(report) = compare_sides(&fake, &real) {
        panic!("before anything is planted the fake and the real API must agree: {report}");
    }
    let (nf, nr) = (normalizer(&fake.ids), normalizer(&real.ids));
    let report = compare(&planted(&fake.transcript), &real.transcript, &nf, &nr)
        .expect_err("a planted divergence must fail the comparison");
    println!("{report}");
    for expected in [
        "step 2: GET /api/hyperfleet/v1/clusters/<cluster> (GET the cluster)\n  /body/generation: fake absent | real 1\n",
        "step 4: PUT /api/hyperfleet/v1/clusters/<cluster>/statuses (a report without Health (400))\n  status: fake 422 | real 400\n",
    ] {
        assert!(report.contains(expected), "{expected:?} not in:\n{report}");
    }
    let steps = report.lines().filter(|l| l.starts_with("step ")).count();
    assert_eq!(steps, 2, "only the planted requests differ:\n{report}");
}
