//! The adapter's requests: the hub backend (`HubWorkClient`: ManifestWork get, create, update
//! guarded by the resourceVersion, delete, with and without the hub's finalizer, in a consumer
//! namespace that does not exist), the placement lease (`PlacementLock`: create, 409, GET, PUT
//! with the read resourceVersion, release, take-over of an expired lease) and the `nodes`
//! check's paged reads (Nodes, node Leases, CertificateSigningRequests with `limit` and
//! `continue`).

use std::time::Duration;

use hypershift_adapter::placement::lease::{Acquired, KubeLeases, PlacementLock, lease_name};
use hypershift_adapter::work::WorkClient;
use hypershift_adapter::work::hub::{DEFAULT_TIMEOUT, HubWorkClient};
use hypershift_adapter::work::manifestwork::{
    Delivery, Owner, ResourceIdentifier, WorkManifest, hosted_cluster_work_name, manifest_work,
};
use serde_json::{Value, json};

use super::{Pair, Side};

const ID: &str = "019ac6d2-7c1e-7b3a-9f4e-2d6c8a1b3e5f";
const HUB_FINALIZER: &str = "cluster.open-cluster-management.io/manifest-work-cleanup";
const JSON_PATCH: &str = "application/json-patch+json";

/// The control plane's work as the adapter builds it (one owned HostedCluster).
fn work(consumer: &str, image: &str, generation: i64) -> Value {
    let hosted_cluster = json!({
        "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
        "metadata": {"name": "c-019ac6d2", "namespace": "clusters"},
        "spec": {"release": {"image": image}, "platform": {"type": "None"}},
    });
    let manifest = WorkManifest {
        object: hosted_cluster,
        identifier: ResourceIdentifier {
            group: "hypershift.openshift.io".into(),
            resource: "hostedclusters".into(),
            namespace: "clusters".into(),
            name: "c-019ac6d2".into(),
        },
        delivery: Delivery::Owned,
    };
    let owner = Owner {
        labels: vec![
            ("hyperfleet.io/cluster-id", ID.to_owned()),
            ("hyperfleet.io/adapter", "controlplane".to_owned()),
        ],
    };
    manifest_work(
        &hosted_cluster_work_name(ID),
        consumer,
        &owner,
        Some(generation),
        vec![manifest],
    )
}

/// Records what the product code concluded (its `Debug`), beside the requests it made.
fn outcome<T: std::fmt::Debug>(side: &Side, what: &str, value: &T) {
    side.proxy.note(what, json!(format!("{value:?}")));
}

async fn hub_sequence(side: &Side) {
    let ns = side.ns.clone();
    let name = hosted_cluster_work_name(ID);
    let hub = HubWorkClient::new(side.client().await, &ns, DEFAULT_TIMEOUT);
    const IMAGE_1: &str = "quay.io/openshift-release-dev/ocp-release:4.19.3-multi";
    const IMAGE_2: &str = "quay.io/openshift-release-dev/ocp-release:4.19.4-multi";

    side.proxy
        .step("adapter (hub): get a work that does not exist");
    outcome(side, "get", &hub.get(&name).await);
    side.proxy.step("adapter (hub): create the work");
    outcome(side, "create", &hub.create(&work(&ns, IMAGE_1, 2)).await);
    side.proxy.step("adapter (hub): create it again (409)");
    outcome(side, "create", &hub.create(&work(&ns, IMAGE_1, 2)).await);
    side.proxy.step("adapter (hub): get the work");
    let first = hub.get(&name).await.unwrap().unwrap();
    side.proxy
        .step("adapter (hub): update it (JSON patch guarded by the resourceVersion)");
    outcome(
        side,
        "update",
        &hub.update(&work(&ns, IMAGE_2, 3), &first).await,
    );
    side.proxy
        .step("adapter (hub): update from the stale read (409)");
    outcome(
        side,
        "update",
        &hub.update(&work(&ns, IMAGE_1, 4), &first).await,
    );

    let missing = format!("{ns}-gone");
    let elsewhere = HubWorkClient::new(side.client().await, &missing, DEFAULT_TIMEOUT);
    side.proxy
        .step("adapter (hub): create in a consumer namespace that does not exist (404)");
    outcome(
        side,
        "create",
        &elsewhere.create(&work(&missing, IMAGE_1, 2)).await,
    );

    // The hub's finalizer, as its controllers put it; then delete, re-delete, release.
    let path =
        format!("/apis/work.open-cluster-management.io/v1/namespaces/{ns}/manifestworks/{name}");
    side.raw(
        "hub controller: add its finalizer",
        "PATCH",
        &path,
        Some("application/merge-patch+json"),
        Some(&json!({"metadata": {"finalizers": [HUB_FINALIZER]}})),
    )
    .await;
    side.proxy
        .step("adapter (hub): delete the work (held by the finalizer)");
    outcome(side, "delete", &hub.delete(&name).await);
    side.proxy.step("adapter (hub): get the work being deleted");
    let deleting = hub.get(&name).await;
    outcome(
        side,
        "get",
        &deleting
            .as_ref()
            .map(|w| w.as_ref().map(|w| w.deleting.is_some())),
    );
    side.proxy.step("adapter (hub): delete it again");
    outcome(side, "delete", &hub.delete(&name).await);
    side.raw(
        "hub controller: remove its finalizer (the deletion completes)",
        "PATCH",
        &path,
        Some(JSON_PATCH),
        Some(&json!([{"op": "remove", "path": "/metadata/finalizers"}])),
    )
    .await;
    side.proxy
        .step("adapter (hub): get and delete a work that is gone (404)");
    outcome(side, "get", &hub.get(&name).await.map(|w| w.is_some()));
    outcome(side, "delete", &hub.delete(&name).await);
    side.proxy
        .step("adapter (hub): update a work that is gone (404)");
    outcome(
        side,
        "update",
        &hub.update(&work(&ns, IMAGE_1, 5), &first).await,
    );
}

#[tokio::test]
async fn hub_backend_manifest_works() {
    let Some(pair) = Pair::new("diff-hub").await else {
        return;
    };
    hub_sequence(&pair.real).await;
    hub_sequence(&pair.fake).await;
    pair.assert_same();
}

fn lock(holder: &str, leases: KubeLeases) -> PlacementLock<KubeLeases> {
    PlacementLock {
        api: Ok(leases),
        holder: holder.to_owned(),
        wait: Duration::ZERO,
    }
}

async fn lease_sequence(side: &Side) {
    let ns = side.ns.clone();
    let consumer = "mgmt-euw2-01";
    let name = lease_name(consumer);
    let leases = KubeLeases::connect(Some(&side.kubeconfig()), &ns)
        .await
        .unwrap();
    let pod_a = lock(
        "hs-cp-019ac6d2-7c1e-7b3a-9f4e-2d6c8a1b3e5f-g2-a1b2c",
        leases.clone(),
    );
    let pod_b = lock(
        "hs-cp-019ac6d2-7c1e-7b3a-9f4e-2d6c8a1b3e5f-g3-d4e5f",
        leases,
    );
    let mut never = std::future::pending::<()>();

    side.proxy
        .step("adapter (placement): take a new lease (create)");
    let held = pod_a.acquire(consumer, &mut never).await;
    side.proxy
        .step("adapter (placement): another pulse finds it held (create 409, get)");
    let busy = pod_b.acquire(consumer, &mut never).await;
    outcome(side, "acquire", &matches!(busy, Acquired::Busy { .. }));
    side.proxy
        .step("adapter (placement): release (PUT, holder cleared)");
    let Acquired::Held(held) = held else {
        panic!("the first pulse did not get the lease: {held:?}");
    };
    pod_a.release(held).await;
    side.proxy
        .step("adapter (placement): take the released lease (create 409, get, PUT)");
    let taken = pod_b.acquire(consumer, &mut never).await;
    outcome(side, "acquire", &matches!(taken, Acquired::Held(_)));

    let path = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}");
    let (_, current) = side.raw("read the lease", "GET", &path, None, None).await;
    let mut stale = current.clone();
    stale["metadata"]["resourceVersion"] = json!(
        (current["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            - 1)
        .to_string()
    );
    stale["spec"]["holderIdentity"] = json!("someone-else");
    side.raw(
        "PUT with a stale resourceVersion (409)",
        "PUT",
        &path,
        Some("application/json"),
        Some(&stale),
    )
    .await;
    // An expired lease (renewed long ago) is taken over: leaseTransitions + 1.
    let mut expired = current;
    expired["spec"]["renewTime"] = json!("2026-01-01T00:00:00.000000Z");
    side.raw(
        "a pulse that died: its lease expires",
        "PUT",
        &path,
        Some("application/json"),
        Some(&expired),
    )
    .await;
    side.proxy
        .step("adapter (placement): take over the expired lease");
    let over = pod_a.acquire(consumer, &mut never).await;
    outcome(side, "acquire", &matches!(over, Acquired::Held(_)));
    side.raw("read the lease taken over", "GET", &path, None, None)
        .await;
    side.raw(
        "GET a lease that does not exist (404)",
        "GET",
        &format!(
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{}",
            lease_name("mgmt-none")
        ),
        None,
        None,
    )
    .await;
}

#[tokio::test]
async fn placement_lease() {
    let Some(pair) = Pair::new("diff-lease").await else {
        return;
    };
    lease_sequence(&pair.real).await;
    lease_sequence(&pair.fake).await;
    pair.assert_same();
}
