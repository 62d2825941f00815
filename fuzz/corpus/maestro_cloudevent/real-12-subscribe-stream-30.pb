
$31c94596-7419-4b8d-a553-ac2f5cec1d0arec-mgmt-1144924104-work-agent1.0"Oio.open-cluster-management.works.v1alpha1.manifestbundles.status.update_request2ê{"conditions":[{"lastTransitionTime":"2026-11-26T03:46:31Z","message":"The manifests are deleted from the cluster rec-mgmt-1144924104","reason":"ManifestsDeleted","status":"True","type":"Deleted"}],"manifestBundle":{"manifests":null}}*'
ce-clusternamerec-mgmt-1144924104*
ce-logtracing{}*®
ce-metadataž›{"annotations":{"hyperfleet.io/generation":"2"},"creationTimestamp":"2026-11-26T03:38:46Z","deletionTimestamp":"2026-11-26T03:46:30Z","labels":{"hyperfleet.io/adapter":"controlplane","hyperfleet.io/cluster-id":"991dd9b0-9655-46da-8f33-81ee4c819d63"},"name":"hostedcluster-991dd9b0-9655-46da-8f33-81ee4c819d63","namespace":"rec-mgmt-1144924104","resourceVersion":"0","uid":"430184e5-1628-5611-b466-f5eae38a8766"}*
ce-originalsource	maestro*7
ce-resourceid&$430184e5-1628-5611-b466-f5eae38a8766*
ce-resourceversion*&
ce-sequenceid2125798326887518208*S
ce-statushashB@dcae4f1a8209809de6523bc2d8898c6f7ea47a44f8ae5d1f004232680e75690a*
ce-time:—×žØ•Í¦d*!
contenttypeapplication/json