
$c8cd50c3-01d5-4863-b92f-2dd5fa97a5c11.0"0io.open-cluster-management.cloudevents.heartbeat