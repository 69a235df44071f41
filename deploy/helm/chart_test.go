package helm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestChartAcceptedByHost renders the chart as `helm install` would (CRDs
// included) and has a real host apiserver accept every object with a
// server-side dry-run apply: schemas, RBAC rules, the webhook
// configuration and the Deployment are all validated by the server.
func TestChartAcceptedByHost(t *testing.T) {
	// The optional parts are submitted too, rendered as an operator turns
	// them on: the dashboard and the cluster proxy (its APIService and the
	// RoleBinding in kube-system).
	objs := append(render(t, "--include-crds"), render(t, "--set", "dashboard.enabled=true", "--set", "clusterProxy.enabled=true")...)
	kinds := acceptedByServer(t, objs)
	want := []string{"APIService", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "CustomResourceDefinition", "Deployment", "Namespace", "NetworkPolicy", "PodDisruptionBudget",
		"Role", "RoleBinding", "Secret", "Service", "ServiceAccount", "ValidatingWebhookConfiguration"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("rendered kinds (-want +got):\n%s", diff)
	}
}

// TestChartDeployment checks what the Deployment promises: two replicas
// with leader election, the hardened security context, requests, and the
// flags that tie it to the chart's webhook, certificate and RBAC.
func TestChartDeployment(t *testing.T) {
	objs := render(t)
	d := into[appsv1.Deployment](t, one(t, objs, "Deployment"))
	if got := ptr.Deref(d.Spec.Replicas, 0); got != 2 {
		t.Errorf("replicas = %d, want 2", got)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != releaseName {
		t.Errorf("serviceAccountName = %q, want %q", pod.ServiceAccountName, releaseName)
	}
	checkHardened(t, pod)
	args := pod.Containers[0].Args
	if len(args) == 0 || args[0] != "controlplane" {
		t.Fatalf("args = %v, want the controlplane command first", args)
	}
	for flag, want := range map[string]string{
		"leader-elect":              "true",
		"leader-election-namespace": namespace,
		"webhook-install":           "false",
		"webhook-url":               "https://flotilla-webhook.flotilla-system.svc:443",
		"webhook-cert-dir":          "/etc/flotilla/serving-cert",
		"metrics-cert-dir":          "/etc/flotilla/serving-cert",
		"propagate-secrets":         "false",
		"multi-cluster-services":    "true",
		"descheduler":               "false",
		"descheduling-interval":     "2m",
		"unschedulable-threshold":   "5m",
		"webhook-client-ca":         "/etc/flotilla/webhook-client-ca/ca.crt",
	} {
		if got, _ := flagValue(args, flag); got != want {
			t.Errorf("--%s = %q, want %q", flag, got, want)
		}
	}
	// The chart's default kinds are flotilla's own default, less Secret.
	list, _ := flagValue(args, "template-kinds")
	kinds, err := shared.ParseTemplateKinds(list)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(shared.DefaultTemplateKinds), func(k schema.GroupVersionKind) bool { return k.Kind == "Secret" })
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("--template-kinds (-shared.DefaultTemplateKinds less Secret +chart):\n%s", diff)
	}
	pdb := into[policyv1.PodDisruptionBudget](t, one(t, objs, "PodDisruptionBudget"))
	if got := pdb.Spec.MaxUnavailable; got == nil || got.IntValue() != 1 || !equality.Semantic.DeepEqual(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Errorf("PodDisruptionBudget maxUnavailable %v selector %v, want 1 of the Deployment's pods", got, pdb.Spec.Selector)
	}
}

// TestChartRBACNamesEverything: no rule of the chart uses a wildcard, the
// cluster-wide rules never reach Secrets (they are granted in
// flotilla-system only), and each template kind is readable, with its
// status writable where flotilla writes it back.
func TestChartRBACNamesEverything(t *testing.T) {
	objs := render(t)
	cr := into[rbacv1.ClusterRole](t, controlPlaneRole(t, objs))
	role := into[rbacv1.Role](t, named(t, objs, "Role", namespace, releaseName))
	for _, r := range slices.Concat(cr.Rules, role.Rules) {
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames} {
			if slices.Contains(field, "*") {
				t.Errorf("rule %+v has a wildcard", r)
			}
		}
	}
	grants := func(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
		return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) && len(r.ResourceNames) == 0
		})
	}
	if grants(cr.Rules, "", "secrets", "get") || grants(cr.Rules, "", "secrets", "list") {
		t.Error("the ClusterRole grants Secrets in every namespace")
	}
	if !grants(role.Rules, "", "secrets", "list") {
		t.Error("the Role does not grant the credentials Secrets in flotilla-system")
	}
	if !grants(role.Rules, "", "secrets", "create") {
		t.Error("the Role does not let the control plane create its Work signing key in flotilla-system")
	}
	for _, k := range []struct{ group, resource string }{{"apps", "deployments"}, {"", "services"}, {"autoscaling", "horizontalpodautoscalers"}} {
		if !grants(cr.Rules, k.group, k.resource, "watch") || !grants(cr.Rules, k.group, k.resource+"/status", "patch") {
			t.Errorf("template kind %s.%s: not readable, or its status not writable", k.resource, k.group)
		}
	}
	// Flotilla's own CRDs may be patched (at start); no other.
	var crdNames []string
	for _, r := range cr.Rules {
		if slices.Contains(r.APIGroups, "apiextensions.k8s.io") && slices.Contains(r.Verbs, "patch") {
			crdNames = r.ResourceNames
		}
	}
	defs, err := os.ReadDir(filepath.Join("flotilla", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	// With multi-cluster services on (the default), MultiClusterService's
	// too, which the control plane applies at start.
	if len(crdNames) != len(defs)+1 || !slices.Contains(crdNames, "multiclusterservices.networking.flotilla.io") {
		t.Errorf("CRD patch limited to %v, want the %d CRDs of crds/ and MultiClusterService's", crdNames, len(defs))
	}
	// EndpointSlices are granted for multi-cluster services only.
	if !grants(cr.Rules, "discovery.k8s.io", "endpointslices", "create") {
		t.Error("the ClusterRole does not grant EndpointSlices, which multi-cluster services collect")
	}
	if !grants(cr.Rules, "networking.flotilla.io", "multiclusterservices", "watch") || !grants(cr.Rules, "networking.flotilla.io", "multiclusterservices/status", "patch") ||
		grants(cr.Rules, "networking.flotilla.io", "multiclusterservices", "update") {
		t.Error("the ClusterRole must read MultiClusterServices and patch their status, and never write them")
	}
	if !grants(cr.Rules, "multicluster.x-k8s.io", "serviceimports/status", "patch") {
		t.Error("the ClusterRole does not grant the ServiceImports' status, where the exporting clusters go")
	}
	if !grants(cr.Rules, "multicluster.x-k8s.io", "serviceexports/status", "patch") {
		t.Error("the ClusterRole does not grant the ServiceExports' status, where their conditions go")
	}
	noMCS := render(t, "--set", "multiClusterServices=false")
	noMCSRules := into[rbacv1.ClusterRole](t, controlPlaneRole(t, noMCS)).Rules
	if grants(noMCSRules, "discovery.k8s.io", "endpointslices", "list") || grants(noMCSRules, "multicluster.x-k8s.io", "serviceexports/status", "patch") {
		t.Error("multiClusterServices=false still grants EndpointSlices or the ServiceExports' status")
	}
	if got, _ := flagValue(into[appsv1.Deployment](t, one(t, noMCS, "Deployment")).Spec.Template.Spec.Containers[0].Args, "multi-cluster-services"); got != "false" {
		t.Errorf("multiClusterServices=false: --multi-cluster-services = %q", got)
	}
	// Listing Secret needs propagateSecrets, which grants them cluster-wide.
	withSecret := render(t, "--set", "propagateSecrets=true", "--set-json", `templateKinds=[{"version":"v1","kind":"Secret","resource":"secrets"}]`)
	if !grants(into[rbacv1.ClusterRole](t, controlPlaneRole(t, withSecret)).Rules, "", "secrets", "list") {
		t.Error("propagateSecrets=true does not grant Secrets")
	}
}

// TestChartCRDsAreTheGenerated: crds/ holds exactly the CRDs controller-gen
// writes to controlplane/apis/crd, and mcs-crds/ the MCS API's CRDs of
// controlplane/multicluster/crds with MultiClusterService's of
// controlplane/apis/crd/networking (make generate copies them); the chart
// installs those with multiClusterServices only, kept on uninstall.
func TestChartCRDsAreTheGenerated(t *testing.T) {
	sameFiles(t, filepath.Join(moduleRoot(t), "controlplane", "apis", "crd"), filepath.Join("flotilla", "crds"))
	sameFiles(t, filepath.Join(moduleRoot(t), "controlplane", "multicluster", "crds"), filepath.Join("flotilla", "mcs-crds"),
		filepath.Join(moduleRoot(t), "controlplane", "apis", "crd", "networking"))
	mcsCRDs := func(objs []*unstructured.Unstructured) map[string]string {
		out := map[string]string{}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" && (strings.HasSuffix(o.GetName(), ".multicluster.x-k8s.io") || strings.HasSuffix(o.GetName(), ".networking.flotilla.io")) {
				out[o.GetName()] = o.GetAnnotations()["helm.sh/resource-policy"]
			}
		}
		return out
	}
	want := map[string]string{"serviceexports.multicluster.x-k8s.io": "keep", "serviceimports.multicluster.x-k8s.io": "keep",
		"multiclusterservices.networking.flotilla.io": "keep"}
	if diff := cmp.Diff(want, mcsCRDs(render(t))); diff != "" {
		t.Errorf("MCS CRDs rendered by default (name: resource policy; -want +got):\n%s", diff)
	}
	if got := mcsCRDs(render(t, "--set", "multiClusterServices=false")); len(got) > 0 {
		t.Errorf("multiClusterServices=false still installs %v", got)
	}
}

// sameFiles fails unless the chart directory holds exactly the YAML files
// of src (and of more), byte for byte.
func sameFiles(t *testing.T, src, dir string, more ...string) {
	t.Helper()
	generated, _ := filepath.Glob(filepath.Join(src, "*.yaml"))
	for _, m := range more {
		extra, _ := filepath.Glob(filepath.Join(m, "*.yaml"))
		generated = append(generated, extra...)
	}
	slices.SortFunc(generated, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	chart, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	base := func(paths []string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = filepath.Base(p)
		}
		return out
	}
	if diff := cmp.Diff(base(generated), base(chart)); diff != "" || len(chart) == 0 {
		t.Fatalf("%s files differ from %s (-generated +chart), run make generate:\n%s", dir, src, diff)
	}
	for _, p := range generated {
		a, b := readFile(t, p), readFile(t, filepath.Join(dir, filepath.Base(p)))
		if a != b {
			t.Errorf("%s/%s differs from %s: run make generate", dir, filepath.Base(p), filepath.Dir(p))
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChartWebhook: the chart's ValidatingWebhookConfiguration sends the
// same kinds to the same paths as the one the control plane installs
// itself (webhook.Configuration), through the Service, trusting the CA of
// the generated certificate, which names the Service; in either family of
// API groups (values: apiGroups, the control plane's --api-groups).
func TestChartWebhook(t *testing.T) {
	for _, groups := range []apis.Groups{apis.FlotillaGroups, apis.KarmadaGroups} {
		t.Run(string(groups), func(t *testing.T) {
			// As the controlplane command does at start; this test runs alone.
			apis.Use(groups)
			t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })
			testChartWebhook(t, render(t, "--set", "apiGroups="+string(groups)))
		})
	}
}

func testChartWebhook(t *testing.T, objs []*unstructured.Unstructured) {
	vwc := into[admissionregistrationv1.ValidatingWebhookConfiguration](t, one(t, objs, "ValidatingWebhookConfiguration"))
	crt, _, ca := servingCert(t, objs)
	for _, host := range []string{"flotilla-webhook.flotilla-system.svc", "flotilla-metrics.flotilla-system.svc"} {
		if err := verifyFor(crt, ca, host); err != nil {
			t.Errorf("the serving certificate does not serve %s: %v", host, err)
		}
	}
	base := "https://webhook.example:9443"
	ref, err := webhook.Configuration(webhook.Config{URL: base, CABundle: []byte("ca")})
	if err != nil {
		t.Fatal(err)
	}
	type hook struct {
		Name, Path string
		Rules      []admissionregistrationv1.RuleWithOperations
		Failure    admissionregistrationv1.FailurePolicyType
		Match      admissionregistrationv1.MatchPolicyType
		Effects    admissionregistrationv1.SideEffectClass
		Versions   []string
		Timeout    int32
	}
	var want, got []hook
	for _, w := range ref.Webhooks {
		h := hook{Name: *w.Name, Path: strings.TrimPrefix(*w.ClientConfig.URL, base), Failure: *w.FailurePolicy, Match: *w.MatchPolicy,
			Effects: *w.SideEffects, Versions: w.AdmissionReviewVersions, Timeout: *w.TimeoutSeconds}
		for _, r := range w.Rules {
			h.Rules = append(h.Rules, admissionregistrationv1.RuleWithOperations{Operations: r.Operations, Rule: admissionregistrationv1.Rule{
				APIGroups: r.APIGroups, APIVersions: r.APIVersions, Resources: r.Resources, Scope: r.Scope}})
		}
		want = append(want, h)
	}
	for _, w := range vwc.Webhooks {
		svc := w.ClientConfig.Service
		if svc == nil || svc.Name != "flotilla-webhook" || svc.Namespace != namespace || ptr.Deref(svc.Port, 0) != 443 {
			t.Errorf("webhook %s: clientConfig %+v, want the Service flotilla-system/flotilla-webhook:443", w.Name, w.ClientConfig)
			continue
		}
		if string(w.ClientConfig.CABundle) != string(ca) {
			t.Errorf("webhook %s: the caBundle is not the certificate's CA", w.Name)
		}
		got = append(got, hook{Name: w.Name, Path: ptr.Deref(svc.Path, ""), Rules: w.Rules, Failure: ptr.Deref(w.FailurePolicy, ""),
			Match: ptr.Deref(w.MatchPolicy, ""), Effects: ptr.Deref(w.SideEffects, ""), Versions: w.AdmissionReviewVersions, Timeout: ptr.Deref(w.TimeoutSeconds, 0)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chart webhooks (-webhook.Configuration +chart):\n%s", diff)
	}
}

// TestChartCertManager: with cert-manager the chart asks it for the
// certificate and has it inject the CA; no key is rendered.
func TestChartCertManager(t *testing.T) {
	objs := render(t, "--set", "webhook.certManager=true")
	if secrets := pick(objs, "Secret"); len(secrets) != 0 {
		t.Errorf("with cert-manager the chart still renders %d Secrets", len(secrets))
	}
	cert := one(t, objs, "Certificate")
	secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	names, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if secretName != "flotilla-serving-cert" || !slices.Contains(names, "flotilla-webhook.flotilla-system.svc") {
		t.Errorf("Certificate secretName %q dnsNames %v, want the mounted Secret and the webhook Service", secretName, names)
	}
	one(t, objs, "Issuer")
	vwc := into[admissionregistrationv1.ValidatingWebhookConfiguration](t, one(t, objs, "ValidatingWebhookConfiguration"))
	if got := vwc.Annotations["cert-manager.io/inject-ca-from"]; got != namespace+"/"+cert.GetName() {
		t.Errorf("inject-ca-from = %q, want %s/%s", got, namespace, cert.GetName())
	}
	for _, w := range vwc.Webhooks {
		if len(w.ClientConfig.CABundle) != 0 {
			t.Errorf("webhook %s carries a caBundle; cert-manager injects it", w.Name)
		}
	}
	// auto uses cert-manager where the cluster serves it.
	if auto := render(t, "--api-versions", "cert-manager.io/v1"); len(pick(auto, "Certificate")) != 1 {
		t.Error("certManager=auto does not use cert-manager where cert-manager.io/v1 is served")
	}
}

// TestChartRefusesBadValues: the chart fails, naming what to change,
// outside flotilla-system, for Secrets without propagateSecrets, and with
// the webhook on but no way to tell the kube-apiserver from other callers.
func TestChartRefusesBadValues(t *testing.T) {
	cidr := []string{"--set", "webhook.networkPolicy.apiserver.cidrs={" + apiserverCIDR + "}"}
	ca := []string{"--set-file", "webhook.clientAuth.caBundle=" + testkit.NewClientCA(t, "webhook-client-ca").File(t)}
	checkRefused(t, releaseName, []refusal{
		{"webhook client CA missing", namespace, cidr, "webhook.clientAuth.enabled needs the CA of the kube-apiserver's webhook client certificate"},
		{"apiserver source missing", namespace, ca, "webhook.networkPolicy.enabled needs where the kube-apiserver's traffic comes from"},
		{"another namespace", "default", append(slices.Clone(ca), cidr...), `install the chart into the namespace flotilla-system (-n flotilla-system), not "default"`},
		{"Secret without propagateSecrets", namespace, append([]string{"--set-json", `templateKinds=[{"version":"v1","kind":"Secret","resource":"secrets"}]`}, append(slices.Clone(ca), cidr...)...),
			"templateKinds lists Secret: set propagateSecrets=true"},
	})
}

// refusal is values a chart must refuse: rendered into ns with args, it
// fails with an error containing want.
type refusal struct {
	name, ns string
	args     []string
	want     string
}

// checkRefused renders chart with each refusal's values and checks that
// it fails with its message.
func checkRefused(t *testing.T, chart string, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, chart, tc.ns, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
