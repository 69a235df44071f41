package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// TestSnapshotUsesRecordedStatus checks that a member with a recorded
// status is not probed (its connection leads nowhere) and comes back as
// recorded, tainted unreachable when the recording says it did not answer,
// and that Recorded gives back what Snapshot saw.
func TestSnapshotUsesRecordedStatus(t *testing.T) {
	e, err := New(Options{Fleet: "f"})
	if err != nil {
		t.Fatal(err)
	}
	ready := api.ClusterStatus{KubernetesVersion: "v1.35.4", Conditions: []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue}}}
	down := api.ClusterStatus{Conditions: []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionFalse}}}
	nowhere := &member.Connection{Host: "https://127.0.0.1:1", Token: "t"}
	members := []Member{
		{Cluster: api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "up"}}, Connection: nowhere, Recorded: &RecordedStatus{Status: ready}},
		{Cluster: api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "down"}}, Connection: nowhere, Recorded: &RecordedStatus{Status: down, Error: "cluster down: timeout"}},
	}
	clusters, reasons := e.Snapshot(context.Background(), members)
	if diff := cmp.Diff(ready, clusters[0].Status); diff != "" {
		t.Errorf("up: status (-recorded +snapshot):\n%s", diff)
	}
	if len(clusters[0].Spec.Taints) != 0 || reasons["up"] != nil {
		t.Errorf("up: taints %v, reason %v; want none", clusters[0].Spec.Taints, reasons["up"])
	}
	if len(clusters[1].Spec.Taints) != 1 || clusters[1].Spec.Taints[0].Key != api.TaintClusterUnreachable {
		t.Errorf("down: taints %v, want %s", clusters[1].Spec.Taints, api.TaintClusterUnreachable)
	}
	if reasons["down"] == nil || reasons["down"].Error() != "cluster down: timeout" {
		t.Errorf("down: reason %v, want the recorded error", reasons["down"])
	}
	want := map[string]RecordedStatus{"up": {Status: ready}, "down": {Status: down, Error: "cluster down: timeout"}}
	if diff := cmp.Diff(want, Recorded(clusters, reasons)); diff != "" {
		t.Errorf("Recorded (-want +got):\n%s", diff)
	}
}
