package helm

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestChartPullLeases installs the chart on a real host that has no
// flotilla-cluster namespace yet, then registers two Pull clusters as
// `register` does, and reads the Leases with each identity. The chart's
// ServiceAccount gets a Pull cluster's Lease, as the cluster status
// controller does to turn an agent that stopped renewing Unknown; the
// attack: it may not renew, list or watch them (without the dashboard), nor
// get a Lease of another namespace. An agent's identity renews its own
// Lease, reads its own Works and reports in its own report space, and may
// not read the other cluster's Lease, Works or reports.
func TestChartPullLeases(t *testing.T) {
	objs := render(t, "--include-crds")
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	admin := controllertest.Client(t, host.RESTConfig(), controllertest.Scheme(t))
	install(t, admin, objs)
	ctx := t.Context()
	regs := map[string]agent.AgentRegistration{}
	for _, name := range []string{"edge", "other"} {
		reg, err := agent.RegisterAgent(ctx, admin, name, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		regs[name] = reg
	}
	testkit.MustCreate(t, admin, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "someone-else"}})

	as := func(token string) client.Client {
		return controllertest.Client(t, &rest.Config{Host: host.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}}, admin.Scheme())
	}
	cp, edge := as(serviceAccountToken(t, host.Clientset(t), releaseName)), as(regs["edge"].Token)
	leases := shared.ClusterLeaseNamespace()
	lease := func(c client.Client, ns, name string) func() error {
		return func() error { return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &coordinationv1.Lease{}) }
	}
	renew := func(c client.Client, name string) func() error {
		return func() error {
			var l coordinationv1.Lease
			if err := admin.Get(ctx, client.ObjectKey{Namespace: leases, Name: name}, &l); err != nil {
				return err
			}
			now := metav1.NowMicro()
			l.Spec.RenewTime = &now
			return c.Update(ctx, &l)
		}
	}
	// The authorizer learns the bindings from a watch.
	testkit.Eventually(t, 30*time.Second, "the chart's lease Role in force", func() (bool, string) {
		err := lease(cp, leases, "edge")()
		return err == nil, fmt.Sprint(err)
	})
	for _, c := range []struct {
		what    string
		allowed bool
		do      func() error
	}{
		{"the control plane reads cluster edge's Lease", true, lease(cp, leases, "edge")},
		{"the control plane reads cluster other's Lease", true, lease(cp, leases, "other")},
		{"the control plane renews an agent's Lease", false, renew(cp, "edge")},
		{"the control plane lists the agents' Leases", false, func() error {
			return cp.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace(leases))
		}},
		{"the control plane reads a Lease in kube-system", false, lease(cp, "kube-system", "someone-else")},
		{"edge's agent renews its Lease", true, renew(edge, "edge")},
		{"edge's agent lists its Works", true, func() error {
			return edge.List(ctx, &workv1.WorkList{}, client.InNamespace(shared.ExecutionNamespace("edge")))
		}},
		{"edge's agent lists its reports", true, func() error {
			return edge.List(ctx, &discoveryv1.EndpointSliceList{}, client.InNamespace(shared.ReportNamespace("edge")))
		}},
		{"edge's agent reads other's Lease", false, lease(edge, leases, "other")},
		{"edge's agent renews other's Lease", false, renew(edge, "other")},
		{"edge's agent lists other's Works", false, func() error {
			return edge.List(ctx, &workv1.WorkList{}, client.InNamespace(shared.ExecutionNamespace("other")))
		}},
		{"edge's agent lists other's reports", false, func() error {
			return edge.List(ctx, &discoveryv1.EndpointSliceList{}, client.InNamespace(shared.ReportNamespace("other")))
		}},
	} {
		err := c.do()
		switch {
		case c.allowed && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case !c.allowed && !apierrors.IsForbidden(err):
			t.Errorf("%s: %v, want Forbidden", c.what, err)
		}
	}
}
