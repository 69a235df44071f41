package dependencies

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

func targets(names ...string) []api.TargetCluster {
	out := make([]api.TargetCluster, len(names))
	for i, n := range names {
		out[i] = api.TargetCluster{Name: n}
	}
	return out
}

func snapshot(ns, name string, clusters ...api.TargetCluster) api.BindingSnapshot {
	return api.BindingSnapshot{Namespace: ns, Name: name, Clusters: clusters}
}

func TestSnapshotOf(t *testing.T) {
	for name, tc := range map[string]struct {
		clusters []api.TargetCluster
		tasks    []api.GracefulEvictionTask
		want     api.BindingSnapshot
	}{
		"scheduled clusters keep their replicas, sorted": {
			clusters: []api.TargetCluster{{Name: "b", Replicas: 2}, {Name: "a", Replicas: 1}},
			want:     snapshot("default", "web-deployment", api.TargetCluster{Name: "a", Replicas: 1}, api.TargetCluster{Name: "b", Replicas: 2}),
		},
		"a cluster under graceful eviction still needs the dependencies": {
			clusters: []api.TargetCluster{{Name: "b", Replicas: 3}},
			tasks:    []api.GracefulEvictionTask{{FromCluster: "a"}, {FromCluster: "b"}},
			want:     snapshot("default", "web-deployment", api.TargetCluster{Name: "a"}, api.TargetCluster{Name: "b", Replicas: 3}),
		},
		"not scheduled yet": {
			want: snapshot("default", "web-deployment"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment"}}
			rb.Spec.Clusters, rb.Spec.GracefulEvictionTasks = tc.clusters, tc.tasks
			if diff := cmp.Diff(tc.want, shared.SnapshotOf(rb)); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextRequiredBy(t *testing.T) {
	web := client.ObjectKey{Namespace: "default", Name: "web-deployment"}
	webSnap := snapshot("default", "web-deployment", targets("b")...)
	api1 := snapshot("default", "api-deployment", targets("a")...)
	zed := snapshot("default", "zed-deployment", targets("c")...)
	for name, tc := range map[string]struct {
		current []api.BindingSnapshot
		snap    *api.BindingSnapshot
		want    []api.BindingSnapshot
	}{
		"first workload": {
			snap: &webSnap,
			want: []api.BindingSnapshot{webSnap},
		},
		"added among others, sorted by name": {
			current: []api.BindingSnapshot{zed, api1},
			snap:    &webSnap,
			want:    []api.BindingSnapshot{api1, webSnap, zed},
		},
		"moved workload replaces its entry": {
			current: []api.BindingSnapshot{snapshot("default", "web-deployment", targets("a")...), zed},
			snap:    &webSnap,
			want:    []api.BindingSnapshot{webSnap, zed},
		},
		"removed, others stay": {
			current: []api.BindingSnapshot{api1, webSnap},
			want:    []api.BindingSnapshot{api1},
		},
		"removed, none left": {
			current: []api.BindingSnapshot{webSnap},
			want:    []api.BindingSnapshot{},
		},
		"same name in another namespace is another workload": {
			current: []api.BindingSnapshot{snapshot("other", "web-deployment", targets("a")...)},
			want:    []api.BindingSnapshot{snapshot("other", "web-deployment", targets("a")...)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nextRequiredBy(tc.current, web, tc.snap)); diff != "" {
				t.Errorf("requiredBy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependentClusters(t *testing.T) {
	for name, tc := range map[string]struct {
		requiredBy []api.BindingSnapshot
		want       []api.TargetCluster
	}{
		"one workload, replicas dropped": {
			requiredBy: []api.BindingSnapshot{snapshot("default", "web", api.TargetCluster{Name: "b", Replicas: 3}, api.TargetCluster{Name: "a", Replicas: 1})},
			want:       targets("a", "b"),
		},
		"union of workloads, without repeats": {
			requiredBy: []api.BindingSnapshot{
				snapshot("default", "api", targets("c", "a")...),
				snapshot("default", "web", targets("a", "b")...),
			},
			want: targets("a", "b", "c"),
		},
		"workloads not scheduled yet": {
			requiredBy: []api.BindingSnapshot{snapshot("default", "web")},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shared.DependentClusters(tc.requiredBy)); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingEventOfAttachedBinding(t *testing.T) {
	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings-configmap", Labels: map[string]string{shared.LabelAttached: "true"}}}
	rb.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "settings"}
	rb.Spec.RequiredBy = []api.BindingSnapshot{snapshot("default", "api-deployment"), snapshot("default", "web-deployment")}
	got := (&dependenciesDistributor{}).bindingEvent(t.Context(), rb)
	want := []client.ObjectKey{{Namespace: "default", Name: "api-deployment"}, {Namespace: "default", Name: "web-deployment"}}
	keys := make([]client.ObjectKey, len(got))
	for i, r := range got {
		keys[i] = r.NamespacedName
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
