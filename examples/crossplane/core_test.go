package examples

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// e2eWithin bounds each wait of the end-to-end test, from an applied
// object to its effect through several processes on a shared machine.
const e2eWithin = 3 * time.Minute

// TestCrossplaneCore runs the active-active example end to end with
// Crossplane itself. One apiserver is both Crossplane's management cluster
// and the flotilla host; two more are the members east and west. Crossplane
// core (`crossplane core init`, then `core start` with the External package
// runtime), function-patch-and-transform (mTLS with Crossplane's CA),
// flotilla's Crossplane provider and flotilla's control plane run as local
// processes. The Function is installed as a package pulled from a loopback
// registry (an ImageConfig rewrites xpkg.crossplane.io to it, so
// functions.yaml is applied unchanged); the test plays the External
// runtime and writes the running function's address into the
// FunctionRevision. Then the example's XRD, Composition, Clusters and XR
// are applied as they are, and the Deployment reaches both members with
// the replicas divided by weight and each cluster's overrides, and the
// placement comes back to the XR's status.
func TestCrossplaneCore(t *testing.T) {
	const app = "active-active"
	tools := testkit.CrossplaneTools(t, filepath.Join("..", ".."), crossplaneBinary, functionBinary, coreBinary, coreCRDs, functionPackage)
	bin := buildFlotilla(t)
	fleet := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	host, east, west := fleet.Clusters[0], fleet.Clusters[1], fleet.Clusters[2]
	c := newClient(t, host)
	dir := t.TempDir()

	clientCerts, functionCerts := initCore(t, c, tools, dir, host)
	fnAddr := testkit.FreeAddr(t)
	fn := startProcess(t, dir, functionBinary, filepath.Join(tools, functionBinary), nil, "--tls-certs-dir", functionCerts, "--address", fnAddr)
	// The package cache must exist (the chart mounts an emptyDir there):
	// otherwise every pull fails with "io: read/write on closed pipe".
	cache := filepath.Join(dir, "xpkg-cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	corePort := testkit.FreePort(t)
	core := startProcess(t, dir, "crossplane-core", filepath.Join(tools, coreBinary), coreEnv(host), "--debug", "core", "start",
		"--package-runtime=External", "--enable-webhooks=false",
		"--cache-dir", cache, "--tls-client-certs-dir", clientCerts,
		"--metrics-port=0", fmt.Sprintf("--health-probe-port=%d", corePort))
	cpProbe, xpProbe := testkit.FreeAddr(t), testkit.FreeAddr(t)
	cp := startProcess(t, dir, "flotilla-controlplane", bin, nil, "controlplane", "--kubeconfig", host.KubeconfigPath,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address="+cpProbe, "--cluster-probe-interval=1s")
	xp := startProcess(t, dir, "flotilla-crossplane", bin, nil, "crossplane", "--kubeconfig", host.KubeconfigPath, "--install-crds",
		"--metrics-bind-address=0", "--health-probe-bind-address="+xpProbe, "--poll=2s", "--pending-poll=500ms")
	fn.waitListening(t, fnAddr)
	core.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", corePort))
	cp.waitReady(t, "http://"+cpProbe+"/readyz")
	xp.waitReady(t, "http://"+xpProbe+"/readyz")

	// The function, as a package from the loopback registry.
	fns := readDocs(t, filepath.Join(app, "functions.yaml"))
	ref, _, _ := unstructured.NestedString(fns[0].Object, "spec", "package")
	regHost := publishFunction(t, tools, dir, ref)
	mirror := &unstructured.Unstructured{}
	testkit.MustYAML(t, &mirror.Object, `
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata: {name: loopback-mirror}
spec:
  matchImages: [{type: Prefix, prefix: %q}]
  rewriteImage: {prefix: %q}
`, upstreamRegistry+"/", regHost+"/")
	createAll(t, c, "ImageConfig", mirror)
	createAll(t, c, app+"/functions.yaml", fns...)
	serveFunction(t, c, fns[0].GetName(), fnAddr)

	// The provider's credentials for the host and the members, as the README's steps 3 and 4.
	testkit.MustCreate(t, c, kubeconfigSecret(t, xpNamespace, "flotilla-host", host))
	testkit.MustCreate(t, c, kubeconfigSecret(t, "default", "east-kubeconfig", east))
	testkit.MustCreate(t, c, kubeconfigSecret(t, "default", "west-kubeconfig", west))
	createAll(t, c, "setup/providerconfig.yaml", readDocs(t, "setup/providerconfig.yaml")...)
	createAll(t, c, app+"/clusters.yaml", readDocs(t, app+"/clusters.yaml")...)
	for _, f := range []string{"definition.yaml", "composition.yaml", "xr.yaml"} {
		createAll(t, c, app+"/"+f, readDocs(t, filepath.Join(app, f))...)
	}

	xr := readOne(t, filepath.Join(app, "xr.yaml"))
	want := map[string]struct {
		member   client.Client
		replicas int32
		image    string
	}{
		"east": {newClient(t, east), 1, "nginx:1.27"},
		"west": {newClient(t, west), 2, "registry.eu.example.com/nginx:1.27"},
	}
	for cluster, w := range want {
		testkit.Eventually(t, e2eWithin, fmt.Sprintf("Deployment %s on member %s", xr.GetName(), cluster), func() (bool, string) {
			var d appsv1.Deployment
			err := w.member.Get(t.Context(), client.ObjectKey{Namespace: xr.GetNamespace(), Name: xr.GetName()}, &d)
			if err != nil {
				return false, fmt.Sprintf("%v; XR: %s", err, conditions(t, c, xr))
			}
			got := fmt.Sprintf("replicas %d, image %s, label %s", ptrInt(d.Spec.Replicas), d.Spec.Template.Spec.Containers[0].Image, d.Labels[clusterLabel])
			return got == fmt.Sprintf("replicas %d, image %s, label %s", w.replicas, w.image, cluster), got
		})
	}
	testkit.Eventually(t, e2eWithin, "the XR's status.placement", func() (bool, string) {
		got, err := current(t, c, xr)
		if err != nil {
			return false, err.Error()
		}
		placement, _, _ := unstructured.NestedMap(got.Object, "status", "placement")
		return reflect.DeepEqual(placement, map[string]any{"east": int64(1), "west": int64(2)}), fmt.Sprintf("placement %v; %s", placement, conditions(t, c, xr))
	})
}

// buildFlotilla builds the provider binary, which runs both `controlplane`
// and `crossplane`.
func buildFlotilla(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "terraform-provider-flotilla")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// newClient is a client of cluster with the built-in kinds; everything
// else is read and written as unstructured.
func newClient(t *testing.T, cluster *testenv.Cluster) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeconfigSecret holds cluster's kubeconfig under the key kubeconfig.
func kubeconfigSecret(t *testing.T, namespace, name string, cluster *testenv.Cluster) *corev1.Secret {
	t.Helper()
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string][]byte{"kubeconfig": testkit.ReadFile(t, cluster.KubeconfigPath)},
	}
}

// serveFunction does what Crossplane leaves to an External package runtime:
// once the package manager has unpacked the Function into an active
// FunctionRevision, it writes the address where the function runs into
// the revision's status.endpoint, which Crossplane's function runner dials.
func serveFunction(t *testing.T, c client.Client, name, addr string) {
	t.Helper()
	testkit.Eventually(t, e2eWithin, "an active FunctionRevision of "+name+" with status.endpoint "+addr, func() (bool, string) {
		revs := &unstructured.UnstructuredList{}
		revs.SetAPIVersion("pkg.crossplane.io/v1")
		revs.SetKind("FunctionRevisionList")
		if err := c.List(t.Context(), revs, client.MatchingLabels{"pkg.crossplane.io/package": name}); err != nil {
			return false, err.Error()
		}
		for i := range revs.Items {
			rev := &revs.Items[i]
			if state, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); state != "Active" {
				continue
			}
			if ep, _, _ := unstructured.NestedString(rev.Object, "status", "endpoint"); ep == addr {
				return true, ""
			}
			if err := unstructured.SetNestedField(rev.Object, addr, "status", "endpoint"); err != nil {
				t.Fatal(err)
			}
			if err := c.Status().Update(t.Context(), rev); err != nil {
				return false, err.Error()
			}
			return false, "endpoint written"
		}
		return false, fmt.Sprintf("%d revisions, none active; Function: %s", len(revs.Items), conditions(t, c, functionObject(name)))
	})
}

// functionObject is the pkg.crossplane.io/v1 Function name.
func functionObject(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("pkg.crossplane.io/v1")
	u.SetKind("Function")
	u.SetName(name)
	return u
}

// current reads obj's state from c.
func current(t *testing.T, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GroupVersionKind())
	return u, c.Get(t.Context(), client.ObjectKeyFromObject(obj), u)
}

// conditions prints obj's status conditions, for a failure message.
func conditions(t *testing.T, c client.Client, obj *unstructured.Unstructured) string {
	t.Helper()
	u, err := current(t, c, obj)
	if err != nil {
		return err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := ""
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		out += fmt.Sprintf("[%v=%v %v: %v] ", m["type"], m["status"], m["reason"], m["message"])
	}
	return out
}

func ptrInt(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}
