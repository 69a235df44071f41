package policyvalidation_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
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

// TestInvalidPoliciesRefusedWithoutWebhook attacks the controllers with
// policies the webhook would refuse, on a real host with no webhook and
// three real members: invalid propagation policies (a negative static
// weight, a label selector with an unknown operator) claim nothing, and
// invalid override policies (a JSON patch path without its leading "/",
// an image overrider with an unknown component) override nothing and
// freeze the rendering of the template they select instead of letting it
// be rendered without them; each gets a Warning Event naming the field,
// the policy and its namespace. Valid policies beside them keep working.
// A propagation policy that turns invalid leaves its template where it
// was, and fixing the policies lets everything through again.
func TestInvalidPoliciesRefusedWithoutWebhook(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	m0, m1 := names[0], names[1]
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}

	t.Log("valid policies: good places web and other on " + m0 + ", mark labels them")
	good := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "good"}}
	testkit.MustYAML(t, good, `
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: apps/v1, kind: Deployment, name: other}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, m0)
	testkit.MustCreate(t, hub, good)
	mark := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mark"}}
	testkit.MustYAML(t, mark, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - overriders:
      labelsOverrider: [{operator: add, value: {valid: "yes"}}]
`)
	testkit.MustCreate(t, hub, mark)
	testkit.MustCreate(t, hub, controllertest.NamedDeployment("web"))
	waitMember(t, members[m0], "web", "labelled valid=yes", func(d *appsv1.Deployment) bool { return d.Labels["valid"] == "yes" })

	t.Log("invalid propagation policies select api; they must not claim it")
	badWeights := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad-weights"}}
	testkit.MustYAML(t, badWeights, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  priority: 10
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [%s]}, weight: -1}
`, m1, m1)
	testkit.MustCreate(t, hub, badWeights)
	badSelector := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad-selector"}}
	testkit.MustYAML(t, badSelector, `
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector:
      matchExpressions: [{key: app, operator: Bogus, values: [api]}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, m1)
	testkit.MustCreate(t, hub, badSelector)
	testkit.MustCreate(t, hub, controllertest.NamedDeployment("api"))

	t.Log("invalid override policies select web; they must not override it")
	badPatch := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad-patch"}}
	testkit.MustYAML(t, badPatch, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - overriders:
      plaintext: [{path: metadata/labels/patched, operator: add, value: "yes"}]
`)
	testkit.MustCreate(t, hub, badPatch)
	badImage := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad-image"}}
	testkit.MustYAML(t, badImage, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - overriders:
      imageOverrider: [{component: Bogus, operator: replace, value: evil.example.com}]
`)
	testkit.MustCreate(t, hub, badImage)

	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "PropagationPolicy", Name: "bad-weights", Reason: api.ReasonPolicyInvalid, Type: corev1.EventTypeWarning,
			Note: "PropagationPolicy default/bad-weights is invalid and is not acted on: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid value: -1"},
		{Kind: "PropagationPolicy", Name: "bad-selector", Reason: api.ReasonPolicyInvalid, Type: corev1.EventTypeWarning,
			Note: "PropagationPolicy default/bad-selector is invalid and is not acted on: spec.resourceSelectors[0].labelSelector.matchExpressions[0].operator"},
		{Kind: "OverridePolicy", Name: "bad-patch", Reason: api.ReasonPolicyInvalid, Type: corev1.EventTypeWarning,
			Note: "OverridePolicy default/bad-patch is invalid and is not acted on: spec.overrideRules[0].overriders.plaintext[0].path"},
		{Kind: "OverridePolicy", Name: "bad-image", Reason: api.ReasonPolicyInvalid, Type: corev1.EventTypeWarning,
			Note: "OverridePolicy default/bad-image is invalid and is not acted on: spec.overrideRules[0].overriders.imageOverrider[0].component"},
	})

	t.Log("a change of web waits for the override policies to be fixed; other, beside them, is placed and labelled")
	controllertest.SetImage(t, hub, "nginx:2")
	testkit.MustCreate(t, hub, controllertest.NamedDeployment("other"))
	waitMember(t, members[m0], "other", "labelled valid=yes", func(d *appsv1.Deployment) bool { return d.Labels["valid"] == "yes" })
	webBinding := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(deploy, "web")}
	waitBindingCondition(t, hub, webBinding, "OverridePolicy default/bad-", "overriders.")
	for range 10 {
		// api is claimed by no one, and web is not rendered without the
		// invalid policies' overrides, nor with them.
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(deploy, "api")}, &rb); !apierrors.IsNotFound(err) {
			t.Fatalf("api has a binding (claimed by %q, err %v): an invalid policy claimed it", rb.Labels[hoststore.LabelPolicy], err)
		}
		for name, c := range members {
			var d appsv1.Deployment
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "api"}, &d); !apierrors.IsNotFound(err) {
				t.Fatalf("api reached %s (err %v)", name, err)
			}
		}
		var web appsv1.Deployment
		if err := members[m0].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &web); err != nil {
			t.Fatal(err)
		}
		if img := web.Spec.Template.Spec.Containers[0].Image; img != "nginx" || web.Labels["patched"] != "" || web.Labels["valid"] != "yes" {
			t.Fatalf("web on %s has image %q and labels %v: rendered while an override policy selecting it is invalid", m0, img, web.Labels)
		}
		time.Sleep(300 * time.Millisecond)
	}

	t.Log("good turns invalid: web stays on " + m0 + " with its binding, and says why")
	updatePolicy(t, hub, good, func(p *policyv1.PropagationPolicy) {
		p.Spec.Placement.SpreadConstraints = []api.SpreadConstraint{{SpreadByField: api.SpreadByFieldRegion, MaxGroups: 1}}
	})
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "Deployment", Name: "other", Reason: api.ReasonPolicyInvalid, Type: corev1.EventTypeWarning, Note: "PropagationPolicy default/good is invalid and is not acted on: spec.placement.spreadConstraints"},
		{Kind: "PropagationPolicy", Name: "good", Reason: api.ReasonPolicyInvalid, Type: corev1.EventTypeWarning, Note: "PropagationPolicy default/good is invalid and is not acted on: spec.placement.spreadConstraints"},
	})
	otherBinding := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(deploy, "other")}
	var rb workv1.ResourceBinding
	if err := hub.Get(ctx, otherBinding, &rb); err != nil || rb.Labels[hoststore.LabelPolicy] != "PropagationPolicy.good" {
		t.Fatalf("other's binding: %v, claimed by %q; want it kept, claimed by PropagationPolicy.good", err, rb.Labels[hoststore.LabelPolicy])
	}
	controllertest.WaitPlaced(t, members, "other", m0)
	controllertest.WaitPlaced(t, members, "web", m0)

	t.Log("fixed: good is valid again, bad-image deleted, bad-patch fixed; web gets its change and the patch")
	updatePolicy(t, hub, good, func(p *policyv1.PropagationPolicy) { p.Spec.Placement.SpreadConstraints = nil })
	if err := hub.Delete(ctx, badImage); err != nil {
		t.Fatal(err)
	}
	updatePolicy(t, hub, badPatch, func(p *policyv1.OverridePolicy) {
		p.Spec.OverrideRules[0].Overriders.Plaintext[0].Path = "/metadata/labels/patched"
	})
	waitMember(t, members[m0], "web", "image nginx:2, labelled patched=yes and valid=yes", func(d *appsv1.Deployment) bool {
		return d.Spec.Template.Spec.Containers[0].Image == "nginx:2" && d.Labels["patched"] == "yes" && d.Labels["valid"] == "yes"
	})
}

// waitMember waits until the Deployment name in c satisfies ok.
func waitMember(t *testing.T, c client.Client, name, what string, ok func(*appsv1.Deployment) bool) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, name+" "+what, func() (bool, string) {
		var d appsv1.Deployment
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, &d); err != nil {
			return false, err.Error()
		}
		return ok(&d), fmt.Sprintf("image %q, labels %v", d.Spec.Template.Spec.Containers[0].Image, d.Labels)
	})
}

// waitBindingCondition waits until the binding's FullyApplied condition is
// False with a message that contains every part of want.
func waitBindingCondition(t *testing.T, hub client.Client, key client.ObjectKey, want ...string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("binding %s FullyApplied=False with %q", key, want), func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(t.Context(), key, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionFullyApplied)
		if c == nil || c.Status != metav1.ConditionFalse {
			return false, fmt.Sprintf("%+v", c)
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return false, c.Message
			}
		}
		return true, ""
	})
}

// updatePolicy reads p again, changes it with mod and writes it.
func updatePolicy[P client.Object](t *testing.T, hub client.Client, p P, mod func(P)) {
	t.Helper()
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(p), p, func() {
		mod(p)
	})
}
