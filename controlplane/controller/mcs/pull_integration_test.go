package mcs_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestPullModeExporter exports shop/web from a Pull member, which the
// control plane cannot reach (its agent reports the member's slices into
// its report space with the least-privilege identity RegisterAgent
// issues), and from a Push member, and imports it into both: each
// consumer, the Pull one through its agent's Works, gets both members'
// endpoints and follows a change in the Pull member. With the agent's own
// identity, an attacker holding it cannot add endpoints to a Service its
// cluster does not export (a report of tenant-b/web, exported only by the
// Push member, is never collected), cannot write what the host collected
// (an EndpointSlice in its execution namespace) and cannot report for
// another cluster. Deleting the export leaves no report behind.
func TestPullModeExporter(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	host, pulled, pushed := fleet.Clusters[0], fleet.Clusters[1], fleet.Clusters[2]
	hub := controllertest.SystemHost(t, host)
	controllertest.RegisterMember(t, hub, pushed)
	members, names := controllertest.MemberClients(t, []*testenv.Cluster{pulled, pushed}, hub.Scheme())
	f := controllertest.Fleet{Host: host, Hub: hub, Members: members, Clusters: []*testenv.Cluster{pulled, pushed}, Names: names, Scheme: hub.Scheme()}
	pull, push := pulled.Name, pushed.Name
	ctx := t.Context()
	reg, err := agent.RegisterAgent(ctx, hub, pull, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []client.Client{hub, members[pull], members[push]} {
		installCRDs(t, c)
	}
	for _, ns := range []string{"shop", "tenant-b"} {
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		for _, m := range members {
			testkit.MustCreate(t, m, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	}
	testkit.MustCreate(t, members[pull], service("shop", "web"))
	testkit.MustCreate(t, members[pull], slice("shop", "web-a", "web", "10.0.0.1"))
	testkit.MustCreate(t, members[push], service("shop", "web"))
	testkit.MustCreate(t, members[push], slice("shop", "web-b", "web", "10.1.0.1"))
	testkit.MustCreate(t, members[push], service("tenant-b", "web"))
	testkit.MustCreate(t, members[push], slice("tenant-b", "web-c", "web", "10.2.0.1"))
	createMCS(t, hub, "shop", multicluster.KindServiceExport, nil)
	createPolicy(t, hub, "shop", "export", multicluster.KindServiceExport, pull, push)
	createMCS(t, hub, "shop", multicluster.KindServiceImport, importSpec())
	createPolicy(t, hub, "shop", "import", multicluster.KindServiceImport, pull, push)
	createMCS(t, hub, "tenant-b", multicluster.KindServiceExport, nil)
	createPolicy(t, hub, "tenant-b", "export", multicluster.KindServiceExport, push)
	createMCS(t, hub, "tenant-b", multicluster.KindServiceImport, importSpec())
	createPolicy(t, hub, "tenant-b", "import", multicluster.KindServiceImport, push)

	start := time.Now()
	f.StartControlPlane(t)
	t.Cleanup(func() { dumpOnFailure(t, hub) })
	// The agent, as the agent command runs it: a watching member cache,
	// its hub identity, its own cache of the hub.
	cache := member.NewCache(member.CacheOptions{Watch: true})
	mc, err := cache.Get(ctx, pull, member.Connection{Host: pulled.Host, Token: pulled.Token, ClusterCACertificate: pulled.CAData})
	if err != nil {
		t.Fatal(err)
	}
	agentCfg := &rest.Config{Host: host.Host, BearerToken: reg.Token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}}
	opts := agent.AgentOptions{Cluster: pull, LeaseDuration: 10 * time.Second, RenewInterval: time.Second, StatusInterval: time.Second,
		MemberCache: cache, Options: controllertest.Options("test")}
	controllertest.StartManager(t, agentCfg, ctrl.Options{Scheme: hub.Scheme(), Cache: agent.AgentCacheOptions(pull)},
		func(mgr manager.Manager) error { return agent.SetupAgent(mgr, mc, opts) })

	// Both consumers, the Pull one through its agent, get both exporters'
	// endpoints; the export and the import name both clusters.
	waitAddresses(t, members[push], "shop", "10.0.0.1", "10.1.0.1")
	waitAddresses(t, members[pull], "shop", "10.0.0.1", "10.1.0.1")
	t.Logf("first import from the Pull member in %s", time.Since(start).Round(time.Millisecond))
	both := slices.Sorted(slices.Values([]string{pull, push}))
	waitImportClusters(t, hub, "shop", both...)
	waitConditions(t, hub, map[string]string{
		"Valid":    fmt.Sprintf("True Exported exported from %s, %s", both[0], both[1]),
		"Conflict": "False NoConflict the exporting clusters' Services agree on their ports and type",
	})
	// A change in the Pull member reaches the Push consumer.
	changed := time.Now()
	web := &discoveryv1.EndpointSlice{}
	testkit.MustUpdate(t, members[pull], client.ObjectKey{Namespace: "shop", Name: "web-a"}, web, func() {
		web.Endpoints = append(web.Endpoints, endpoint("10.0.0.2"))
	})
	waitAddressesEvery(t, members[push], "shop", 20*time.Millisecond, "10.0.0.1", "10.0.0.2", "10.1.0.1")
	t.Logf("a Pull member's endpoint change reached the Push consumer in %s", time.Since(changed).Round(time.Millisecond))

	// The attacker holds the agent's identity.
	waitAddresses(t, members[push], "tenant-b", "10.2.0.1")
	attacker := controllertest.Client(t, agentCfg, hub.Scheme())
	forged := slice("tenant-b", "web-forged", "web", "10.66.0.1")
	report := multicluster.Report(shared.ReportNamespace(pull), forged, multicluster.ReportedService{Exported: true, Ports: []string{"http:80/TCP"}})
	if err := attacker.Create(ctx, report); err != nil {
		t.Fatalf("the agent may not write a report in its own report space: %v", err)
	}
	collected := multicluster.Collect(pull, shared.ExecutionNamespace(pull), forged)
	if err := attacker.Create(ctx, collected); !apierrors.IsForbidden(err) {
		t.Errorf("the agent wrote a collected slice into its execution namespace: %v; want forbidden", err)
	}
	elsewhere := multicluster.Report(shared.ReportNamespace(push), forged, multicluster.ReportedService{Exported: true})
	if err := attacker.Create(ctx, elsewhere); !apierrors.IsForbidden(err) {
		t.Errorf("the agent reported for cluster %s: %v; want forbidden", push, err)
	}
	// The forged report wakes tenant-b/web's collection, and so does a
	// change in the Push exporter after it: neither brings it in.
	other := &discoveryv1.EndpointSlice{}
	testkit.MustUpdate(t, members[push], client.ObjectKey{Namespace: "tenant-b", Name: "web-c"}, other, func() {
		other.Endpoints = append(other.Endpoints, endpoint("10.2.0.2"))
	})
	waitAddresses(t, members[push], "tenant-b", "10.2.0.1", "10.2.0.2")
	got, err := shared.CollectedSlices(ctx, hub, "tenant-b", "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.Labels[multicluster.LabelSourceCluster] != push {
			t.Errorf("collected slice %s/%s of tenant-b/web from cluster %s, which does not export it", s.Namespace, s.Name, s.Labels[multicluster.LabelSourceCluster])
		}
	}

	// Deleting the export withdraws the Pull member's endpoints, and the
	// agent its reports of shop/web.
	if err := hub.Delete(ctx, mcsObject("shop", multicluster.KindServiceExport, nil)); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, members[push], "shop")
	testkit.Eventually(t, deadline, "no report of shop/web left", func() (bool, string) {
		var list discoveryv1.EndpointSliceList
		if err := hub.List(ctx, &list, client.InNamespace(shared.ReportNamespace(pull)), client.MatchingLabels{multicluster.LabelServiceNamespace: "shop"}); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprint(sliceNames(list.Items))
	})
}
