package member

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

type membership struct {
	Fleet, Member string
	Found         bool
}

func readMembership(t *testing.T, c *Client) membership {
	t.Helper()
	fleet, member, found, err := ReadMembership(t.Context(), c)
	if err != nil {
		t.Fatalf("ReadMembership: %v", err)
	}
	return membership{fleet, member, found}
}

func testMembership(t *testing.T, m *testenv.Cluster) {
	// Two names for one physical cluster, through two kinds of connection.
	east := mustGet(t, "east", tokenConn(m))
	west := mustGet(t, "west", Connection{KubeconfigPath: m.KubeconfigPath})
	ctx := t.Context()

	if diff := cmp.Diff(membership{}, readMembership(t, east)); diff != "" {
		t.Fatalf("membership of a fresh cluster (-want +got):\n%s", diff)
	}
	if err := Register(ctx, east, "prod", "east"); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if diff := cmp.Diff(membership{"prod", "east", true}, readMembership(t, west)); diff != "" {
		t.Errorf("membership after Register (-want +got):\n%s", diff)
	}

	cm, err := east.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Get(ctx, MembershipName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Labels[render.LabelManagedBy]; got != render.ManagedByFlotilla {
		t.Errorf("marker label %s = %q, want %q", render.LabelManagedBy, got, render.ManagedByFlotilla)
	}
	if cm.Immutable == nil || !*cm.Immutable {
		t.Errorf("marker is not immutable")
	}
	var managers []string
	for _, f := range cm.ManagedFields {
		managers = append(managers, fmt.Sprintf("%s/%s", f.Manager, f.Operation))
	}
	if diff := cmp.Diff([]string{"flotilla/Apply"}, managers); diff != "" {
		t.Errorf("marker field managers (-want +got):\n%s", diff)
	}
	ns, err := east.Kubernetes.CoreV1().Namespaces().Get(ctx, MembershipNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace %s: %v", MembershipNamespace, err)
	}
	if got := ns.Labels[render.LabelManagedBy]; got != render.ManagedByFlotilla {
		t.Errorf("namespace label %s = %q, want %q", render.LabelManagedBy, got, render.ManagedByFlotilla)
	}

	if err := Register(ctx, east, "prod", "east"); err != nil {
		t.Errorf("Register again under the same fleet and name: %v", err)
	}
	again, err := east.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Get(ctx, MembershipName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != cm.ResourceVersion {
		t.Errorf("registering again wrote the marker (resourceVersion %s -> %s)", cm.ResourceVersion, again.ResourceVersion)
	}

	refusals := []struct {
		c             *Client
		fleet, member string
	}{
		{west, "dev", "west"},
		{west, "prod", "west"},
		{east, "dev", "east"},
	}
	for _, r := range refusals {
		err := Register(ctx, r.c, r.fleet, r.member)
		var refusal *AlreadyRegisteredError
		if !errors.Is(err, ErrAlreadyRegistered) || !errors.As(err, &refusal) {
			t.Errorf("Register(%s, %s) = %v, want ErrAlreadyRegistered", r.fleet, r.member, err)
			continue
		}
		want := fmt.Sprintf(`cluster at %s is already registered as "east" in fleet "prod"; refusing to register it as %q in fleet %q`, m.Host, r.member, r.fleet)
		if err.Error() != want {
			t.Errorf("Register(%s, %s) = %q, want %q", r.fleet, r.member, err, want)
		}
	}

	if err := Unregister(ctx, west, "dev", "west"); err != nil {
		t.Errorf("Unregister of another fleet's membership: %v", err)
	}
	if diff := cmp.Diff(membership{"prod", "east", true}, readMembership(t, east)); diff != "" {
		t.Errorf("Unregister removed another fleet's marker (-want +got):\n%s", diff)
	}
	for range 2 { // the second time there is nothing to remove
		if err := Unregister(ctx, east, "prod", "east"); err != nil {
			t.Errorf("Unregister: %v", err)
		}
	}
	if diff := cmp.Diff(membership{}, readMembership(t, east)); diff != "" {
		t.Errorf("membership after Unregister (-want +got):\n%s", diff)
	}
	// The namespace Register created stays, as flotilla_cluster's and
	// flotilla_manifest's documentation say.
	if ns, err := east.Kubernetes.CoreV1().Namespaces().Get(ctx, MembershipNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s after Unregister: %v; the documentation says it stays", MembershipNamespace, err)
	} else if got := ns.Labels[render.LabelManagedBy]; got != render.ManagedByFlotilla {
		t.Errorf("namespace %s left by Unregister has managed-by %q, want %q (documented)", MembershipNamespace, got, render.ManagedByFlotilla)
	}
	if err := Register(ctx, east, "", "east"); err == nil {
		t.Errorf("Register with an empty fleet succeeded")
	}

	// Facts run here, not in a parallel subtest: they share the one marker.
	testMembershipFacts(t, east, west)
	testMembershipOwner(t, east, west, m.Host)

	t.Run("two fleets registering at once: exactly one wins", func(t *testing.T) {
		for round := range 5 {
			var wg sync.WaitGroup
			errs := make([]error, 2)
			wg.Go(func() { errs[0] = Register(ctx, east, "prod", "east") })
			wg.Go(func() { errs[1] = Register(ctx, west, "dev", "west") })
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil:
					if winner >= 0 {
						t.Fatalf("round %d: both registrations succeeded", round)
					}
					winner = i
				case !errors.Is(err, ErrAlreadyRegistered):
					t.Fatalf("round %d: loser got %v, want ErrAlreadyRegistered", round, err)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: nobody won: %v", round, errs)
			}
			want := []membership{{"prod", "east", true}, {"dev", "west", true}}[winner]
			if diff := cmp.Diff(want, readMembership(t, east)); diff != "" {
				t.Fatalf("round %d: marker does not record the winner (-want +got):\n%s", round, diff)
			}
			if err := Unregister(ctx, east, want.Fleet, want.Member); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// testMembershipFacts checks the facts annotation: recorded, rewritten in
// place only when it changes, kept by Register, refused under another name,
// and never written over a marker that changed since it was read. east and
// west are two names for one cluster that carries no marker.
func testMembershipFacts(t *testing.T, east, west *Client) {
	ctx := t.Context()
	marker := func() *corev1.ConfigMap {
		t.Helper()
		cm, err := east.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Get(ctx, MembershipName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	registration := func() Registration {
		t.Helper()
		r, found, err := ReadRegistration(ctx, west)
		if err != nil || !found {
			t.Fatalf("ReadRegistration = %+v, %v, %v", r, found, err)
		}
		return r
	}
	defer func() {
		if err := Unregister(ctx, east, "prod", "east"); err != nil {
			t.Errorf("Unregister: %v", err)
		}
	}()

	facts := Facts{
		Labels:   map[string]string{"tier": "prod"},
		Provider: "aws",
		Region:   "us-east-1",
		Zones:    []string{"us-east-1a", "us-east-1b"},
		Taints:   []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
	}
	if err := RegisterWithFacts(ctx, east, "prod", "east", facts); err != nil {
		t.Fatalf("RegisterWithFacts: %v", err)
	}
	if diff := cmp.Diff(Registration{Fleet: "prod", Member: "east", Facts: &facts}, registration()); diff != "" {
		t.Errorf("registration (-want +got):\n%s", diff)
	}
	first := marker()
	if first.Immutable == nil || !*first.Immutable {
		t.Errorf("marker with facts is not immutable")
	}

	if err := RegisterWithFacts(ctx, east, "prod", "east", facts); err != nil {
		t.Fatalf("RegisterWithFacts again: %v", err)
	}
	if err := Register(ctx, east, "prod", "east"); err != nil {
		t.Fatalf("Register over facts: %v", err)
	}
	if got := marker().ResourceVersion; got != first.ResourceVersion {
		t.Errorf("registering again with the same facts wrote the marker (resourceVersion %s -> %s)", first.ResourceVersion, got)
	}

	changed := Facts{Labels: map[string]string{"tier": "dr"}, Region: "us-west-2"}
	if err := RegisterWithFacts(ctx, east, "prod", "east", changed); err != nil {
		t.Fatalf("RegisterWithFacts with new facts: %v", err)
	}
	second := marker()
	if second.UID != first.UID {
		t.Errorf("changing facts replaced the marker (uid %s -> %s)", first.UID, second.UID)
	}
	if diff := cmp.Diff(first.Data, second.Data); diff != "" {
		t.Errorf("changing facts changed the marker's data (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(Registration{Fleet: "prod", Member: "east", Facts: &changed}, registration()); diff != "" {
		t.Errorf("registration after a facts change (-want +got):\n%s", diff)
	}
	var managers []string
	for _, f := range second.ManagedFields {
		managers = append(managers, fmt.Sprintf("%s/%s", f.Manager, f.Operation))
	}
	if diff := cmp.Diff([]string{"flotilla/Apply"}, managers); diff != "" {
		t.Errorf("marker field managers after a facts change (-want +got):\n%s", diff)
	}

	err := RegisterWithFacts(ctx, west, "prod", "west", facts)
	if !errors.Is(err, ErrAlreadyRegistered) {
		t.Errorf("RegisterWithFacts under another name = %v, want ErrAlreadyRegistered", err)
	}
	if diff := cmp.Diff(Registration{Fleet: "prod", Member: "east", Facts: &changed}, registration()); diff != "" {
		t.Errorf("a refused registration changed the facts (-want +got):\n%s", diff)
	}

	// The conditional write: a resourceVersion read before the last change
	// must not win.
	stale := `{"region":"stale"}`
	err = east.applyMarker(ctx, "prod", "east", "", &stale, first.ResourceVersion)
	if !apierrors.IsConflict(err) {
		t.Errorf("apply with a stale resourceVersion = %v, want a conflict", err)
	}

	id1, err := ClusterID(ctx, east)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := ClusterID(ctx, west)
	if err != nil {
		t.Fatal(err)
	}
	if id1 == "" || id1 != id2 {
		t.Errorf("ClusterID through two connections to one cluster = %q and %q, want the same UID", id1, id2)
	}
	if types.UID(id1) == second.UID {
		t.Errorf("ClusterID returned the marker's UID")
	}

	// A hand-edited annotation: ReadRegistration refuses it, ReadMembership
	// does not need it.
	cm := marker()
	cm.Annotations[MembershipFactsAnnotation] = "{not json"
	if _, err := east.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadRegistration(ctx, east); err == nil {
		t.Errorf("ReadRegistration of a broken facts annotation succeeded")
	}
	if diff := cmp.Diff(membership{"prod", "east", true}, readMembership(t, east)); diff != "" {
		t.Errorf("ReadMembership with a broken facts annotation (-want +got):\n%s", diff)
	}
	if err := RegisterWithFacts(ctx, east, "prod", "east", facts); err != nil {
		t.Fatalf("RegisterWithFacts over a broken annotation: %v", err)
	}
	if diff := cmp.Diff(Registration{Fleet: "prod", Member: "east", Facts: &facts}, registration()); diff != "" {
		t.Errorf("registration after repairing the facts (-want +got):\n%s", diff)
	}
}

// testMembershipOwner: a control plane's marker (RegisterOwned) is refused
// to another control plane of the same fleet and name, and to Terraform,
// and Terraform's Unregister leaves it. east and west are two names for
// one cluster that carries no marker.
func testMembershipOwner(t *testing.T, east, west *Client, host string) {
	ctx := t.Context()
	if err := RegisterOwned(ctx, east, "flotilla", "east", "controlplane/host-a"); err != nil {
		t.Fatalf("RegisterOwned: %v", err)
	}
	if err := RegisterOwned(ctx, west, "flotilla", "east", "controlplane/host-a"); err != nil {
		t.Errorf("RegisterOwned again by the same owner: %v", err)
	}
	for _, owner := range []string{"controlplane/host-b", ""} {
		err := RegisterOwned(ctx, west, "flotilla", "east", owner)
		want := fmt.Sprintf(`cluster at %s is already registered as "east" in fleet "flotilla" by controlplane/host-a; refusing to register it for %s`, host, ownerName(owner))
		if !errors.Is(err, ErrAlreadyRegistered) || err.Error() != want {
			t.Errorf("RegisterOwned by %q = %v, want %q", owner, err, want)
		}
	}
	if err := Register(ctx, west, "flotilla", "east"); !errors.Is(err, ErrAlreadyRegistered) {
		t.Errorf("Terraform's Register over a control plane's marker = %v, want ErrAlreadyRegistered", err)
	}
	if err := Unregister(ctx, west, "flotilla", "east"); err != nil {
		t.Errorf("Unregister: %v", err)
	}
	if diff := cmp.Diff(membership{"flotilla", "east", true}, readMembership(t, east)); diff != "" {
		t.Errorf("Terraform's Unregister removed a control plane's marker (-want +got):\n%s", diff)
	}
	// Clean up for the next checks, as an operator would.
	if err := east.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Delete(ctx, MembershipName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
