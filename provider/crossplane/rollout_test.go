package crossplane_test

import (
	"fmt"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestPropagationPolicyRollout: a PropagationPolicy managed resource
// carries spec.forProvider.rollout to the host's policy unchanged, and one
// whose rollout the control plane would refuse is not applied: its Synced
// condition names the field.
func TestPropagationPolicyRollout(t *testing.T) {
	e := startEnvWith(t, 0)
	ctx := t.Context()

	good := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "staged"}}
	testkit.MustYAML(t, good, `
spec:
  forProvider:
    resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    rollout:
      onGateFailure: Rollback
      stages:
      - name: canary
        clusterAffinity: {clusterNames: [member1]}
        gate: {bakeSeconds: 30, timeoutSeconds: 120}
      - name: rest
        maxConcurrentClusters: 2
        gate: {maxUnhealthyClusters: 1}
`)
	testkit.MustCreate(t, e.mgmt, good)
	poll(t, "the host policy carries the rollout", func() (bool, string) {
		var host policyv1.PropagationPolicy
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(good), &host); err != nil {
			return false, err.Error()
		}
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(good), good); err != nil {
			return false, err.Error()
		}
		return host.Spec.Rollout != nil && equality.Semantic.DeepEqual(host.Spec.Rollout, good.Spec.ForProvider.Rollout),
			fmt.Sprintf("host rollout %+v, managed %+v", host.Spec.Rollout, good.Spec.ForProvider.Rollout)
	})

	bad := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "twice"}}
	testkit.MustYAML(t, bad, `
spec:
  forProvider:
    resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    rollout:
      stages:
      - name: canary
        clusterAffinity: {clusterNames: [member1]}
      - name: canary
`)
	testkit.MustCreate(t, e.mgmt, bad)
	poll(t, "the invalid rollout is refused, naming the field", func() (bool, string) {
		cond, err := conditionOf(t, e.mgmt, bad, xpv2.TypeSynced)
		if err != nil {
			return false, err.Error()
		}
		return cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, "spec.forProvider.rollout.stages[1].name") &&
			strings.Contains(cond.Message, "PropagationPolicy default/twice"), fmt.Sprintf("%+v", cond)
	})
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(bad), &policyv1.PropagationPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("the host has a PropagationPolicy default/twice (err %v), want none", err)
	}
}
