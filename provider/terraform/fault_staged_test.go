package terraform

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// stagedFaultConfig is the web Deployment (shop/web) duplicated to every member by a policy
// whose rollout updates m1 (the canary) first, bakes bakeSeconds, then
// the rest.
func stagedFaultConfig(ms []*faultMember, image string, bakeSeconds int) string {
	var b strings.Builder
	b.WriteString(requiredProvidersHCL + providerHCL(faultFleet, ""))
	refs := make([]string, len(ms))
	for i, m := range ms {
		labels := ""
		if i == 0 {
			labels = `labels = { ring = "canary" }`
		}
		b.WriteString(tokenClusterHCL(m.name, m.host, m.env.Token, m.env.CAData, labels))
		refs[i] = "flotilla_cluster." + m.name
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	b.WriteString(policyHCL("web", "shop", "apps/v1", "Deployment", names, fmt.Sprintf(`rollout = { stages = [
    { name = "canary", cluster_affinity = { label_selector = { match_labels = { ring = "canary" } } }, gate = { bake_seconds = %d } },
    { name = "rest" },
  ] }`, bakeSeconds)))
	b.WriteString(webDeployment{replicas: 2, image: image, attrs: fmt.Sprintf("clusters = [%s]\n  propagation_policies = [flotilla_propagation_policy.web]", strings.Join(refs, ", "))}.HCL())
	return b.String()
}

// webImage is the image of the shop/web Deployment in a member; "" when absent.
func (m *faultMember) webImage(t *testing.T) string {
	t.Helper()
	d, err := m.clients.AppsV1().Deployments("shop").Get(context.Background(), "web", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatalf("%s: get deployment shop/web: %v", m.name, err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// TestFaultProviderKilledDuringGate kills the provider while a staged
// apply bakes the canary (m1 updated, m2 and m3 not yet): terraform fails
// and records nothing new, m2 and m3 are untouched, and the next apply
// updates the canary again (no change there), passes its gate and finishes
// the rollout; the plan after it is empty.
func TestFaultProviderKilledDuringGate(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	ms := startFaultMembersOf(t, testenv.Start(t, testenv.Options{Clusters: 3}))
	d.write(stagedFaultConfig(ms, "nginx:1.27", 1))
	d.mustRun("apply", "-auto-approve", "-no-color")
	d.write(stagedFaultConfig(ms, "nginx:1.28", 60))

	ctx, cmd, out := d.startApply(t)
	killed := waitUntil(ctx, func() bool {
		return ms[0].webImage(t) == "nginx:1.28" && killChild(t, cmd.Process.Pid)
	})
	err := cmd.Wait()
	t.Logf("terraform apply:\n%s", out.String())
	if !killed {
		t.Fatal("the provider process was not found while the canary baked")
	}
	if err == nil {
		t.Fatal("terraform apply succeeded although its provider was killed")
	}
	for _, m := range ms[1:] {
		if got := m.webImage(t); got != "nginx:1.27" {
			t.Errorf("%s runs %s after the kill during the canary's gate, want nginx:1.27 (untouched)", m.name, got)
		}
	}

	d.write(stagedFaultConfig(ms, "nginx:1.28", 1))
	d.mustRun("apply", "-auto-approve", "-no-color")
	for _, m := range ms {
		if got := m.webImage(t); got != "nginx:1.28" {
			t.Errorf("%s runs %s after the second apply, want nginx:1.28", m.name, got)
		}
	}
	d.expectEmptyPlan()
}
