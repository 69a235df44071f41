package mcs_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestServiceExportFromRealPods exports a Service whose EndpointSlices a
// real kube-controller-manager makes from kwok pods' IPs in a Full member,
// and imports it into a second Full member: the consumer's slices hold
// exactly the provider's pod IPs, follow a scale-up, and leave when the
// export is deleted.
func TestServiceExportFromRealPods(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly}).Clusters[0]
	members := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.Full}).Clusters
	hub := controllertest.SystemHost(t, host)
	for _, m := range members {
		controllertest.RegisterMember(t, hub, m)
	}
	clients, names := controllertest.MemberClients(t, members, controllertest.Scheme(t))
	provider, consumer := clients[names[0]], clients[names[1]]
	ctx := t.Context()
	for _, c := range []client.Client{hub, provider, consumer} {
		installCRDs(t, c)
	}
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	testkit.MustCreate(t, provider, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	testkit.MustCreate(t, provider, service("shop", "web"))
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
			},
		},
	}
	testkit.MustCreate(t, provider, web)
	createMCS(t, hub, "shop", multicluster.KindServiceExport, nil)
	createPolicy(t, hub, "shop", "export", multicluster.KindServiceExport, names[0])
	createMCS(t, hub, "shop", multicluster.KindServiceImport, importSpec())
	createPolicy(t, hub, "shop", "import", multicluster.KindServiceImport, names[1])
	f := controllertest.Fleet{Host: host, Hub: hub, Clusters: members, Names: names, Scheme: controllertest.Scheme(t)}
	// The default resync: the consumer follows the provider's watched
	// slices, not a poll.
	f.StartControlPlane(t, func(o *shared.Options) { o.Resync = shared.DefaultResync })

	waitAddresses(t, consumer, "shop", readyPodIPs(t, provider, 2)...)
	testkit.MustUpdate(t, provider, client.ObjectKeyFromObject(web), web, func() { web.Spec.Replicas = ptr.To[int32](3) })
	scaled := time.Now()
	waitAddresses(t, consumer, "shop", readyPodIPs(t, provider, 3)...)
	t.Logf("scale-up reached the consumer %s after the update", time.Since(scaled).Round(time.Millisecond))

	if err := hub.Delete(ctx, mcsObject("shop", multicluster.KindServiceExport, nil)); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, consumer, "shop")
}

// readyPodIPs waits for n ready pods of web in the provider and returns
// their IPs.
func readyPodIPs(t *testing.T, c client.Client, n int) []string {
	t.Helper()
	var ips []string
	testkit.Eventually(t, deadline, fmt.Sprintf("%d ready web pods", n), func() (bool, string) {
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace("shop"), client.MatchingLabels{"app": "web"}); err != nil {
			return false, err.Error()
		}
		ips = nil
		for _, p := range pods.Items {
			ready := slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
			})
			if ready && p.Status.PodIP != "" && p.DeletionTimestamp.IsZero() {
				ips = append(ips, p.Status.PodIP)
			}
		}
		return len(ips) == n, fmt.Sprint(ips)
	})
	return ips
}
