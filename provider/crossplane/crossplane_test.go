package crossplane_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestManagedResourcesPropagate drives the whole provider against a real
// management/host apiserver and three real members: Cluster ×3,
// PropagationPolicy, OverridePolicy and Manifest managed resources roll a
// Deployment out (divided 1:2, the registry overridden in the second
// member) with the placement and rendered hashes in status.atProvider and
// Ready once the members report it ready; an Observe-only Manifest previews
// its placement and writes nothing; a second Cluster claiming a taken
// member is refused, and so is a second Cluster for the same member under
// another name (MembershipConflict); deleting the managed resources cleans
// the members and the host.
func TestManagedResourcesPropagate(t *testing.T) {
	e := startEnv(t)
	ctx := t.Context()
	m1, m2, m3 := e.names[0], e.names[1], e.names[2]

	t.Log("clusters: three members registered through Cluster managed resources")
	tiers := map[string]string{m1: "prod", m2: "prod", m3: "dev"}
	clusters := map[string]*v1alpha1.Cluster{}
	for i, m := range e.fleet {
		testkit.MustCreate(t, e.mgmt, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m.Name + "-kubeconfig"},
			Data:       map[string][]byte{"kubeconfig": testkit.ReadFile(t, m.KubeconfigPath)},
		})
		cl := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m.Name}}
		cl.Spec.ForProvider = v1alpha1.ClusterParameters{
			APIEndpoint:          m.Host,
			Region:               fmt.Sprintf("region-%d", i),
			Labels:               map[string]string{"tier": tiers[m.Name]},
			CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: m.Name + "-kubeconfig"},
		}
		testkit.MustCreate(t, e.mgmt, cl)
		clusters[m.Name] = cl
	}

	pp := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, pp, `
spec:
  forProvider:
    resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    - {apiVersion: apps/v1, kind: Deployment, name: preview}
    placement:
      clusterAffinity:
        labelSelector:
          matchLabels: {tier: prod}
      replicaScheduling:
        replicaSchedulingType: Divided
        replicaDivisionPreference: Weighted
        weightPreference:
          staticWeightList:
          - {targetCluster: {clusterNames: [%s]}, weight: 1}
          - {targetCluster: {clusterNames: [%s]}, weight: 2}
`, m1, m2)
	testkit.MustCreate(t, e.mgmt, pp)
	// The override policy goes through a ClusterProviderConfig that uses
	// the provider's own identity (only a ClusterProviderConfig may): here
	// the host is the management apiserver.
	testkit.MustCreate(t, e.mgmt, &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "local"},
		Spec:       v1alpha1.ProviderConfigSpec{Fleet: testFleet, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
	})
	op := &v1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "eu-registry"}}
	testkit.MustYAML(t, op, `
spec:
  providerConfigRef: {kind: ClusterProviderConfig, name: local}
  forProvider:
    resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment}
    overrideRules:
    - targetCluster: {clusterNames: [%s]}
      overriders:
        imageOverrider:
        - {component: Registry, operator: replace, value: registry.eu.example.com}
`, m2)
	testkit.MustCreate(t, e.mgmt, op)
	web := manifest(t, "web", 3, nil)
	testkit.MustCreate(t, e.mgmt, web)

	t.Log("propagate: 1 replica in the first member, 2 with the EU registry in the second, none in the dev member")
	poll(t, "deployments placed 1:2 with the override", func() (bool, string) {
		got, err := memberDeployments(t, e.members, "web")
		if err != nil {
			return false, err.Error()
		}
		ok := got[m1] != nil && got[m2] != nil && got[m3] == nil &&
			ptr.Deref(got[m1].Spec.Replicas, 0) == 1 && ptr.Deref(got[m2].Spec.Replicas, 0) == 2 &&
			image(got[m1]) == "nginx:1.27" && image(got[m2]) == "registry.eu.example.com/nginx:1.27"
		return ok, describe(got)
	})
	placed, err := memberDeployments(t, e.members, "web")
	if err != nil {
		t.Fatal(err)
	}
	poll(t, "manifest atProvider shows placement, policy and rendered hashes", func() (bool, string) {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
			return false, err.Error()
		}
		obs := web.Status.AtProvider
		hashes := map[string]string{}
		for _, c := range obs.Clusters {
			hashes[c.Name] = c.RenderedHash
		}
		ok := maps.Equal(obs.Placement, map[string]int32{m1: 1, m2: 2}) && obs.Policy == "PropagationPolicy/web" && !obs.Preview &&
			hashes[m1] == placed[m1].Annotations[render.AnnotationRenderedHash] && hashes[m2] == placed[m2].Annotations[render.AnnotationRenderedHash] &&
			hashes[m1] != "" && hashes[m1] != hashes[m2]
		return ok, fmt.Sprintf("atProvider %+v, member hashes %s / %s", obs, placed[m1].Annotations[render.AnnotationRenderedHash], placed[m2].Annotations[render.AnnotationRenderedHash])
	})
	if c, err := conditionOf(t, e.mgmt, web, xpv2.TypeReady); err != nil || c.Status == corev1.ConditionTrue {
		t.Errorf("Ready before the members report the deployments ready: %+v %v", c, err)
	}

	t.Log("ready: the members report the deployments ready; the manifest becomes Ready with aggregated status")
	setReady(t, e.members[m1], "web")
	setReady(t, e.members[m2], "web")
	poll(t, "manifest Ready", func() (bool, string) {
		c, status, err := readyAndStatus(t, e.mgmt, web)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionTrue && web.Status.AtProvider.Health == "Healthy" && strings.Contains(status, `"readyReplicas":3`),
			fmt.Sprintf("ready %+v, health %q, status %s", c, web.Status.AtProvider.Health, status)
	})
	for name, cl := range clusters {
		poll(t, "cluster "+name+" Ready", func() (bool, string) {
			c, err := conditionOf(t, e.mgmt, cl, xpv2.TypeReady)
			if err != nil {
				return false, err.Error()
			}
			return c.Status == corev1.ConditionTrue && cl.Status.AtProvider.KubernetesVersion != "", fmt.Sprintf("%+v %+v", c, cl.Status.AtProvider)
		})
	}
	poll(t, "propagation policy lists its template", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, pp, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionTrue && len(pp.Status.AtProvider.Templates) == 1 && pp.Status.AtProvider.Templates[0] == "Deployment/web",
			fmt.Sprintf("%+v %+v", c, pp.Status.AtProvider)
	})

	poll(t, "provider configs count their users", func() (bool, string) {
		var cpc, local v1alpha1.ClusterProviderConfig
		if err := e.mgmt.Get(ctx, client.ObjectKey{Name: "default"}, &cpc); err != nil {
			return false, err.Error()
		}
		if err := e.mgmt.Get(ctx, client.ObjectKey{Name: "local"}, &local); err != nil {
			return false, err.Error()
		}
		return cpc.Status.Users == 5 && local.Status.Users == 1, fmt.Sprintf("ClusterProviderConfig users: default %d, local %d", cpc.Status.Users, local.Status.Users)
	})

	t.Log("update: scaling the manifest to 6 replicas moves 2 and 4 to the members")
	testkit.MustUpdate(t, e.mgmt, client.ObjectKeyFromObject(web), web, func() {
		web.Spec.ForProvider = manifest(t, "web", 6, nil).Spec.ForProvider
	})
	poll(t, "members scaled 2:4", func() (bool, string) {
		got, err := memberDeployments(t, e.members, "web")
		if err != nil {
			return false, err.Error()
		}
		return got[m1] != nil && got[m2] != nil && ptr.Deref(got[m1].Spec.Replicas, 0) == 2 && ptr.Deref(got[m2].Spec.Replicas, 0) == 4, describe(got)
	})
	poll(t, "manifest atProvider follows the update", func() (bool, string) {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
			return false, err.Error()
		}
		return maps.Equal(web.Status.AtProvider.Placement, map[string]int32{m1: 2, m2: 4}), fmt.Sprintf("%+v", web.Status.AtProvider.Placement)
	})

	t.Log("preview: an Observe-only manifest shows its placement and writes nothing")
	preview := manifest(t, "preview", 6, xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
	testkit.MustCreate(t, e.mgmt, preview)
	poll(t, "preview placement", func() (bool, string) {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(preview), preview); err != nil {
			return false, err.Error()
		}
		obs := preview.Status.AtProvider
		synced := preview.GetCondition(xpv2.TypeSynced)
		hashed := len(obs.Clusters) == 2 && obs.Clusters[0].RenderedHash != "" && obs.Clusters[1].RenderedHash != ""
		return obs.Preview && maps.Equal(obs.Placement, map[string]int32{m1: 2, m2: 4}) && obs.Policy == "PropagationPolicy/web" && hashed &&
				obs.Reasons[m3] != "" && synced.Status == corev1.ConditionFalse && strings.Contains(synced.Message, "does not exist"),
			fmt.Sprintf("atProvider %+v, synced %+v", obs, synced)
	})
	var tmpl appsv1.Deployment
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "default", Name: "preview"}, &tmpl); !apierrors.IsNotFound(err) {
		t.Errorf("preview wrote the template to the host: %v", err)
	}
	var rb workv1.ResourceBinding
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "default", Name: "preview-deployment.apps"}, &rb); !apierrors.IsNotFound(err) {
		t.Errorf("preview made a binding: %v", err)
	}
	if got, err := memberDeployments(t, e.members, "preview"); err != nil || got[m1] != nil || got[m2] != nil || got[m3] != nil {
		t.Errorf("preview reached the members: %s %v", describe(got), err)
	}

	t.Log("ownership: a Cluster in another namespace cannot take over a registered member")
	testkit.MustCreate(t, e.mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}})
	thief := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "thief", Annotations: map[string]string{"crossplane.io/external-name": m1}}}
	thief.Spec.ForProvider.Region = "elsewhere"
	testkit.MustCreate(t, e.mgmt, thief)
	poll(t, "takeover refused", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, thief, xpv2.TypeSynced)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "refusing to take it over"), fmt.Sprintf("%+v", c)
	})
	var hostCluster clusterv1.Cluster
	if err := e.mgmt.Get(ctx, client.ObjectKey{Name: m1}, &hostCluster); err != nil || hostCluster.Spec.Region != "region-0" {
		t.Errorf("host Cluster %s changed by the refused takeover: region %q, %v", m1, hostCluster.Spec.Region, err)
	}

	t.Log("one physical cluster, one name: a second Cluster for member " + m1 + " under another name is refused")
	twin := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m1 + "-twin"}}
	twin.Spec.ForProvider = clusters[m1].Spec.ForProvider
	testkit.MustCreate(t, e.mgmt, twin)
	poll(t, "twin refused", func() (bool, string) {
		c, err := conditionOf(t, e.mgmt, twin, xpv2.TypeReady)
		if err != nil {
			return false, err.Error()
		}
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, api.ReasonMembershipConflict) &&
			strings.Contains(c.Message, fmt.Sprintf("is already registered as %q", m1)), fmt.Sprintf("%+v", c)
	})

	t.Log("delete: the manifest leaves the members before its managed resource goes; then the fleet is dismantled")
	for _, obj := range []client.Object{preview, thief, twin, web} {
		if err := e.mgmt.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	gone(t, e.mgmt, web)
	if got, err := memberDeployments(t, e.members, "web"); err != nil || got[m1] != nil || got[m2] != nil {
		t.Errorf("manifest gone but members still hold it: %s %v", describe(got), err)
	}
	if err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &tmpl); !apierrors.IsNotFound(err) {
		t.Errorf("template left in the host: %v", err)
	}
	gone(t, e.mgmt, preview)
	gone(t, e.mgmt, thief)
	for _, obj := range []client.Object{pp, op, clusters[m1], clusters[m2], clusters[m3]} {
		if err := e.mgmt.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range []client.Object{pp, op, clusters[m1], clusters[m2], clusters[m3]} {
		gone(t, e.mgmt, obj)
	}
	for _, obj := range []client.Object{
		&policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}},
		&policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "eu-registry"}},
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m1}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: m1}},
	} {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s left in the host: %v", obj, obj.GetName(), err)
		}
	}
}

// manifest is a Manifest managed resource holding Deployment name.
func manifest(t *testing.T, name string, replicas int, policies xpv2.ManagementPolicies) *v1alpha1.Manifest {
	t.Helper()
	m := &v1alpha1.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	testkit.MustYAML(t, m, `
spec:
  forProvider:
    manifest:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: %s}
      spec:
        replicas: %d
        selector: {matchLabels: {app: %s}}
        template:
          metadata: {labels: {app: %s}}
          spec:
            containers: [{name: web, image: "nginx:1.27"}]
`, name, replicas, name, name)
	m.Spec.ManagementPolicies = policies
	return m
}

func image(d *appsv1.Deployment) string {
	return d.Spec.Template.Spec.Containers[0].Image
}

func describe(got map[string]*appsv1.Deployment) string {
	var b strings.Builder
	for name, d := range got {
		if d == nil {
			fmt.Fprintf(&b, "%s: none; ", name)
			continue
		}
		fmt.Fprintf(&b, "%s: %d × %s; ", name, ptr.Deref(d.Spec.Replicas, 0), image(d))
	}
	return b.String()
}
