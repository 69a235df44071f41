package detector_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestClaimsPreemptionAndLazy runs the control plane against a real host and
// three real members: a claim is sticky against a higher-priority policy,
// a policy with preemption Always and a higher priority takes the template,
// a Lazy policy's placement change waits for the template's next change
// while a non-Lazy one moves its template at once, and the host refuses
// placement.workloadAffinity by name.
func TestClaimsPreemptionAndLazy(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	m0, m1, m2 := names[0], names[1], names[2]

	policyYAML := func(name, selector, extra string, priority int, cluster string) *policyv1.PropagationPolicy {
		pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment%s}
  priority: %d
  placement:
    clusterAffinity: {clusterNames: [%s]}
%s`, selector, priority, cluster, extra)
		return pp
	}
	setCluster := func(name, cluster string, lazy bool) {
		t.Helper()
		var pp policyv1.PropagationPolicy
		testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "default", Name: name}, &pp, func() {
			pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{cluster}
			if lazy {
				pp.Spec.ActivationPreference = api.LazyActivation
			}
		})
	}
	claimedBy := func(name string) string {
		t.Helper()
		var rb workv1.ResourceBinding
		key := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name)}
		if err := hub.Get(ctx, key, &rb); err != nil {
			t.Fatal(err)
		}
		return rb.Labels[hoststore.LabelPolicy]
	}

	testkit.MustCreate(t, hub, policyYAML("low", ", name: web", "", 1, m0))
	testkit.MustCreate(t, hub, controllertest.NamedDeployment("web"))
	controllertest.WaitPlaced(t, members, "web", m0)

	t.Log("sticky: a higher-priority policy without preemption does not take web")
	testkit.MustCreate(t, hub, policyYAML("high", "", "", 5, m1))
	// api is selected by high only: once it is on m1, the detector has
	// seen high, and web has been reconciled against it too.
	testkit.MustCreate(t, hub, controllertest.NamedDeployment("api"))
	controllertest.WaitPlaced(t, members, "api", m1)
	controllertest.WaitPlaced(t, members, "web", m0)
	if got := claimedBy("web"); got != "PropagationPolicy.low" {
		t.Fatalf("web is claimed by %q, want PropagationPolicy.low (claims are sticky)", got)
	}

	t.Log("preemption: Always with a higher priority takes web")
	testkit.MustCreate(t, hub, policyYAML("urgent", ", name: web", "  preemption: Always\n", 10, m2))
	controllertest.WaitPlaced(t, members, "web", m2)
	if got := claimedBy("web"); got != "PropagationPolicy.urgent" {
		t.Fatalf("web is claimed by %q, want PropagationPolicy.urgent", got)
	}

	t.Log("lazy: urgent turns Lazy and moves to m0; high (not Lazy) moves to m0 too")
	setCluster("urgent", m0, true)
	setCluster("high", m0, false)
	controllertest.WaitPlaced(t, members, "api", m0)
	controllertest.WaitPlaced(t, members, "web", m2)

	t.Log("lazy: an override still reaches the held binding (it is trusted and rendered)")
	op := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mark"}}
	testkit.MustYAML(t, op, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - overriders:
      labelsOverrider: [{operator: add, value: {marked: "yes"}}]
`)
	testkit.MustCreate(t, hub, op)
	testkit.Eventually(t, controllertest.Deadline, "web on "+m2+" labelled marked=yes", func() (bool, string) {
		var d appsv1.Deployment
		if err := members[m2].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Labels["marked"] == "yes", fmt.Sprintf("labels %v", d.Labels)
	})
	controllertest.WaitPlaced(t, members, "web", m2)

	t.Log("lazy: the template's next change brings urgent's placement")
	var web appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "default", Name: "web"}, &web, func() {
		web.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	})
	controllertest.WaitPlaced(t, members, "web", m0)

	t.Log("workloadAffinity: the host refuses it by name, without the webhook")
	bad := policyYAML("affine", "", "    workloadAffinity: {affinity: {groupByLabelKey: app.group}}\n", 0, m0)
	err := hub.Create(ctx, bad)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "workloadAffinity is not supported") {
		t.Fatalf("create a policy with workloadAffinity: %v, want it refused as not supported", err)
	}
}
