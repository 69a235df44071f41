package helm

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const (
	releaseName = "flotilla"
	namespace   = "flotilla-system"
)

// moduleRoot is the repository root, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// helmTemplate runs `helm template` on the chart deploy/helm/chart,
// released under the chart's own name, in namespace with extra arguments,
// and returns its output and error.
func helmTemplate(t *testing.T, chart, ns string, args ...string) (string, error) {
	t.Helper()
	root := moduleRoot(t)
	cmd := exec.Command(testkit.Helm(t, root), append([]string{"template", chart, filepath.Join(root, "deploy", "helm", chart), "--namespace", ns}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// No user configuration or repositories: the chart renders on its own.
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(err.Error() + ": " + stderr.String())
	}
	return stdout.String(), nil
}

// render renders the control plane's chart into flotilla-system, with
// the values every install must give (hostValues with a new CA), and
// decodes its objects.
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return renderChart(t, releaseName, append(hostValues(t, testkit.NewClientCA(t, "webhook-client-ca")), args...)...)
}

// apiserverCIDR stands for the control-plane nodes' subnet, where the
// kube-apiserver's calls to the webhook come from.
const apiserverCIDR = "192.0.2.0/24"

// hostValues are the values the chart requires with its webhook on: the
// CA of the host apiserver's webhook client certificate, and where the
// apiserver's traffic comes from.
func hostValues(t *testing.T, ca *testkit.ClientCA) []string {
	t.Helper()
	return []string{"--set-file", "webhook.clientAuth.caBundle=" + ca.File(t),
		"--set", "webhook.networkPolicy.apiserver.cidrs={" + apiserverCIDR + "}"}
}

// renderChart renders deploy/helm/chart into flotilla-system and decodes
// its objects.
func renderChart(t *testing.T, chart string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helmTemplate(t, chart, namespace, args...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decode the rendered chart: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// pick returns the rendered objects of kind, in order.
func pick(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// one returns the only rendered object of kind.
func one(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	found := pick(objs, kind)
	if len(found) != 1 {
		t.Fatalf("the chart renders %d objects of kind %s, want 1", len(found), kind)
	}
	return found[0]
}

// named returns the rendered object of kind in namespace ns named name.
func named(t *testing.T, objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range pick(objs, kind) {
		if o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the chart renders no %s %s/%s", kind, ns, name)
	return nil
}

// controlPlaneRole returns the control plane's ClusterRole, the one that is
// not the tenants' (tenantrole.yaml).
func controlPlaneRole(t *testing.T, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range pick(objs, "ClusterRole") {
		if n := o.GetName(); !strings.HasSuffix(n, "-tenant") && !strings.Contains(n, "-dashboard-") {
			out = append(out, o)
		}
	}
	if len(out) != 1 {
		t.Fatalf("the chart renders %d control plane ClusterRoles, want 1", len(out))
	}
	return out[0]
}

// into converts a rendered object into a typed one.
func into[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// containerArgs returns the rendered Deployment's container arguments.
func containerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(one(t, objs, "Deployment").Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(containers))
	}
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return args
}

// flagValue returns the value of --name=value in args.
func flagValue(args []string, name string) (string, bool) {
	i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--"+name+"=") })
	if i < 0 {
		return "", false
	}
	return strings.TrimPrefix(args[i], "--"+name+"="), true
}

// servingCert returns the decoded tls.crt, tls.key and ca.crt of the
// chart's serving certificate Secret.
func servingCert(t *testing.T, objs []*unstructured.Unstructured) (crt, key, ca []byte) {
	t.Helper()
	s := into[corev1.Secret](t, one(t, objs, "Secret"))
	return s.Data["tls.crt"], s.Data["tls.key"], s.Data["ca.crt"]
}

// verifyFor checks that crt chains to ca and names host.
func verifyFor(crt, ca []byte, host string) error {
	block, _ := pem.Decode(crt)
	if block == nil {
		return errors.New("tls.crt holds no PEM block")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return errors.New("ca.crt holds no certificate")
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
	return err
}

// acceptedByServer has a real apiserver accept every object of objs with a
// server-side dry-run apply, into the namespace flotilla-system it
// creates (and the chart's own Namespaces, created for real first: a
// dry-run creates nothing its namespaced objects could go into), and
// returns the objects' kinds, sorted and each once.
func acceptedByServer(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	server := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	c, err := client.New(server.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range pick(objs, "Namespace") {
		if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
			t.Errorf("the apiserver refuses Namespace %s: %v", o.GetName(), err)
		}
	}
	var kinds []string
	for _, o := range objs {
		if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o), client.DryRunAll, client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
			t.Errorf("the apiserver refuses %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		kinds = append(kinds, o.GetKind())
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// checkHardened checks a chart's pod: non-root with seccomp RuntimeDefault,
// one container with a read-only root, no privilege escalation or
// privilege, ALL capabilities dropped, and cpu and memory requests.
func checkHardened(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	if psc := pod.SecurityContext; psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext = %+v, want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("the pod has %d containers, want 1", len(pod.Containers))
	}
	ctr := pod.Containers[0]
	sc := ctr.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("the container has no securityContext")
	case !ptr.Deref(sc.ReadOnlyRootFilesystem, false), ptr.Deref(sc.AllowPrivilegeEscalation, true), ptr.Deref(sc.Privileged, true),
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("container securityContext = %+v, want a read-only root, no privilege escalation, ALL capabilities dropped", sc)
	}
	if ctr.Resources.Requests.Cpu().IsZero() || ctr.Resources.Requests.Memory().IsZero() {
		t.Errorf("requests = %v, want cpu and memory", ctr.Resources.Requests)
	}
}
