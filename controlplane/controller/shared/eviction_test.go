package shared

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
)

func TestEvictionTasks(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := metav1.NewTime(t0)
	added := metav1.NewTime(t0.Add(-2 * time.Minute))
	noExec := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	noSched := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}
	fleet := map[string]*api.Cluster{"a": sharedtest.Tainted("a", noExec), "b": sharedtest.Tainted("b"), "c": sharedtest.Tainted("c", noSched)}
	prev := []api.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 2}, {Name: "c", Replicas: 2}}
	task := api.GracefulEvictionTask{
		FromCluster: "a", PurgeMode: api.PurgeModeGracefully, Replicas: ptr.To[int32](2),
		Reason: EvictionReasonTaintUntolerated, Producer: EvictionProducerTaintManager,
		Message:                "cluster a has the untolerated taint maintenance:NoExecute",
		ClustersBeforeFailover: []string{"a", "b", "c"}, CreationTimestamp: &at,
	}
	older := api.GracefulEvictionTask{FromCluster: "x", Reason: "Other", Producer: "p"}
	tests := []struct {
		name    string
		spec    api.ResourceBindingSpec
		next    []api.TargetCluster
		want    []api.GracefulEvictionTask
		wantErr string
		// noStatus: cluster a reported no status.
		noStatus bool
	}{
		{name: "a NoExecute cluster that leaves gets a task", spec: api.ResourceBindingSpec{Clusters: prev},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}, want: []api.GracefulEvictionTask{task}},
		{name: "a cluster that leaves without a NoExecute taint gets none", spec: api.ResourceBindingSpec{Clusters: prev},
			next: []api.TargetCluster{{Name: "a", Replicas: 3}, {Name: "b", Replicas: 3}}},
		{name: "a tolerated taint is not a failover", spec: api.ResourceBindingSpec{Clusters: prev,
			Placement: &api.Placement{ClusterTolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}}}},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}},
		{name: "a toleration whose tolerationSeconds passed is a failover (Karmada needEviction)", spec: api.ResourceBindingSpec{Clusters: prev,
			Placement: &api.Placement{ClusterTolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](60)}}}},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}},
			want: []api.GracefulEvictionTask{task}},
		{name: "purgeMode Directly makes no task", spec: api.ResourceBindingSpec{Clusters: prev,
			Failover: &api.FailoverBehavior{Cluster: &api.ClusterFailoverBehavior{PurgeMode: api.PurgeModeImmediately}}},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}},
		{name: "existing tasks are kept and not doubled", spec: api.ResourceBindingSpec{Clusters: prev, GracefulEvictionTasks: []api.GracefulEvictionTask{older, task}},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}, want: []api.GracefulEvictionTask{older, task}},
		{name: "a cluster that stays gets none", spec: api.ResourceBindingSpec{Clusters: prev}, next: prev},
		{name: "purgeMode Directly with statePreservation makes a task with the state", spec: api.ResourceBindingSpec{Clusters: prev,
			Failover: &api.FailoverBehavior{Cluster: &api.ClusterFailoverBehavior{PurgeMode: api.PurgeModeDirectly,
				StatePreservation: &api.StatePreservation{Rules: []api.StatePreservationRule{{AliasLabelName: "job", JSONPath: "{.job}"}}}}}},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}, want: []api.GracefulEvictionTask{func() api.GracefulEvictionTask {
				tk := task
				tk.PurgeMode, tk.PreservedLabelState = api.PurgeModeDirectly, map[string]string{"job": "j-1"}
				return tk
			}()}},
		{name: "statePreservation without the cluster's status waits", noStatus: true, spec: api.ResourceBindingSpec{Clusters: prev,
			Failover: &api.FailoverBehavior{Cluster: &api.ClusterFailoverBehavior{
				StatePreservation: &api.StatePreservation{Rules: []api.StatePreservationRule{{AliasLabelName: "job", JSONPath: "{.job}"}}}}}},
			next: []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}, wantErr: "the status has not been collected from cluster a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := []api.AggregatedStatusItem{{ClusterName: "a", Status: &runtime.RawExtension{Raw: []byte(`{"job":"j-1"}`)}}}
			if tt.noStatus {
				status = nil
			}
			got, err := EvictionTasks(&tt.spec, status, tt.next, fleet, t0)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssessEvictions(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	created := func(ago time.Duration) *metav1.Time { at := metav1.NewTime(t0.Add(-ago)); return &at }
	task := func(from string, ago time.Duration, edit ...func(*api.GracefulEvictionTask)) api.GracefulEvictionTask {
		tk := api.GracefulEvictionTask{FromCluster: from, PurgeMode: api.PurgeModeGracefully, CreationTimestamp: created(ago)}
		for _, e := range edit {
			e(&tk)
		}
		return tk
	}
	scheduled := []api.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}
	item := func(name string, h api.ResourceHealth) api.AggregatedStatusItem {
		return api.AggregatedStatusItem{ClusterName: name, Applied: true, Health: h}
	}
	healthy := []api.AggregatedStatusItem{item("a", api.ResourceUnknown), item("b", api.ResourceHealthy), item("c", api.ResourceHealthy)}
	partly := []api.AggregatedStatusItem{item("b", api.ResourceHealthy), item("c", api.ResourceUnhealthy)}
	tests := []struct {
		name      string
		tasks     []api.GracefulEvictionTask
		scheduled []api.TargetCluster
		status    []api.AggregatedStatusItem
		wantKept  []string
		wantDone  []string
		wantWait  time.Duration
	}{
		{name: "waits while a new cluster is not healthy", tasks: []api.GracefulEvictionTask{task("a", time.Minute)}, scheduled: scheduled, status: partly,
			wantKept: []string{"a"}, wantWait: 9 * time.Minute},
		{name: "ends when every new cluster is healthy", tasks: []api.GracefulEvictionTask{task("a", time.Minute)}, scheduled: scheduled, status: healthy, wantDone: []string{"a"}},
		{name: "a missing report is not healthy", tasks: []api.GracefulEvictionTask{task("a", 0)}, scheduled: scheduled, status: healthy[:2],
			wantKept: []string{"a"}, wantWait: 10 * time.Minute},
		{name: "ends at the timeout", tasks: []api.GracefulEvictionTask{task("a", 10*time.Minute)}, scheduled: scheduled, status: partly, wantDone: []string{"a"}},
		{name: "gracePeriodSeconds overrides the timeout", tasks: []api.GracefulEvictionTask{task("a", 30*time.Second, func(t *api.GracefulEvictionTask) { t.GracePeriodSeconds = ptr.To[int32](20) })},
			scheduled: scheduled, status: partly, wantDone: []string{"a"}},
		{name: "no replacement anywhere waits for the timeout", tasks: []api.GracefulEvictionTask{task("a", time.Minute)}, status: healthy,
			wantKept: []string{"a"}, wantWait: 9 * time.Minute},
		{name: "suppressDeletion true holds, false releases", scheduled: scheduled, status: healthy, tasks: []api.GracefulEvictionTask{
			task("a", time.Hour, func(t *api.GracefulEvictionTask) { t.SuppressDeletion = ptr.To(true) }),
			task("d", 0, func(t *api.GracefulEvictionTask) { t.SuppressDeletion = ptr.To(false) }),
		}, wantKept: []string{"a"}, wantDone: []string{"d"}},
		{name: "Never holds, Directly ends at once", scheduled: scheduled, status: partly, tasks: []api.GracefulEvictionTask{
			task("a", time.Hour, func(t *api.GracefulEvictionTask) { t.PurgeMode = api.PurgeModeNever }),
			task("d", 0, func(t *api.GracefulEvictionTask) { t.PurgeMode = api.PurgeModeDirectly }),
			task("e", 8*time.Minute),
		}, wantKept: []string{"a", "e"}, wantDone: []string{"d"}, wantWait: 2 * time.Minute},
		{name: "Directly with preserved state waits for a healthy replacement", scheduled: scheduled, status: partly, tasks: []api.GracefulEvictionTask{
			task("d", time.Minute, func(t *api.GracefulEvictionTask) {
				t.PurgeMode, t.PreservedLabelState = api.PurgeModeDirectly, map[string]string{"job-id": "42"}
			}),
		}, wantKept: []string{"d"}, wantWait: 9 * time.Minute},
		{name: "Directly with preserved state ends once the replacement is healthy", scheduled: scheduled, status: healthy, tasks: []api.GracefulEvictionTask{
			task("d", time.Minute, func(t *api.GracefulEvictionTask) {
				t.PurgeMode, t.PreservedLabelState = api.PurgeModeDirectly, map[string]string{"job-id": "42"}
			}),
		}, wantDone: []string{"d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, done, wait := AssessEvictions(tt.tasks, tt.scheduled, tt.status, t0, 10*time.Minute)
			var keptNames []string
			for _, k := range kept {
				keptNames = append(keptNames, k.FromCluster)
			}
			if diff := cmp.Diff(tt.wantKept, keptNames); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDone, done); diff != "" {
				t.Errorf("done (-want +got):\n%s", diff)
			}
			if wait != tt.wantWait {
				t.Errorf("wait = %v, want %v", wait, tt.wantWait)
			}
		})
	}
}
