#!/usr/bin/env bash
# Control-plane and NodePool pulses on kind, with the hub backend (ManifestWorks on the kind API server, no Maestro,
# no work agent: the script writes the status the agent would send back):
#   1. kind cluster, both images built and loaded, CRDs, namespaces, RBAC, the cluster spec ConfigMap; the demo's
#      Jobs and ManifestWorks of an earlier run are deleted, so every run shows the same steps;
#   2. control-plane pulse 1 (generation 1): the adapter creates ManifestWork hostedcluster-<clusterId>
#      → Applied=True, Available=False;
#   3. HostedCluster feedback injected into that work's status (what the work agent would send back);
#   4. control-plane pulse 2 (generation 2, a new Job name): the adapter brings the work to generation 2 and
#      reads the feedback → Available=False Updating, naming the generation-1 control plane that is
#      Available=True (generation 2 is reflected once the agent applies it);
#   5. NodePool pulse 1 (generation 1; the HyperFleet NodePool from a ConfigMap): the HostedCluster is reported
#      Available=True, so the adapter creates ManifestWork nodepool-<nodepoolId> carrying NodePool
#      <name>-<clusterId> in namespace clusters → Applied=True ManifestWorkCreated, Available=False Provisioning;
#   6. NodePool feedback injected into that work's status (GCP: Ready=True, 2 of 2 replicas, version, nodesInfo);
#   7. NodePool pulse 2 (generation 2, a new Job name; the ConfigMap's NodePool says generation 2 too, same spec):
#      the adapter updates the work to generation 2 (Applied=True ManifestWorkUpdated) and reads the feedback
#      → Available=False Updating (the generation-1 NodePool is ready), and the data.hyperfleet.io/* annotations
#      (replicas, version, node versions).
# After each pulse: the Job's conditions and its data.hyperfleet.io/* annotations (written by the status-reporter).
# Needs docker, kind, kubectl (with kustomize). Re-runnable: an existing cluster is reused.
# tests/tests/manifests.rs checks this script parses (bash -n) and that every manifest it names exists, and runs it
# with stand-ins for docker, kind and kubectl, replaying what it applies against an in-process API server with the
# real adapter (the reasons above are the ones that replay gets).
set -euo pipefail

cd "$(dirname "$0")/.."

KIND_CLUSTER=hyperfleet-demo
NAMESPACE=hyperfleet-system
CONSUMER=local-cluster
# A HyperFleet cluster id is a UUIDv7 (36 characters). The Job name hs-cp-<id>-g<generation> becomes a pod label
# value, so it must fit in 63 bytes: 6 + 36 + 2 + at most 10 digits (an int32 generation) = at most 54.
CLUSTER_ID=019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b
HOSTED_CLUSTER_NAME=prod-eu-1 # manifests/kind/cluster-spec.json .name
# The NodePool's id is a UUIDv7 as well, and the only id in its Job name hs-np-<nodepoolId>-g<generation> (at most 54
# bytes, as above). The adapter refuses to run when these differ from the NodePool object's id and owner's id.
NODEPOOL_ID=019a6f24-3c5d-7e8f-a1b2-c3d4e5f6a7b8
NODEPOOL_NAME=workers-a # manifests/kind/nodepool-spec.json .name
TAG=dev

if ! kind get clusters | grep -qx "$KIND_CLUSTER"; then
  kind create cluster --config manifests/kind/kind-config.yaml
fi
kubectl config use-context "kind-$KIND_CLUSTER"

for target in adapter status-reporter; do
  image=$([ "$target" = adapter ] && echo hypershift-adapter || echo status-reporter)
  docker build --target "$target" -t "$image:$TAG" .
  kind load docker-image --name "$KIND_CLUSTER" "$image:$TAG"
done

kubectl apply -f manifests/kind/crds/manifestworks.work.open-cluster-management.io.yaml
kubectl apply -f manifests/kind/crds/hostedclusters.hypershift.openshift.io-demo.yaml
kubectl apply -f manifests/kind/crds/nodepools.hypershift.openshift.io-demo.yaml
kubectl wait --for=condition=Established --timeout=60s \
  crd/manifestworks.work.open-cluster-management.io crd/hostedclusters.hypershift.openshift.io \
  crd/nodepools.hypershift.openshift.io
kubectl apply -f manifests/kind/namespaces.yaml
kubectl apply -f manifests/rbac.yaml
kubectl apply -f manifests/kind/hub-rbac.yaml
kubectl -n "$NAMESPACE" create configmap hypershift-cluster-spec \
  --from-file=cluster.json=manifests/kind/cluster-spec.json --dry-run=client -o yaml | kubectl apply -f -

# An earlier run's Jobs would not run again under the same names (a Job is never re-run), and its works would hold
# generation 2 and the injected feedback: delete both (every Job of the demo carries the cluster's id label).
kubectl -n "$NAMESPACE" delete job -l "hyperfleet.io/cluster-id=$CLUSTER_ID" --ignore-not-found
kubectl -n "$CONSUMER" delete manifestwork "hostedcluster-$CLUSTER_ID" "nodepool-$NODEPOOL_ID" --ignore-not-found

# Prints Job $1's conditions and data annotations.
show() {
  echo "== job/$1 conditions"
  kubectl -n "$NAMESPACE" get "job/$1" -o jsonpath='{.status.conditions}'
  echo
  echo "== job/$1 data.hyperfleet.io/* annotations"
  kubectl -n "$NAMESPACE" get "job/$1" \
    -o go-template='{{range $k, $v := .metadata.annotations}}{{$k}}={{$v}}{{"\n"}}{{end}}' |
    grep '^data\.hyperfleet\.io/' || echo "(none)"
}

# Renders the kustomize overlay $1 for generation $2 (every placeholder filled in), applies it, waits for its Job $3
# and shows it.
run_job() {
  local overlay=$1 generation=$2 job=$3 rendered
  rendered=$(kubectl kustomize --load-restrictor LoadRestrictionsNone "$overlay" | sed \
    -e "s/{{ .clusterId }}/$CLUSTER_ID/g" \
    -e "s/{{ .nodepoolId }}/$NODEPOOL_ID/g" \
    -e "s/{{ .generation }}/$generation/g" \
    -e "s/{{ .managementClusterConsumer }}/$CONSUMER/g" \
    -e "s/{{ .imageTag }}/$TAG/g")
  if grep -q '{{' <<<"$rendered"; then
    echo "unrendered placeholders left:" >&2
    grep '{{' <<<"$rendered" >&2
    exit 1
  fi
  kubectl apply -f - <<<"$rendered"
  kubectl -n "$NAMESPACE" wait --for=condition=Complete --timeout=180s "job/$job" ||
    kubectl -n "$NAMESPACE" describe "job/$job"
  show "$job"
}

# A control-plane pulse for generation $1: manifests/job.yaml through the hub overlay.
pulse() {
  run_job manifests/kind/pulse "$1" "hs-cp-$CLUSTER_ID-g$1"
}

# The NodePool as the HyperFleet API would return it at generation $1: manifests/kind/nodepool-spec.json with its
# top-level generation set. The adapter takes the Job's GENERATION before the object's generation, so the two are
# kept equal rather than letting the Job's value silently win.
nodepool_at() {
  local generation=$1 json
  json=$(sed "s/^  \"generation\": [0-9][0-9]*,\$/  \"generation\": $generation,/" manifests/kind/nodepool-spec.json)
  if ! grep -qx "  \"generation\": $generation," <<<"$json"; then
    echo "manifests/kind/nodepool-spec.json has no top-level line '  \"generation\": <n>,' to set" >&2
    exit 1
  fi
  printf '%s\n' "$json"
}

# A NodePool pulse for generation $1: the ConfigMap hypershift-nodepool-spec (key nodepool.json) holds the NodePool
# at that generation, then manifests/nodepool-job.yaml through the hub overlay.
nodepool_pulse() {
  local generation=$1 nodepool
  nodepool=$(nodepool_at "$generation")
  kubectl -n "$NAMESPACE" create configmap hypershift-nodepool-spec \
    --from-literal=nodepool.json="$nodepool" --dry-run=client -o yaml | kubectl apply -f -
  run_job manifests/kind/nodepool-pulse "$generation" "hs-np-$NODEPOOL_ID-g$generation"
}

# What the work agent would report back on ManifestWork $1 for its manifest number $2 (0-based, in
# spec.workload.manifests), a hypershift.openshift.io/v1beta1 $3 (resource $4) named $5 in namespace clusters, once
# applied: the manifest Applied, Available and StatusFeedbackSynced, and the object's status $6 fed back as JsonRaw
# (the adapter uses the feedback only while the manifest is Available=True; the ManifestWork CRD caps jsonRaw at
# 1024 characters). Every @now@ in $6 becomes the current time. Sent as a merge patch of the status subresource.
inject_feedback() {
  local work=$1 ordinal=$2 kind=$3 resource=$4 name=$5 status=$6 now patch
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  status=${status//@now@/$now}
  patch=$(
    cat <<EOF
{"status":{"resourceStatus":{"manifests":[{
  "resourceMeta":{"ordinal":$ordinal,"group":"hypershift.openshift.io","version":"v1beta1","kind":"$kind",
                  "resource":"$resource","namespace":"clusters","name":"$name"},
  "conditions":[{"type":"Applied","status":"True","reason":"AppliedManifestComplete",
                 "message":"Apply manifest complete","lastTransitionTime":"$now"},
                {"type":"Available","status":"True","reason":"ResourceAvailable",
                 "message":"Resource is available","lastTransitionTime":"$now"},
                {"type":"StatusFeedbackSynced","status":"True","reason":"StatusFeedbackSynced",
                 "message":"","lastTransitionTime":"$now"}],
  "statusFeedback":{"values":[{"name":"status","fieldValue":{"type":"JsonRaw","jsonRaw":$(printf '%s' "$status" | sed 's/"/\\"/g; s/^/"/; s/$/"/')}}]}
}]}}}
EOF
  )
  kubectl -n "$CONSUMER" patch manifestwork "$work" --subresource=status --type=merge -p "$patch"
}

pulse 1

# The HostedCluster applied and available (the adapter uses the feedback only then), running the release the
# cluster spec asks for (desired = completed: no rollout), with the fields its CRD requires in these parts; manifest 1
# of its work (0 is the Namespace).
hc_status='{"conditions":[{"type":"Available","status":"True","reason":"AsExpected","message":"The hosted control plane is available","lastTransitionTime":"@now@"},{"type":"Progressing","status":"False","reason":"AsExpected","message":"HostedCluster is at expected version","lastTransitionTime":"@now@"},{"type":"Degraded","status":"False","reason":"AsExpected","message":"","lastTransitionTime":"@now@"}],"controlPlaneEndpoint":{"host":"api.prod-eu-1.hcp.example.com","port":443},"version":{"desired":{"image":"quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64","version":"4.17.0"},"history":[{"state":"Completed","version":"4.17.0","image":"quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64","startedTime":"@now@","completionTime":"@now@","verified":false}],"observedGeneration":1,"availableUpdates":null}}'
inject_feedback "hostedcluster-$CLUSTER_ID" 1 HostedCluster hostedclusters "$HOSTED_CLUSTER_NAME" "$hc_status"

pulse 2

# The HostedCluster is now reported Available=True: the NodePool's work is created.
nodepool_pulse 1

# The NodePool on GCP once its machines joined: Ready, the 2 desired replicas available, the release it runs, and
# the nodes per version (what the data annotations report); the only manifest of its work.
np_status='{"conditions":[{"type":"Ready","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"@now@"},{"type":"AllMachinesReady","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"@now@"},{"type":"AllNodesHealthy","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"@now@"},{"type":"ValidReleaseImage","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"@now@"},{"type":"UpdatingVersion","status":"False","reason":"AsExpected","message":"","lastTransitionTime":"@now@"}],"replicas":2,"version":"4.17.0","nodesInfo":{"nodeVersions":[{"ocpVersion":"4.17.0","kubeletVersion":"v1.30.4","readyNodeCount":2,"unreadyNodeCount":0}]}}'
inject_feedback "nodepool-$NODEPOOL_ID" 0 NodePool nodepools "$NODEPOOL_NAME-$CLUSTER_ID" "$np_status"

nodepool_pulse 2
