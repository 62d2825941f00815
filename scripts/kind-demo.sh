#!/usr/bin/env bash
# One control-plane pulse on kind, with the hub backend (ManifestWorks on the kind API server, no Maestro):
#   1. kind cluster, both images built and loaded, CRDs, namespaces, RBAC, the cluster spec ConfigMap;
#   2. pulse 1 (generation 1): the adapter creates ManifestWork hostedcluster-<id> → Applied=True, Available=False;
#   3. HostedCluster feedback injected into the ManifestWork status (what the work agent would send back);
#   4. pulse 2 (generation 2, a new Job name): the adapter reads the feedback → Available=True.
# Needs docker, kind, kubectl (with kustomize). Re-runnable: an existing cluster is reused.
# tests/tests/manifests.rs checks this script parses (bash -n) and that every manifest it names exists.
set -euo pipefail

cd "$(dirname "$0")/.."

KIND_CLUSTER=hyperfleet-demo
NAMESPACE=hyperfleet-system
CONSUMER=local-cluster
# A HyperFleet cluster id is a UUIDv7 (36 characters). The Job name hs-cp-<id>-g<generation> becomes a pod label
# value, so it must fit in 63 bytes: 6 + 36 + 2 + at most 10 digits (an int32 generation) = at most 54.
CLUSTER_ID=019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b
HOSTED_CLUSTER_NAME=prod-eu-1 # manifests/kind/cluster-spec.json .name
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
kubectl wait --for=condition=Established --timeout=60s \
  crd/manifestworks.work.open-cluster-management.io crd/hostedclusters.hypershift.openshift.io
kubectl apply -f manifests/kind/namespaces.yaml
kubectl apply -f manifests/rbac.yaml
kubectl apply -f manifests/kind/hub-rbac.yaml
kubectl -n "$NAMESPACE" create configmap hypershift-cluster-spec \
  --from-file=cluster.json=manifests/kind/cluster-spec.json --dry-run=client -o yaml | kubectl apply -f -

# Renders manifests/job.yaml through the hub overlay for generation $1 and applies it; prints the Job name.
pulse() {
  local generation=$1 rendered
  rendered=$(kubectl kustomize --load-restrictor LoadRestrictionsNone manifests/kind/pulse | sed \
    -e "s/{{ .clusterId }}/$CLUSTER_ID/g" \
    -e "s/{{ .generation }}/$generation/g" \
    -e "s/{{ .managementClusterConsumer }}/$CONSUMER/g" \
    -e "s/{{ .imageTag }}/$TAG/g")
  if grep -q '{{' <<<"$rendered"; then
    echo "unrendered placeholders left:" >&2
    grep '{{' <<<"$rendered" >&2
    exit 1
  fi
  kubectl apply -f - <<<"$rendered" >&2
  local job="hs-cp-$CLUSTER_ID-g$generation"
  kubectl -n "$NAMESPACE" wait --for=condition=Complete --timeout=180s "job/$job" >&2 ||
    kubectl -n "$NAMESPACE" describe "job/$job" >&2
  echo "$job"
}

show() {
  echo "== job/$1 conditions"
  kubectl -n "$NAMESPACE" get "job/$1" -o jsonpath='{.status.conditions}'
  echo
  echo "== report-data: $(kubectl -n "$NAMESPACE" get "job/$1" -o jsonpath='{.metadata.annotations.hyperfleet\.io/report-data}')"
}

job=$(pulse 1)
show "$job"

# What the work agent would report back from the management cluster: the HostedCluster applied and available
# (the adapter uses the feedback only then), and its status as JsonRaw
# (the CRD caps jsonRaw at 1024 characters).
hc_status='{"conditions":[{"type":"Available","status":"True","reason":"AsExpected","message":"The hosted control plane is available"},{"type":"Progressing","status":"False","reason":"AsExpected","message":"HostedCluster is at expected version"},{"type":"Degraded","status":"False","reason":"AsExpected","message":""}],"controlPlaneEndpoint":{"host":"api.prod-eu-1.hcp.example.com","port":443},"version":{"history":[{"state":"Completed","version":"4.17.0"}]}}'
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
patch=$(
  cat <<EOF
{"status":{"resourceStatus":{"manifests":[{
  "resourceMeta":{"ordinal":1,"group":"hypershift.openshift.io","version":"v1beta1","kind":"HostedCluster",
                  "resource":"hostedclusters","namespace":"clusters","name":"$HOSTED_CLUSTER_NAME"},
  "conditions":[{"type":"Applied","status":"True","reason":"AppliedManifestComplete",
                 "message":"Apply manifest complete","lastTransitionTime":"$now"},
                {"type":"Available","status":"True","reason":"ResourceAvailable",
                 "message":"Resource is available","lastTransitionTime":"$now"},
                {"type":"StatusFeedbackSynced","status":"True","reason":"StatusFeedbackSynced",
                 "message":"","lastTransitionTime":"$now"}],
  "statusFeedback":{"values":[{"name":"status","fieldValue":{"type":"JsonRaw","jsonRaw":$(printf '%s' "$hc_status" | sed 's/"/\\"/g; s/^/"/; s/$/"/')}}]}
}]}}}
EOF
)
kubectl -n "$CONSUMER" patch manifestwork "hostedcluster-$CLUSTER_ID" \
  --subresource=status --type=merge -p "$patch"

job=$(pulse 2)
show "$job"
