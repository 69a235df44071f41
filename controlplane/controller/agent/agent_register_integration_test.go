package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// agentHubConfig is the hub config of an agent whose token RegisterAgent
// issued.
func agentHubConfig(host *testenv.Cluster, token string) *rest.Config {
	return &rest.Config{Host: host.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}}
}

// TestAgentIdentityIsLeastPrivilege registers the agents of two Pull
// clusters on a host that authorizes with RBAC, and uses one agent's token:
// it may read and write its own Cluster and status, its own Lease and the
// Works of its own execution namespace; it may not read another cluster's
// Works, Cluster or Lease, any Secret, or any binding, nor create Clusters.
// A Push cluster is refused to register, and registering again is
// idempotent.
func TestAgentIdentityIsLeastPrivilege(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	host := fleet.Clusters[0]
	hub := controllertest.SystemHost(t, host)
	ctx := t.Context()
	reg, err := agent.RegisterAgent(ctx, hub, "edge", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.RegisterAgent(ctx, hub, "other", time.Hour); err != nil {
		t.Fatal(err)
	}
	if reg.ServiceAccount != shared.ClusterLeaseNamespace()+"/flotilla-agent-edge" || reg.Token == "" || time.Until(reg.ExpiresAt) < 50*time.Minute {
		t.Fatalf("registration %s, token set %v, expires %v; want flotilla-cluster/flotilla-agent-edge with an hour's token", reg.ServiceAccount, reg.Token != "", reg.ExpiresAt)
	}
	var cl clusterv1.Cluster
	if err := hub.Get(ctx, client.ObjectKey{Name: "edge"}, &cl); err != nil || cl.Spec.SyncMode != api.Pull || cl.Spec.SecretRef != nil {
		t.Fatalf("cluster edge %v: syncMode %q, secretRef %v; want a Pull cluster without credentials", err, cl.Spec.SyncMode, cl.Spec.SecretRef)
	}
	testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: shared.SystemNamespace, Name: "east"}, Data: map[string][]byte{"token": []byte("x")}})

	agentHub := controllertest.Client(t, agentHubConfig(host, reg.Token), hub.Scheme())
	edgeWorks, otherWorks := client.InNamespace(shared.ExecutionNamespace("edge")), client.InNamespace(shared.ExecutionNamespace("other"))
	checks := []struct {
		what    string
		allowed bool
		do      func() error
	}{
		{"read its own Cluster", true, func() error { return agentHub.Get(ctx, client.ObjectKey{Name: "edge"}, &clusterv1.Cluster{}) }},
		{"watch-list its own Cluster by name", true, func() error {
			return agentHub.List(ctx, &clusterv1.ClusterList{}, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", "edge")})
		}},
		{"write its own Cluster's status", true, func() error {
			var own clusterv1.Cluster
			if err := agentHub.Get(ctx, client.ObjectKey{Name: "edge"}, &own); err != nil {
				return err
			}
			orig := own.DeepCopy()
			own.Status.KubernetesVersion = "v1.35.4"
			return agentHub.Status().Patch(ctx, &own, client.MergeFrom(orig))
		}},
		{"list the Works of its execution namespace", true, func() error { return agentHub.List(ctx, &workv1.WorkList{}, edgeWorks) }},
		{"renew its own Lease", true, func() error {
			var l coordinationv1.Lease
			if err := agentHub.Get(ctx, client.ObjectKey{Namespace: shared.ClusterLeaseNamespace(), Name: "edge"}, &l); err != nil {
				return err
			}
			now := metav1.NowMicro()
			l.Spec.RenewTime = &now
			return agentHub.Update(ctx, &l)
		}},
		{"list another cluster's Works", false, func() error { return agentHub.List(ctx, &workv1.WorkList{}, otherWorks) }},
		{"list every Work", false, func() error { return agentHub.List(ctx, &workv1.WorkList{}) }},
		{"read another Cluster", false, func() error { return agentHub.Get(ctx, client.ObjectKey{Name: "other"}, &clusterv1.Cluster{}) }},
		{"list Clusters", false, func() error { return agentHub.List(ctx, &clusterv1.ClusterList{}) }},
		{"read another cluster's Lease", false, func() error {
			return agentHub.Get(ctx, client.ObjectKey{Namespace: shared.ClusterLeaseNamespace(), Name: "other"}, &coordinationv1.Lease{})
		}},
		{"read a member's credentials Secret", false, func() error {
			return agentHub.Get(ctx, client.ObjectKey{Namespace: shared.SystemNamespace, Name: "east"}, &corev1.Secret{})
		}},
		{"list Secrets of its execution namespace", false, func() error { return agentHub.List(ctx, &corev1.SecretList{}, edgeWorks) }},
		{"list ResourceBindings", false, func() error { return agentHub.List(ctx, &workv1.ResourceBindingList{}) }},
		// A compromised member must not relabel its Cluster to attract other
		// workloads, nor point the control plane at other credentials and an
		// endpoint of its choosing.
		{"relabel its own Cluster", false, func() error {
			return ownCluster(ctx, agentHub, func(c *clusterv1.Cluster) { c.Labels = map[string]string{"env": "prod"} })
		}},
		{"switch its own Cluster to Push with another member's credentials", false, func() error {
			return ownCluster(ctx, agentHub, func(c *clusterv1.Cluster) {
				c.Spec.SyncMode, c.Spec.APIEndpoint = api.Push, "https://attacker.example:6443"
				c.Spec.SecretRef = &api.LocalSecretReference{Namespace: shared.SystemNamespace, Name: "east"}
			})
		}},
		{"create a Cluster", false, func() error {
			return agentHub.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "rogue"}, Spec: api.ClusterSpec{SyncMode: api.Pull}})
		}},
	}
	for _, c := range checks {
		err := c.do()
		switch {
		case c.allowed && err != nil:
			t.Errorf("the agent may %s: %v", c.what, err)
		case !c.allowed && !apierrors.IsForbidden(err):
			t.Errorf("the agent tried to %s: %v, want Forbidden", c.what, err)
		}
	}

	t.Log("registering again issues a new token; a Push cluster is refused")
	again, err := agent.RegisterAgent(ctx, hub, "edge", time.Hour)
	if err != nil || again.Token == "" {
		t.Fatalf("registering edge again: %v", err)
	}
	testkit.MustCreate(t, hub, controllertest.ClusterObject("pushed", "https://127.0.0.1:1", shared.SystemNamespace))
	if _, err := agent.RegisterAgent(ctx, hub, "pushed", time.Hour); err == nil || !strings.Contains(err.Error(), "cluster pushed exists with spec.syncMode Push") {
		t.Errorf("registering an agent for a Push cluster: %v, want a refusal naming its syncMode", err)
	}
}

// ownCluster patches the agent's own Cluster "edge" with change, as the
// agent's identity.
func ownCluster(ctx context.Context, agentHub client.Client, change func(*clusterv1.Cluster)) error {
	var own clusterv1.Cluster
	if err := agentHub.Get(ctx, client.ObjectKey{Name: "edge"}, &own); err != nil {
		return err
	}
	orig := own.DeepCopy()
	change(&own)
	return agentHub.Patch(ctx, &own, client.MergeFrom(orig))
}
