package member

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// testEndpointSlices checks the watched EndpointSlices of a namespace
// against the member: cut down to what an export reads, equal to what a
// client that does not watch lists, every change told to the cache's
// handler, and the informer stopped once idle.
func testEndpointSlices(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{Watch: true, EndpointSliceIdle: time.Second})
	var mu sync.Mutex
	var told []string
	cache.OnEndpointSlices(func(cluster string, s *discoveryv1.EndpointSlice) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, cluster+" "+s.Namespace+"/"+s.Name+" "+s.Labels[discoveryv1.LabelServiceName]+" "+endpointsOf(s))
	})
	c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Invalidate(m.Name) })
	lister := mustGet(t, m.Name, tokenConn(m))
	kube := c.Kubernetes
	ns := createNamespace(t, c, "slices")
	api := kube.DiscoveryV1().EndpointSlices(ns)
	web := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-a", Annotations: map[string]string{"note": "dropped"},
			Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io", "app": "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, Hostname: ptr.To("web-0"),
			Zone: ptr.To("a"), NodeName: ptr.To("node-1"), TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-0"},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	created, err := api.Create(t.Context(), web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := web.DeepCopy()
	other.Name, other.Labels = "other-a", map[string]string{discoveryv1.LabelServiceName: "other"}
	if _, err := api.Create(t.Context(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	read := func(c *Client) []*discoveryv1.EndpointSlice {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		got, err := c.EndpointSlices(ctx, ns, "web")
		if err != nil {
			t.Fatalf("EndpointSlices: %v", err)
		}
		return got
	}
	want := []*discoveryv1.EndpointSlice{{
		ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: ns, ResourceVersion: created.ResourceVersion,
			Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, Hostname: ptr.To("web-0"), Zone: ptr.To("a"),
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}}
	if d := cmp.Diff(want, read(c)); d != "" {
		t.Errorf("watched slices of web (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, read(lister)); d != "" {
		t.Errorf("listed slices of web (-want +got):\n%s", d)
	}
	if got := c.slices.watched(); !got[ns] || len(got) != 1 {
		t.Errorf("watched namespaces %v, want only %s", got, ns)
	}

	waitTold := func(what, want string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range told {
				if s == want {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: handler never told %q; told %q", what, want, told)
		}
	}
	waitTold("initial list", m.Name+" "+ns+"/web-a web 10.0.0.1")
	waitTold("initial list", m.Name+" "+ns+"/other-a other 10.0.0.1")
	created.Endpoints[0].Addresses = []string{"10.0.0.2"}
	if _, err := api.Update(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTold("update", m.Name+" "+ns+"/web-a web 10.0.0.2")
	if got := read(c); len(got) != 1 || endpointsOf(got[0]) != "10.0.0.2" {
		t.Errorf("after the update: %v", got)
	}
	mu.Lock()
	told = nil
	mu.Unlock()
	if err := api.Delete(t.Context(), "web-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTold("delete", m.Name+" "+ns+"/web-a web 10.0.0.2")
	if got := read(c); len(got) != 0 {
		t.Errorf("after the delete: %v", got)
	}

	// Nobody asks for the namespace for longer than the idle time: its
	// informer stops, and the next call starts one again.
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, false, func(context.Context) (bool, error) {
		return len(c.slices.watched()) == 0, nil
	})
	if err != nil {
		t.Fatalf("the idle namespace is still watched: %v", c.slices.watched())
	}
	if got := read(c); len(got) != 0 || !c.slices.watched()[ns] {
		t.Errorf("after idling: %v, watched %v", got, c.slices.watched())
	}
}

// endpointsOf is the slice's addresses, for messages.
func endpointsOf(s *discoveryv1.EndpointSlice) string {
	out := ""
	for _, e := range s.Endpoints {
		for _, a := range e.Addresses {
			if out != "" {
				out += ","
			}
			out += a
		}
	}
	return out
}

// testEndpointSlicesNotWatchable reads a namespace's slices with an
// identity that may list EndpointSlices there but not watch them: the
// client stops watching and lists on every read, so each read is current.
func testEndpointSlicesNotWatchable(t *testing.T, m *testenv.Cluster) {
	admin := mustGet(t, m.Name, tokenConn(m))
	ns := createNamespace(t, admin, "nowatch")
	kube := admin.Kubernetes
	ctx := t.Context()
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "list-slices"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{discoveryv1.GroupName}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "list-slices"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "list-slices"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(CacheOptions{Watch: true})
	t.Cleanup(func() { cache.Invalidate(m.Name) })
	c, err := cache.Get(ctx, m.Name, Connection{Host: m.Host, Token: tok.Status.Token, ClusterCACertificate: m.CAData})
	if err != nil {
		t.Fatal(err)
	}
	api := kube.DiscoveryV1().EndpointSlices(ns)
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}
	if s, err = api.Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		got, err := c.EndpointSlices(ctx, ns, "web")
		if err != nil {
			t.Fatalf("EndpointSlices with a list-only identity: %v", err)
		}
		out := ""
		for _, s := range got {
			out += endpointsOf(s)
		}
		return out
	}
	if got := read(); got != "10.0.0.1" {
		t.Fatalf("first read: %q", got)
	}
	s.Endpoints[0].Addresses = []string{"10.0.0.2"}
	if _, err := api.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watch is refused soon after the first list; from then on every
	// read lists.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		c.slices.mu.Lock()
		defer c.slices.mu.Unlock()
		return c.slices.listOnly, nil
	})
	if err != nil {
		t.Fatal("a refused watch did not make the client list")
	}
	if got := read(); got != "10.0.0.2" {
		t.Errorf("read after the update: %q, want 10.0.0.2", got)
	}
}
