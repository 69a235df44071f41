package failover

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

func appFailover(tolerationSeconds *int32, mode api.PurgeMode, grace *int32) *api.FailoverBehavior {
	return &api.FailoverBehavior{Application: &api.ApplicationFailoverBehavior{
		DecisionConditions: api.DecisionConditions{TolerationSeconds: tolerationSeconds},
		PurgeMode:          mode,
		GracePeriodSeconds: grace,
	}}
}

func TestDecideApplicationFailover(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	item := func(cluster string, h api.ResourceHealth) api.AggregatedStatusItem {
		return api.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: h}
	}
	scheduled := []api.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 2}}
	spec := func(edit ...func(*api.ResourceBindingSpec)) api.ResourceBindingSpec {
		s := api.ResourceBindingSpec{Clusters: scheduled, Failover: appFailover(ptr.To[int32](10), "", nil)}
		for _, e := range edit {
			e(&s)
		}
		return s
	}
	tests := []struct {
		name      string
		spec      api.ResourceBindingSpec
		status    []api.AggregatedStatusItem
		since     map[string]time.Time
		wantSince map[string]time.Time
		wantEvict []string
		wantWait  time.Duration
	}{
		{name: "first unhealthy report starts the clock", spec: spec(),
			status:    []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy), item("b", api.ResourceHealthy)},
			wantSince: map[string]time.Time{"a": t0}, wantWait: 10 * time.Second},
		{name: "still within the toleration waits for the rest", spec: spec(),
			status: []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy), item("b", api.ResourceHealthy)},
			since:  map[string]time.Time{"a": ago(4 * time.Second)}, wantSince: map[string]time.Time{"a": ago(4 * time.Second)}, wantWait: 6 * time.Second},
		{name: "past the toleration evicts and forgets", spec: spec(),
			status: []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy), item("b", api.ResourceHealthy)},
			since:  map[string]time.Time{"a": ago(10 * time.Second)}, wantSince: map[string]time.Time{}, wantEvict: []string{"a"}},
		{name: "healthy again ends the clock", spec: spec(),
			status: []api.AggregatedStatusItem{item("a", api.ResourceHealthy), item("b", api.ResourceHealthy)},
			since:  map[string]time.Time{"a": ago(time.Hour)}, wantSince: map[string]time.Time{}},
		{name: "unknown keeps a running clock but neither starts nor fires one", spec: spec(),
			status:    []api.AggregatedStatusItem{item("a", api.ResourceUnknown), item("b", api.ResourceUnknown)},
			since:     map[string]time.Time{"a": ago(time.Hour)},
			wantSince: map[string]time.Time{"a": ago(time.Hour)}},
		{name: "the default toleration is 300 s", spec: spec(func(s *api.ResourceBindingSpec) { s.Failover = appFailover(nil, "", nil) }),
			status: []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy)},
			since:  map[string]time.Time{"a": ago(299 * time.Second)}, wantSince: map[string]time.Time{"a": ago(299 * time.Second)}, wantWait: time.Second},
		{name: "a cluster under eviction is left alone and forgotten",
			spec: spec(func(s *api.ResourceBindingSpec) {
				s.GracefulEvictionTasks = []api.GracefulEvictionTask{{FromCluster: "a"}}
			}),
			status: []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy), item("b", api.ResourceUnhealthy)},
			since:  map[string]time.Time{"a": ago(time.Hour), "b": ago(3 * time.Second)}, wantSince: map[string]time.Time{"b": ago(3 * time.Second)}, wantWait: 7 * time.Second},
		{name: "a cluster no longer scheduled is forgotten", spec: spec(func(s *api.ResourceBindingSpec) { s.Clusters = scheduled[1:] }),
			status: []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy), item("b", api.ResourceHealthy)},
			since:  map[string]time.Time{"a": ago(time.Hour)}, wantSince: map[string]time.Time{}},
		{name: "both past the toleration are both evicted", spec: spec(),
			status: []api.AggregatedStatusItem{item("b", api.ResourceUnhealthy), item("a", api.ResourceUnhealthy)},
			since:  map[string]time.Time{"a": ago(11 * time.Second), "b": ago(time.Minute)}, wantSince: map[string]time.Time{}, wantEvict: []string{"a", "b"}},
		{name: "without application failover nothing is kept", spec: spec(func(s *api.ResourceBindingSpec) {
			s.Failover = &api.FailoverBehavior{Cluster: &api.ClusterFailoverBehavior{}}
		}),
			status: []api.AggregatedStatusItem{item("a", api.ResourceUnhealthy)},
			since:  map[string]time.Time{"a": ago(time.Hour)}, wantSince: map[string]time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideApplicationFailover(&tt.spec, tt.status, tt.since, t0)
			if diff := cmp.Diff(tt.wantSince, got.since); diff != "" {
				t.Errorf("since (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvict, got.evict); diff != "" {
				t.Errorf("evict (-want +got):\n%s", diff)
			}
			if got.wait != tt.wantWait {
				t.Errorf("wait = %v, want %v", got.wait, tt.wantWait)
			}
		})
	}
}

// TestApplicationFailoverTimeline walks one binding through time with the
// record carried from step to step, as it is through the annotation, and
// checks that a clock restarted by a healthy report does not fire early.
func TestApplicationFailoverTimeline(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := api.ResourceBindingSpec{Clusters: []api.TargetCluster{{Name: "a", Replicas: 1}}, Failover: appFailover(ptr.To[int32](5), "", nil)}
	steps := []struct {
		at     time.Duration
		health api.ResourceHealth
		evict  bool
	}{
		{0, api.ResourceUnhealthy, false},
		{4 * time.Second, api.ResourceUnhealthy, false},
		{4500 * time.Millisecond, api.ResourceHealthy, false},
		{5 * time.Second, api.ResourceUnhealthy, false},
		{9 * time.Second, api.ResourceUnknown, false},
		{9900 * time.Millisecond, api.ResourceUnhealthy, false},
		{10 * time.Second, api.ResourceUnhealthy, true},
	}
	var since map[string]time.Time
	for _, s := range steps {
		status := []api.AggregatedStatusItem{{ClusterName: "a", Applied: true, Health: s.health}}
		// The record travels through the annotation between passes.
		d := decideApplicationFailover(&spec, status, since, t0.Add(s.at))
		parsed, err := parseUnhealthySince(map[string]string{AnnotationUnhealthySince: formatUnhealthySince(d.since)})
		if err != nil {
			t.Fatal(err)
		}
		since = parsed
		if got := len(d.evict) == 1; got != s.evict {
			t.Fatalf("at %v (%s): evict = %v, want %v", s.at, s.health, d.evict, s.evict)
		}
	}
}

func TestGracefulEvictCluster(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := metav1.NewTime(t0)
	clusters := []api.TargetCluster{{Name: "a", Replicas: 3}, {Name: "b", Replicas: 1}}
	base := api.GracefulEvictionTask{
		FromCluster: "a", Replicas: ptr.To[int32](3), Reason: EvictionReasonApplicationFailure, Producer: EvictionProducerApplicationFailover,
		Message:                "the template has been unhealthy on cluster a for longer than 2s",
		ClustersBeforeFailover: []string{"a", "b"}, CreationTimestamp: &at,
	}
	with := func(edit func(*api.GracefulEvictionTask)) api.GracefulEvictionTask {
		task := base
		edit(&task)
		return task
	}
	existing := api.GracefulEvictionTask{FromCluster: "a", Reason: shared.EvictionReasonTaintUntolerated, Producer: shared.EvictionProducerTaintManager}
	tests := []struct {
		name         string
		failover     *api.FailoverBehavior
		tasks        []api.GracefulEvictionTask
		cluster      string
		preserved    map[string]string
		wantClusters []api.TargetCluster
		wantTasks    []api.GracefulEvictionTask
	}{
		{name: "preserved state rides on the task", failover: appFailover(ptr.To[int32](2), api.PurgeModeDirectly, nil), cluster: "a",
			preserved: map[string]string{"job-id": "42"}, wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{with(func(t *api.GracefulEvictionTask) {
				t.PurgeMode, t.PreservedLabelState = api.PurgeModeDirectly, map[string]string{"job-id": "42"}
			})}},
		{name: "Gracefully carries the grace period", failover: appFailover(ptr.To[int32](2), api.PurgeModeGracefully, ptr.To[int32](60)), cluster: "a",
			wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{with(func(t *api.GracefulEvictionTask) {
				t.PurgeMode, t.GracePeriodSeconds = api.PurgeModeGracefully, ptr.To[int32](60)
			})}},
		{name: "unset purge mode is Gracefully", failover: appFailover(ptr.To[int32](2), "", nil), cluster: "a",
			wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{with(func(t *api.GracefulEvictionTask) { t.PurgeMode = api.PurgeModeGracefully })}},
		{name: "Graciously is Gracefully", failover: appFailover(ptr.To[int32](2), api.PurgeModeGraciously, ptr.To[int32](30)), cluster: "a",
			wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{with(func(t *api.GracefulEvictionTask) {
				t.PurgeMode, t.GracePeriodSeconds = api.PurgeModeGracefully, ptr.To[int32](30)
			})}},
		{name: "Immediately is Directly", failover: appFailover(ptr.To[int32](2), api.PurgeModeImmediately, nil), cluster: "a",
			wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{with(func(t *api.GracefulEvictionTask) { t.PurgeMode = api.PurgeModeDirectly })}},
		{name: "Never suppresses deletion", failover: appFailover(ptr.To[int32](2), api.PurgeModeNever, ptr.To[int32](30)), cluster: "a",
			wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{with(func(t *api.GracefulEvictionTask) {
				t.PurgeMode, t.SuppressDeletion = api.PurgeModeNever, ptr.To(true)
			})}},
		{name: "an existing task is not doubled", failover: appFailover(ptr.To[int32](2), "", nil), cluster: "a", tasks: []api.GracefulEvictionTask{existing},
			wantClusters: clusters[1:], wantTasks: []api.GracefulEvictionTask{existing}},
		{name: "a cluster not scheduled is a no-op", failover: appFailover(ptr.To[int32](2), "", nil), cluster: "x", wantClusters: clusters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := api.ResourceBindingSpec{Clusters: clusters, Failover: tt.failover, GracefulEvictionTasks: tt.tasks}
			gracefulEvictCluster(&spec, tt.cluster, t0, tt.preserved)
			if diff := cmp.Diff(tt.wantClusters, spec.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTasks, spec.GracefulEvictionTasks); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
		})
	}
	if len(clusters) != 2 {
		t.Errorf("gracefulEvictCluster changed the caller's slice: %v", clusters)
	}
}

func TestUnhealthySinceAnnotation(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 123456789, time.UTC)
	rec := map[string]time.Time{"b": t0, "a": t0.Add(time.Second)}
	v := formatUnhealthySince(rec)
	if want := `{"a":"2025-01-01T00:00:01.123456789Z","b":"2025-01-01T00:00:00.123456789Z"}`; v != want {
		t.Errorf("format = %s, want %s", v, want)
	}
	got, err := parseUnhealthySince(map[string]string{AnnotationUnhealthySince: v})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if formatUnhealthySince(nil) != "" {
		t.Error("an empty record must remove the annotation")
	}
	for _, bad := range []string{"not json", `{"a":"yesterday"}`} {
		if _, err := parseUnhealthySince(map[string]string{AnnotationUnhealthySince: bad}); err == nil {
			t.Errorf("parse %q: no error", bad)
		}
	}
}

func TestPreservedLabelState(t *testing.T) {
	status := []api.AggregatedStatusItem{
		{ClusterName: "a", Status: &runtime.RawExtension{Raw: []byte(`{"jobID":"job-42","replicas":3,"note":"has spaces"}`)}},
		{ClusterName: "b"},
	}
	rules := func(rs ...api.StatePreservationRule) *api.StatePreservation { return &api.StatePreservation{Rules: rs} }
	cases := []struct {
		name    string
		sp      *api.StatePreservation
		cluster string
		want    map[string]string
		wantErr string
	}{
		{name: "no rules", cluster: "a"},
		{name: "each rule gives one label, from status", sp: rules(
			api.StatePreservationRule{AliasLabelName: "example.com/job-id", JSONPath: "{.jobID}"},
			api.StatePreservationRule{AliasLabelName: "replicas", JSONPath: "{.replicas}"}), cluster: "a",
			want: map[string]string{"example.com/job-id": "job-42", "replicas": "3"}},
		{name: "status not collected", sp: rules(api.StatePreservationRule{AliasLabelName: "x", JSONPath: "{.jobID}"}), cluster: "b",
			wantErr: "the status has not been collected from cluster b"},
		{name: "missing key", sp: rules(api.StatePreservationRule{AliasLabelName: "x", JSONPath: "{.nope}"}), cluster: "a",
			wantErr: `statePreservation.rules[0].jsonPath "{.nope}" on the status from cluster a`},
		{name: "bad path", sp: rules(api.StatePreservationRule{AliasLabelName: "x", JSONPath: "{.jobID"}), cluster: "a",
			wantErr: `statePreservation.rules[0].jsonPath "{.jobID"`},
		{name: "not a label value", sp: rules(api.StatePreservationRule{AliasLabelName: "x", JSONPath: "{.note}"}), cluster: "a",
			wantErr: `gives "has spaces", not a label value`},
	}
	for _, tc := range cases {
		got, err := shared.PreservedLabelState(tc.sp, status, tc.cluster)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
