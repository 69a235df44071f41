package crossplane

import (
	"errors"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

func TestClusterSpec(t *testing.T) {
	user := corev1.Taint{Key: "role", Value: "dr", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: api.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}
	unreachable := corev1.Taint{Key: api.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}
	foreign := corev1.Taint{Key: "someone-else", Effect: corev1.TaintEffectNoSchedule}
	mg := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "east", Annotations: map[string]string{"crossplane.io/external-name": "east-1"}}}
	mg.Spec.ForProvider = v1alpha1.ClusterParameters{
		APIEndpoint: "https://east", Provider: "aws", Region: "us-east-1", Zones: []string{"a", "b"},
		Taints: []corev1.Taint{user}, CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: "east-kubeconfig"},
	}
	base := api.ClusterSpec{
		SyncMode: api.Push, APIEndpoint: "https://east", Provider: "aws", Region: "us-east-1", Zones: []string{"a", "b"},
		SecretRef: &api.LocalSecretReference{Namespace: CredentialsNamespace(), Name: "east-1"},
	}
	tests := []struct {
		name  string
		live  []corev1.Taint
		taint []corev1.Taint
	}{
		{name: "own taints only", live: nil, taint: []corev1.Taint{user}},
		{name: "the control plane's taints are kept", live: []corev1.Taint{user, notReady, unreachable}, taint: []corev1.Taint{user, notReady, unreachable}},
		{name: "a taint of someone else is dropped", live: []corev1.Taint{foreign, notReady}, taint: []corev1.Taint{user, notReady}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := base
			want.Taints = tc.taint
			if diff := cmp.Diff(want, clusterSpec(mg, tc.live)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	noCreds := mg.DeepCopy()
	noCreds.Spec.ForProvider.CredentialsSecretRef, noCreds.Spec.ForProvider.Taints = nil, nil
	if got := clusterSpec(noCreds, nil); got.SecretRef != nil || got.Taints != nil {
		t.Errorf("without credentials or taints: %+v", got)
	}
	pull := noCreds.DeepCopy()
	pull.Spec.ForProvider.SyncMode = api.Pull
	if got := clusterSpec(pull, nil); got.SyncMode != api.Pull || got.SecretRef != nil {
		t.Errorf("a Pull cluster: syncMode %q, secretRef %v; want Pull without credentials", got.SyncMode, got.SecretRef)
	}
}

// TestClusterPullRefusesCredentials: a Pull cluster with credentials is
// refused before anything is read or written, naming the field.
func TestClusterPullRefusesCredentials(t *testing.T) {
	mg := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge"}}
	mg.Spec.ForProvider = v1alpha1.ClusterParameters{SyncMode: api.Pull, CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: "edge-kubeconfig"}}
	err := (&clusterClient{}).apply(t.Context(), mg)
	if err == nil || !strings.Contains(err.Error(), "Cluster edge: spec.forProvider.credentialsSecretRef must not be set with syncMode Pull") {
		t.Errorf("apply: %v, want a refusal naming credentialsSecretRef", err)
	}
}

func TestClusterReadiness(t *testing.T) {
	tests := []struct {
		name    string
		conds   []metav1.Condition
		reason  xpv2.ConditionReason
		message string
	}{
		{name: "not probed yet", reason: xpv2.ReasonCreating, message: "waiting for the control plane"},
		{name: "ready", conds: []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue}}, reason: xpv2.ReasonAvailable},
		{name: "not ready", conds: []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: "ClusterNotReachable", Message: "connection refused"}}, reason: xpv2.ReasonUnavailable, message: "ClusterNotReachable: connection refused"},
		{name: "membership conflict", conds: []metav1.Condition{{Type: api.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: api.ReasonMembershipConflict,
			Message: `cluster twin: cluster at https://127.0.0.1:6443 is already registered as "east" in fleet "prod"; refusing to register it as "twin" in fleet "prod"`}},
			reason: xpv2.ReasonUnavailable, message: `MembershipConflict: cluster twin: cluster at https://127.0.0.1:6443 is already registered as "east"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := clusterReadiness(api.ClusterStatus{Conditions: tc.conds})
			if got.Reason != tc.reason || !strings.Contains(got.Message, tc.message) {
				t.Errorf("got %s %q, want %s containing %q", got.Reason, got.Message, tc.reason, tc.message)
			}
		})
	}
}

func TestOwnership(t *testing.T) {
	mine := &v1alpha1.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", UID: "u1"}}
	deleting := mine.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	observer := mine.DeepCopy()
	observer.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	live := func(owner, uid string) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Annotations: map[string]string{}}
		if owner != "" {
			m.Annotations[AnnotationOwner] = owner
		}
		if uid != "" {
			m.Annotations[AnnotationOwnerUID] = uid
		}
		return m
	}
	refuse := errors.New("set adopt")
	tests := []struct {
		name     string
		mg       *v1alpha1.Manifest
		owner    string
		uid      string
		refuse   error
		wantDone bool
		wantErr  string
	}{
		{name: "own object", mg: mine, owner: "Manifest a/web", uid: "u1"},
		{name: "unowned object is adopted where allowed", mg: mine},
		{name: "unowned object is refused where adoption is not allowed", mg: mine, refuse: refuse, wantErr: "Deployment a/web already exists in the host and this Manifest a/web does not own it: set adopt"},
		{name: "a name claim without UID is no proof of ownership", mg: mine, owner: "Manifest a/web", refuse: refuse, wantErr: "does not own it: set adopt"},
		{name: "an earlier namesake's object is refused", mg: mine, owner: "Manifest a/web", uid: "u0", wantErr: "managed by Manifest a/web (UID u0, an earlier resource of this name)"},
		{name: "another namespace's object is refused", mg: mine, owner: "Manifest b/web", uid: "u9", wantErr: "Deployment a/web in the host is managed by Manifest b/web"},
		{name: "another kind's object is refused", mg: mine, owner: "Cluster a/web", uid: "u1", wantErr: "managed by Cluster a/web"},
		{name: "observe-only reads anything", mg: observer, owner: "Manifest b/web", refuse: refuse},
		{name: "a deleted resource lets another's object be", mg: deleting, owner: "Manifest b/web", wantDone: true},
		{name: "a deleted resource lets an unowned object be", mg: deleting, wantDone: true},
		{name: "a deleted resource still sees its own object", mg: deleting, owner: "Manifest a/web", uid: "u1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done, err := ownedOrGone(live(tc.owner, tc.uid), "Deployment a/web", kindManifest, tc.mg, tc.refuse)
			if done != tc.wantDone {
				t.Errorf("done %v, want %v", done, tc.wantDone)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestObserveOnly(t *testing.T) {
	tests := []struct {
		p    xpv2.ManagementPolicies
		want bool
	}{
		{nil, false},
		{xpv2.ManagementPolicies{xpv2.ManagementActionAll}, false},
		{xpv2.ManagementPolicies{xpv2.ManagementActionObserve}, true},
		{xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate}, false},
	}
	for _, tc := range tests {
		mg := &v1alpha1.Manifest{}
		mg.Spec.ManagementPolicies = tc.p
		if got := observeOnly(mg); got != tc.want {
			t.Errorf("%v: got %v", tc.p, got)
		}
	}
}
