package crossplane

import (
	"errors"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// manifestMR builds a Manifest managed resource in namespace ns around raw JSON.
func manifestMR(ns, name, raw string) *v1alpha1.Manifest {
	mg := &v1alpha1.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	mg.Spec.ForProvider.Manifest = runtime.RawExtension{Raw: []byte(raw)}
	return mg
}

func TestDesiredTemplate(t *testing.T) {
	const deploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`
	tests := []struct {
		name    string
		mg      *v1alpha1.Manifest
		wantNS  string
		wantN   string
		wantErr string
	}{
		{name: "namespace defaults to the managed resource's", mg: manifestMR("apps", "mr", deploy), wantNS: "apps", wantN: "web"},
		{name: "same namespace is fine", mg: manifestMR("apps", "mr", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"apps"}}`), wantNS: "apps", wantN: "cm"},
		{name: "name defaults to the managed resource's", mg: manifestMR("apps", "mr", `{"apiVersion":"v1","kind":"ConfigMap"}`), wantNS: "apps", wantN: "mr"},
		{name: "another namespace names the field", mg: manifestMR("apps", "mr", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"other"}}`), wantErr: `spec.forProvider.manifest.metadata.namespace is "other"`},
		{name: "no kind", mg: manifestMR("apps", "mr", `{"apiVersion":"v1","metadata":{"name":"cm"}}`), wantErr: "spec.forProvider.manifest: apiVersion and kind are required"},
		{name: "bad name names the field", mg: manifestMR("apps", "mr", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a/b"}}`), wantErr: "spec.forProvider.manifest.metadata.name"},
		{name: "empty", mg: manifestMR("apps", "mr", ``), wantErr: "spec.forProvider.manifest is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desiredTemplate(tc.mg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetNamespace() != tc.wantNS || got.GetName() != tc.wantN {
				t.Errorf("template %s/%s, want %s/%s", got.GetNamespace(), got.GetName(), tc.wantNS, tc.wantN)
			}
			if owner := got.GetAnnotations()[AnnotationOwner]; owner != "Manifest "+tc.mg.Namespace+"/"+tc.mg.Name {
				t.Errorf("owner annotation %q", owner)
			}
			if h, _ := desiredHash(got); h != got.GetAnnotations()[AnnotationDesiredHash] || h == "" {
				t.Errorf("desired hash %q does not match the object (%q)", got.GetAnnotations()[AnnotationDesiredHash], h)
			}
		})
	}
}

func TestDesiredTemplateDropsServerFieldsAndHashesSpec(t *testing.T) {
	a, err := desiredTemplate(manifestMR("ns", "mr", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","resourceVersion":"7","uid":"u"},"data":{"k":"1"},"status":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"resourceVersion", "uid"} {
		if _, ok := a.Object["metadata"].(map[string]any)[f]; ok {
			t.Errorf("metadata.%s kept", f)
		}
	}
	if _, ok := a.Object["status"]; ok {
		t.Error("status kept")
	}
	same, _ := desiredTemplate(manifestMR("ns", "mr", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"1"}}`))
	changed, _ := desiredTemplate(manifestMR("ns", "mr", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"2"}}`))
	otherOwner, _ := desiredTemplate(manifestMR("ns", "mr2", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"1"}}`))
	hash := func(u interface{ GetAnnotations() map[string]string }) string {
		return u.GetAnnotations()[AnnotationDesiredHash]
	}
	if hash(a) != hash(same) {
		t.Error("server fields changed the desired hash")
	}
	if hash(a) == hash(changed) || hash(a) == hash(otherOwner) {
		t.Error("a data or owner change kept the desired hash")
	}
}

// binding builds a ResourceBinding with a builder's fluency.
type binding struct{ rb workv1.ResourceBinding }

func newBinding(policyLabel string) *binding {
	b := &binding{}
	b.rb.Generation = 2
	if policyLabel != "" {
		b.rb.Labels = map[string]string{hoststore.LabelPolicy: policyLabel}
	}
	return b
}

func (b *binding) placed(name string, replicas int32) *binding {
	b.rb.Spec.Clusters = append(b.rb.Spec.Clusters, api.TargetCluster{Name: name, Replicas: replicas})
	return b
}

func (b *binding) reports(name string, health api.ResourceHealth, msg string) *binding {
	b.rb.Status.AggregatedStatus = append(b.rb.Status.AggregatedStatus, api.AggregatedStatusItem{ClusterName: name, Applied: true, Health: health, AppliedMessage: msg})
	return b
}

func (b *binding) condition(typ string, status metav1.ConditionStatus, gen int64, msg string) *binding {
	b.rb.Status.Conditions = append(b.rb.Status.Conditions, metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, Reason: "R", Message: msg})
	return b
}

func (b *binding) obj() *workv1.ResourceBinding { return &b.rb }

func TestManifestReadiness(t *testing.T) {
	applied := func() *binding {
		return newBinding("PropagationPolicy.web").placed("east", 1).placed("west", 2).
			condition(api.ConditionScheduled, metav1.ConditionTrue, 2, "").
			condition(api.ConditionFullyApplied, metav1.ConditionTrue, 2, "")
	}
	tests := []struct {
		name    string
		rb      *workv1.ResourceBinding
		reason  xpv2.ConditionReason
		message string
	}{
		{name: "no binding", rb: nil, reason: xpv2.ReasonUnavailable, message: "no PropagationPolicy claims"},
		{name: "unschedulable", rb: newBinding("PropagationPolicy.web").condition(api.ConditionScheduled, metav1.ConditionFalse, 2, "0/3 clusters fit").obj(), reason: xpv2.ReasonUnavailable, message: "not scheduled: 0/3 clusters fit"},
		{name: "not applied yet", rb: newBinding("PropagationPolicy.web").placed("east", 1).obj(), reason: xpv2.ReasonCreating},
		{name: "applied for an older generation", rb: newBinding("").placed("east", 1).condition(api.ConditionFullyApplied, metav1.ConditionTrue, 1, "").reports("east", api.ResourceHealthy, "").obj(), reason: xpv2.ReasonCreating},
		{name: "apply failed", rb: newBinding("").placed("east", 1).condition(api.ConditionFullyApplied, metav1.ConditionFalse, 2, "conflict in east").obj(), reason: xpv2.ReasonUnavailable, message: "conflict in east"},
		{name: "rolling out", rb: applied().reports("east", api.ResourceHealthy, "").reports("west", api.ResourceUnknown, "").obj(), reason: xpv2.ReasonCreating, message: "not yet healthy in west"},
		{name: "unhealthy", rb: applied().reports("east", api.ResourceUnhealthy, "").reports("west", api.ResourceHealthy, "").obj(), reason: xpv2.ReasonUnavailable, message: "unhealthy in east"},
		{name: "a cluster not reported", rb: applied().reports("east", api.ResourceHealthy, "").obj(), reason: xpv2.ReasonCreating, message: "west"},
		{name: "healthy everywhere; a cluster being left does not count", rb: applied().reports("east", api.ResourceHealthy, "").reports("old", api.ResourceUnknown, "pending removal").reports("west", api.ResourceHealthy, "").obj(), reason: xpv2.ReasonAvailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := manifestReadiness(tc.rb)
			if got.Type != xpv2.TypeReady || got.Reason != tc.reason || !strings.Contains(got.Message, tc.message) {
				t.Errorf("got %s %s %q, want Ready %s containing %q", got.Type, got.Reason, got.Message, tc.reason, tc.message)
			}
		})
	}
}

func TestManifestObservation(t *testing.T) {
	rb := newBinding("PropagationPolicy.web.v2").placed("west", 2).placed("east", 1).
		reports("east", api.ResourceHealthy, "").reports("old", api.ResourceUnknown, "pending removal: unreachable").obj()
	rb.Status.SchedulerObservedAffinityName = "primary"
	rb.Spec.Suspension = &api.BindingSuspension{Suspension: api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"west"}}}}
	got := manifestObservation(rb, map[string]any{"readyReplicas": int64(1)}, map[string]string{"east": "h1", "west": "h2"})
	want := v1alpha1.ManifestObservation{
		Policy:       "PropagationPolicy/web.v2",
		AffinityTerm: "primary",
		Placement:    map[string]int32{"east": 1, "west": 2},
		Clusters: []v1alpha1.ManifestClusterObservation{
			{Name: "east", Replicas: 1, RenderedHash: "h1", Applied: true, Health: "Healthy"},
			{Name: "old", Applied: true, Health: "Unknown", Message: "pending removal: unreachable"},
			{Name: "west", Replicas: 2, RenderedHash: "h2", Health: "Unknown", Suspended: true},
		},
		Health: "Unknown",
		Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":1}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observation (-want +got):\n%s", diff)
	}

	if got := manifestObservation(nil, nil, nil); got.Message == "" || got.Placement != nil {
		t.Errorf("no binding: %+v", got)
	}
	unschedulable := newBinding("PropagationPolicy.web").condition(api.ConditionScheduled, metav1.ConditionFalse, 2, "no cluster fits").obj()
	if got := manifestObservation(unschedulable, nil, nil); got.Message != "no cluster fits" || got.Health != "" {
		t.Errorf("unschedulable: %+v", got)
	}
}

func TestPlacementHealth(t *testing.T) {
	placed := map[string]bool{"a": true, "b": true}
	tests := []struct {
		health []string
		want   string
	}{
		{[]string{"Healthy", "Healthy"}, "Healthy"},
		{[]string{"Healthy", "Unknown"}, "Unknown"},
		{[]string{"Unknown", "Unhealthy"}, "Unhealthy"},
		{[]string{"Healthy", ""}, "Unknown"},
	}
	for _, tc := range tests {
		clusters := []v1alpha1.ManifestClusterObservation{{Name: "a", Health: tc.health[0]}, {Name: "b", Health: tc.health[1]}, {Name: "leaving", Health: "Unhealthy"}}
		if got := placementHealth(clusters, placed); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.health, got, tc.want)
		}
	}
	if got := placementHealth(nil, nil); got != "" {
		t.Errorf("no placement: %q", got)
	}
}

func TestPreviewObservation(t *testing.T) {
	tests := []struct {
		name string
		res  plan.Result
		want v1alpha1.ManifestObservation
	}{
		{
			name: "placed",
			res: plan.Result{
				Policy:    &plan.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "web"},
				Placement: []api.TargetCluster{{Name: "west", Replicas: 2}, {Name: "east", Replicas: 1}},
				Works:     map[string]render.Work{"east": {Hash: "h1"}, "west": {Hash: "h2"}},
				Reasons:   map[string]string{"dev": "cluster affinity: labels do not match"},
			},
			want: v1alpha1.ManifestObservation{
				Preview: true, Policy: "PropagationPolicy/web",
				Placement: map[string]int32{"east": 1, "west": 2},
				Clusters:  []v1alpha1.ManifestClusterObservation{{Name: "east", Replicas: 1, RenderedHash: "h1"}, {Name: "west", Replicas: 2, RenderedHash: "h2"}},
				Reasons:   map[string]string{"dev": "cluster affinity: labels do not match"},
			},
		},
		{
			name: "suspended",
			res: plan.Result{
				Policy:    &plan.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "web"},
				Placement: []api.TargetCluster{{Name: "east", Replicas: 1}, {Name: "west", Replicas: 2}},
				Works:     map[string]render.Work{"east": {Hash: "h1"}, "west": {Hash: "h2"}},
				Suspended: []string{"west"},
			},
			want: v1alpha1.ManifestObservation{
				Preview: true, Policy: "PropagationPolicy/web",
				Placement: map[string]int32{"east": 1, "west": 2},
				Clusters:  []v1alpha1.ManifestClusterObservation{{Name: "east", Replicas: 1, RenderedHash: "h1"}, {Name: "west", Replicas: 2, RenderedHash: "h2", Suspended: true}},
			},
		},
		{
			name: "refused",
			res: plan.Result{Policy: &plan.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "web"},
				Err: &plan.RefusedFieldError{Policy: plan.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "web"},
					Field: field.Invalid(field.NewPath("spec", "schedulerName"), "other", "names another scheduler")}},
			want: v1alpha1.ManifestObservation{Preview: true, Policy: "PropagationPolicy/web",
				Message: `PropagationPolicy default/web: spec.schedulerName: Invalid value: "other": names another scheduler`},
		},
		{
			name: "unclaimed",
			res:  plan.Result{},
			want: v1alpha1.ManifestObservation{Preview: true, Message: "no PropagationPolicy claims the template"},
		},
		{
			name: "unschedulable",
			res:  plan.Result{Policy: &plan.PolicyRef{Kind: "ClusterPropagationPolicy", Name: "all"}, Err: errors.New("0/2 clusters are available")},
			want: v1alpha1.ManifestObservation{Preview: true, Policy: "ClusterPropagationPolicy/all", Message: "0/2 clusters are available"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, previewObservation(tc.res), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
