package crossplane_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

const tenant = "team-a"

// TestTenancyBoundaries runs the provider's reconcilers against a real
// host, as a tenant who may write managed resources in one namespace only,
// and checks that nothing reaches beyond it: refused Manifest kinds write
// nothing and their managed resources can still be deleted; an existing
// unowned template is adopted only with spec.forProvider.adopt; Delete
// leaves what a Manifest does not own; a Cluster never adopts an
// administrator's host Cluster or credentials Secret.
func TestTenancyBoundaries(t *testing.T) {
	e := startEnvWith(t, 0)
	testkit.MustCreate(t, e.mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}})
	admin := adminCluster(t, e.mgmt, "member1")

	t.Run("refused manifests write nothing and delete cleanly", func(t *testing.T) { testRefusedManifests(t, e) })
	t.Run("unowned template adopted only with adopt", func(t *testing.T) { testAdoption(t, e) })
	t.Run("delete leaves what the manifest does not own", func(t *testing.T) { testDeleteNotOwned(t, e) })
	t.Run("cluster never adopts", func(t *testing.T) { testClusterNeverAdopts(t, e, admin) })
}

// adminObjects are a host Cluster and its credentials Secret an
// administrator created, as they were before any managed resource ran.
type adminObjects struct {
	cluster *clusterv1.Cluster
	secret  *corev1.Secret
}

func adminCluster(t *testing.T, c client.Client, name string) adminObjects {
	t.Helper()
	testkit.MustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crossplane.CredentialsNamespace()}})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: crossplane.CredentialsNamespace(), Name: name},
		Data:       map[string][]byte{clusterv1.SecretKeyKubeconfig: []byte("the administrator's kubeconfig")},
	}
	testkit.MustCreate(t, c, secret)
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "prod"}}}
	cl.Spec = api.ClusterSpec{
		SyncMode: api.Push, APIEndpoint: "https://127.0.0.1:1", Region: "admin-region",
		SecretRef: &api.LocalSecretReference{Namespace: crossplane.CredentialsNamespace(), Name: name},
	}
	testkit.MustCreate(t, c, cl)
	return adminObjects{cluster: cl, secret: secret}
}

// untouched fails unless the administrator's objects are as created: the
// Secret byte for byte at its resourceVersion; the Cluster, whose status
// and taints the control plane writes, never written by the provider's
// field manager and with its spec, labels and annotations as created.
func (a adminObjects) untouched(t *testing.T, c client.Client) {
	t.Helper()
	a.secretUntouched(t, c)
	var cl clusterv1.Cluster
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(a.cluster), &cl); err != nil {
		t.Fatalf("read the administrator's cluster: %v", err)
	}
	if i := slices.IndexFunc(cl.ManagedFields, func(f metav1.ManagedFieldsEntry) bool { return f.Manager == crossplane.FieldManager }); i >= 0 {
		t.Errorf("the provider wrote the administrator's cluster: %+v", cl.ManagedFields[i])
	}
	if cl.Spec.APIEndpoint != a.cluster.Spec.APIEndpoint || cl.Spec.Region != a.cluster.Spec.Region || *cl.Spec.SecretRef != *a.cluster.Spec.SecretRef ||
		cl.Labels["tier"] != "prod" || len(cl.Annotations) != 0 || cl.DeletionTimestamp != nil {
		t.Errorf("the administrator's cluster changed: spec %+v, labels %v, annotations %v, deleting %v", cl.Spec, cl.Labels, cl.Annotations, cl.DeletionTimestamp)
	}
}

// secretUntouched fails unless the administrator's Secret is byte for byte
// as created, at its resourceVersion.
func (a adminObjects) secretUntouched(t *testing.T, c client.Client) {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(a.secret), &s); err != nil {
		t.Fatalf("read the administrator's secret %s: %v", a.secret.Name, err)
	}
	if s.ResourceVersion != a.secret.ResourceVersion || !bytes.Equal(s.Data[clusterv1.SecretKeyKubeconfig], a.secret.Data[clusterv1.SecretKeyKubeconfig]) ||
		len(s.Annotations) != 0 || s.DeletionTimestamp != nil {
		t.Errorf("the administrator's secret %s changed: resourceVersion %s (was %s), annotations %v, deleting %v", s.Name, s.ResourceVersion, a.secret.ResourceVersion, s.Annotations, s.DeletionTimestamp)
	}
}

// syncFails waits until mg is Synced=False with a message containing want.
func syncFails(t *testing.T, c client.Client, mg interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}, want string,
) {
	t.Helper()
	poll(t, fmt.Sprintf("%T %s refused with %q", mg, mg.GetName(), want), func() (bool, string) {
		cond, err := conditionOf(t, c, mg, xpv2.TypeSynced)
		if err != nil {
			return false, err.Error()
		}
		return cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, want), fmt.Sprintf("%+v", cond)
	})
}

// tenantManifest is a Manifest in the tenant's namespace around a YAML object.
func tenantManifest(t *testing.T, name, object string) *v1alpha1.Manifest {
	t.Helper()
	m := &v1alpha1.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: name}}
	testkit.MustYAML(t, m, "spec:\n  forProvider:\n    manifest: %s\n", object)
	return m
}

func testRefusedManifests(t *testing.T, e env) {
	ctx := t.Context()
	var defaultNS corev1.Namespace
	if err := e.mgmt.Get(ctx, client.ObjectKey{Name: "default"}, &defaultNS); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, object, want string
		never              client.Object // must not exist in the host afterwards
	}{
		{
			name: "namespace-default", object: `{apiVersion: v1, kind: Namespace, metadata: {name: default, labels: {owned: "yes"}}}`,
			want: "spec.forProvider.manifest.kind: Namespace is cluster-scoped in the host",
		},
		{
			name:   "claim-every-secret",
			object: `{apiVersion: policy.flotilla.io/v1alpha1, kind: ClusterPropagationPolicy, metadata: {name: every-secret}, spec: {resourceSelectors: [{apiVersion: v1, kind: Secret}], placement: {clusterAffinity: {clusterNames: [evil]}}}}`,
			want:   "spec.forProvider.manifest.kind: a Manifest may not apply ClusterPropagationPolicy.policy.flotilla.io",
			never:  &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "every-secret"}},
		},
		{
			name:   "overwrite-member1",
			object: `{apiVersion: cluster.flotilla.io/v1alpha1, kind: Cluster, metadata: {name: member1}, spec: {syncMode: Push, apiEndpoint: "https://evil.example.com"}}`,
			want:   "spec.forProvider.manifest.kind: a Manifest may not apply Cluster.cluster.flotilla.io",
		},
		{
			name:   "cluster-admin",
			object: `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: tenant-admin}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}, subjects: [{kind: User, name: tenant}]}`,
			want:   "RBAC kinds would grant the provider's rights",
			never:  &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-admin"}},
		},
		{
			name:   "namespaced-role",
			object: `{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: all}, rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]}`,
			want:   "RBAC kinds would grant the provider's rights",
			never:  &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "all"}},
		},
		{
			name:   "foreign-binding",
			object: `{apiVersion: work.flotilla.io/v1alpha1, kind: ResourceBinding, metadata: {name: steal}, spec: {resource: {apiVersion: v1, kind: Secret, namespace: flotilla-system, name: member1}, clusters: [{name: evil}]}}`,
			want:   "a Manifest may not apply ResourceBinding.work.flotilla.io",
			never:  &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "steal"}},
		},
		{
			name:   "token",
			object: `{apiVersion: v1, kind: Secret, type: kubernetes.io/service-account-token, metadata: {name: token, annotations: {kubernetes.io/service-account.name: default}}}`,
			want:   "spec.forProvider.manifest.type kubernetes.io/service-account-token",
			never:  &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "token"}},
		},
	}
	mrs := make([]*v1alpha1.Manifest, len(tests))
	for i, tc := range tests {
		mrs[i] = tenantManifest(t, tc.name, tc.object)
		testkit.MustCreate(t, e.mgmt, mrs[i])
	}
	for i, tc := range tests {
		syncFails(t, e.mgmt, mrs[i], tc.want)
		if tc.never != nil {
			if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(tc.never), tc.never); !apierrors.IsNotFound(err) {
				t.Errorf("%s: %T %s written to the host: %v", tc.name, tc.never, tc.never.GetName(), err)
			}
		}
	}

	t.Log("deleting the refused manifests touches nothing in the host")
	for _, mg := range mrs {
		if err := e.mgmt.Delete(ctx, mg); err != nil {
			t.Fatal(err)
		}
	}
	for _, mg := range mrs {
		gone(t, e.mgmt, mg)
	}
	var after corev1.Namespace
	if err := e.mgmt.Get(ctx, client.ObjectKey{Name: "default"}, &after); err != nil {
		t.Fatalf("namespace default: %v", err)
	}
	if after.DeletionTimestamp != nil || after.ResourceVersion != defaultNS.ResourceVersion || after.Labels["owned"] != "" {
		t.Errorf("namespace default touched: resourceVersion %s (was %s), deleting %v, labels %v", after.ResourceVersion, defaultNS.ResourceVersion, after.DeletionTimestamp, after.Labels)
	}
}

func testAdoption(t *testing.T, e env) {
	ctx := t.Context()
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "existing"}, Data: map[string]string{"who": "admin"}}
	testkit.MustCreate(t, e.mgmt, existing)
	mg := tenantManifest(t, "adopter", `{apiVersion: v1, kind: ConfigMap, metadata: {name: existing}, data: {who: manifest}}`)
	testkit.MustCreate(t, e.mgmt, mg)
	syncFails(t, e.mgmt, mg, "ConfigMap team-a/existing already exists in the host and this Manifest team-a/adopter does not own it: set spec.forProvider.adopt: true")
	var cm corev1.ConfigMap
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(existing), &cm); err != nil || cm.ResourceVersion != existing.ResourceVersion || cm.Data["who"] != "admin" {
		t.Fatalf("the unowned ConfigMap changed without adopt: resourceVersion %s (was %s), data %v, %v", cm.ResourceVersion, existing.ResourceVersion, cm.Data, err)
	}

	t.Log("with spec.forProvider.adopt the manifest takes the ConfigMap over")
	testkit.MustUpdate(t, e.mgmt, client.ObjectKeyFromObject(mg), mg, func() {
		mg.Spec.ForProvider.Adopt = true
	})
	poll(t, "ConfigMap adopted", func() (bool, string) {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(existing), &cm); err != nil {
			return false, err.Error()
		}
		return cm.Data["who"] == "manifest" && cm.Annotations[crossplane.AnnotationOwner] == "Manifest team-a/adopter" &&
			cm.Annotations[crossplane.AnnotationOwnerUID] == string(mg.UID), fmt.Sprintf("data %v, annotations %v", cm.Data, cm.Annotations)
	})
	if err := e.mgmt.Delete(ctx, mg); err != nil {
		t.Fatal(err)
	}
	gone(t, e.mgmt, mg)
	gone(t, e.mgmt, &cm) // adopted, so owned: deleted with its manifest
}

func testDeleteNotOwned(t *testing.T, e env) {
	ctx := t.Context()
	mg := tenantManifest(t, "maker", `{apiVersion: v1, kind: ConfigMap, metadata: {name: made}, data: {k: v}}`)
	testkit.MustCreate(t, e.mgmt, mg)
	var cm corev1.ConfigMap
	poll(t, "ConfigMap made and owned", func() (bool, string) {
		err := e.mgmt.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "made"}, &cm)
		return err == nil && cm.Annotations[crossplane.AnnotationOwnerUID] != "", fmt.Sprintf("%v %v", cm.Annotations, err)
	})
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(mg), mg); err != nil {
		t.Fatal(err)
	}

	t.Log("Delete itself leaves an object whose owner UID is not the manifest's")
	namesake := mg.DeepCopy()
	namesake.UID = "not-the-owner"
	if err := crossplane.ManifestDelete(ctx, e.mgmt, namesake); err != nil {
		t.Fatal(err)
	}
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(&cm), &cm); err != nil || cm.DeletionTimestamp != nil {
		t.Fatalf("Delete removed an object it does not own: %v", err)
	}

	t.Log("an administrator takes the ConfigMap over; deleting the manifest leaves it")
	delete(cm.Annotations, crossplane.AnnotationOwner)
	delete(cm.Annotations, crossplane.AnnotationOwnerUID)
	cm.Data["k"] = "admin"
	if err := e.mgmt.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	syncFails(t, e.mgmt, mg, "does not own it")
	if err := e.mgmt.Delete(ctx, mg); err != nil {
		t.Fatal(err)
	}
	// The manifest created its template moments ago, so crossplane-runtime
	// trusts "does not exist" only after its 30 s creation grace period,
	// then retries with backoff.
	goneWithin(t, e.mgmt, mg, 2*time.Minute)
	var after corev1.ConfigMap
	if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(&cm), &after); err != nil || after.ResourceVersion != cm.ResourceVersion || after.Data["k"] != "admin" {
		t.Errorf("the administrator's ConfigMap changed when the manifest went: %v %v", after.Data, err)
	}
}

func testClusterNeverAdopts(t *testing.T, e env, admin adminObjects) {
	ctx := t.Context()
	testkit.MustCreate(t, e.mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "evil-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": inlineKubeconfig(t, "https://evil.example.com")},
	})
	newCluster := func(name, external string) *v1alpha1.Cluster {
		cl := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: name, Annotations: map[string]string{"crossplane.io/external-name": external}}}
		cl.Spec.ForProvider = v1alpha1.ClusterParameters{
			APIEndpoint: "https://evil.example.com", Region: "elsewhere",
			CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: "evil-kubeconfig"},
		}
		testkit.MustCreate(t, e.mgmt, cl)
		return cl
	}
	thief := newCluster("thief", admin.cluster.Name)

	t.Log("only a credentials Secret exists: it is not adopted, and no host Cluster is made around it")
	spare := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: crossplane.CredentialsNamespace(), Name: "spare"},
		Data:       map[string][]byte{clusterv1.SecretKeyKubeconfig: []byte("a spare kubeconfig")},
	}
	testkit.MustCreate(t, e.mgmt, spare)
	squatter := newCluster("squatter", "spare")

	const refusal = "a Cluster managed resource never adopts host objects it did not create"
	syncFails(t, e.mgmt, thief, "Cluster member1 already exists in the host and this Cluster team-a/thief does not own it: "+refusal)
	syncFails(t, e.mgmt, squatter, "credentials secret flotilla-system/spare already exists in the host and this Cluster team-a/squatter does not own it: "+refusal)
	admin.untouched(t, e.mgmt)
	adminObjects{secret: spare}.secretUntouched(t, e.mgmt)
	if err := e.mgmt.Get(ctx, client.ObjectKey{Name: "spare"}, &clusterv1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("a host Cluster was made around the administrator's secret: %v", err)
	}

	t.Log("deleting the refused Clusters leaves the administrator's objects")
	for _, cl := range []*v1alpha1.Cluster{thief, squatter} {
		if err := e.mgmt.Delete(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	gone(t, e.mgmt, thief)
	gone(t, e.mgmt, squatter)
	admin.untouched(t, e.mgmt)
	adminObjects{secret: spare}.secretUntouched(t, e.mgmt)
}

// inlineKubeconfig is a valid kubeconfig with inline credentials only, as a
// tenant may write one, for server.
func inlineKubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "tenant-token"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
