
$db329441-c13a-427a-a96f-86feff87ed84rec-mgmt-1144924104-work-agent1.0"Oio.open-cluster-management.works.v1alpha1.manifestbundles.status.update_request2¸{"conditions":[{"lastTransitionTime":"2026-11-26T03:39:35Z","message":"The manifests are deleted from the cluster rec-mgmt-1144924104","reason":"ManifestsDeleted","status":"True","type":"Deleted"}],"manifestBundle":{"deleteOption":{"propagationPolicy":"Foreground"},"manifestConfigs":[{"feedbackRules":[{"jsonPaths":[{"name":"status","path":".status"}],"type":"JSONPaths"}],"resourceIdentifier":{"group":"hypershift.openshift.io","name":"rec-1144924104","namespace":"clusters","resource":"hostedclusters"},"updateStrategy":{"type":"ServerSideApply"}}],"manifests":[]}}*'
ce-clusternamerec-mgmt-1144924104*
ce-logtracing{}*®
ce-metadataž›{"annotations":{"hyperfleet.io/generation":"2"},"creationTimestamp":"2026-11-26T03:38:46Z","deletionTimestamp":"2026-11-26T03:39:34Z","labels":{"hyperfleet.io/adapter":"controlplane","hyperfleet.io/cluster-id":"99c744db-2a5a-425b-9982-24f3d626b2fe"},"name":"hostedcluster-99c744db-2a5a-425b-9982-24f3d626b2fe","namespace":"rec-mgmt-1144924104","resourceVersion":"0","uid":"d7d0e658-db4b-545f-9ff8-65223423fe9d"}*
ce-originalsource	maestro*7
ce-resourceid&$d7d0e658-db4b-545f-9ff8-65223423fe9d*
ce-resourceversion*&
ce-sequenceid2125796581427908608*S
ce-statushashB@f0ca13f10c19a4adb840ed8677a4a1979630d47b35dffaa68819c09cbb644b73*
ce-time:÷ÓžØØŠÔ*!
contenttypeapplication/json