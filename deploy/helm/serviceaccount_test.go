package helm

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestChartServiceAccountRunsControlPlane installs the chart's CRDs, RBAC,
// ServiceAccount and certificate into a real host, and runs the built
// binary with the chart's arguments and a kubeconfig holding only a token
// of that ServiceAccount. It must elect itself, propagate a Deployment to a
// real member, serve metrics (which asks the host to review the caller's
// token) and its webhook (which reads credentials Secrets; called here
// directly, as the host cannot reach a Service, so the chart's
// ValidatingWebhookConfiguration is not installed) without one request the
// host forbids; and the same token is refused what the role leaves out:
// Secrets outside flotilla-system, writing templates, creating Pods, and
// binding itself to more rights.
func TestChartServiceAccountRunsControlPlane(t *testing.T) {
	clientCA := testkit.NewClientCA(t, "webhook-client-ca")
	objs := renderChart(t, releaseName, append(hostValues(t, clientCA), "--include-crds")...)
	bin := testkit.SharedProvider(t, moduleRoot(t))
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, member := fleet.Clusters[0], fleet.Clusters[1]
	admin := controllertest.Client(t, host.RESTConfig(), controllertest.Scheme(t))
	install(t, admin, objs)

	token := serviceAccountToken(t, host.Clientset(t), releaseName)
	saConfig := &rest.Config{Host: host.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: host.CAData}}
	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, dir, saConfig)
	crt, key, ca := servingCert(t, objs)
	certDir := filepath.Join(dir, "serving-cert")
	for name, data := range map[string][]byte{"tls.crt": crt, "tls.key": key, "ca.crt": ca} {
		writeFile(t, filepath.Join(certDir, name), data)
	}
	// The chart's ConfigMap of the apiserver's webhook client CA, as mounted.
	clientCAFile := filepath.Join(dir, "webhook-client-ca", "ca.crt")
	writeFile(t, clientCAFile, []byte(into[corev1.ConfigMap](t, one(t, objs, "ConfigMap")).Data["ca.crt"]))

	waitGranted(t, saConfig)

	metricsAddr, probeAddr, webhookAddr := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	var args []string
	for _, a := range containerArgs(t, objs) {
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metricsAddr
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probeAddr
		case strings.HasPrefix(a, "--metrics-cert-dir="):
			a = "--metrics-cert-dir=" + certDir
		case strings.HasPrefix(a, "--webhook-cert-dir="):
			a = "--webhook-cert-dir=" + certDir
		case strings.HasPrefix(a, "--webhook-bind-address="):
			a = "--webhook-bind-address=" + webhookAddr
		case strings.HasPrefix(a, "--webhook-client-ca="):
			a = "--webhook-client-ca=" + clientCAFile
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+kubeconfig, "--cluster-probe-interval=300ms")
	proc := start(t, bin, args)

	controllertest.RegisterMember(t, admin, member)
	propagateWeb(t, admin, member.Name, true)

	memberClient := controllertest.Client(t, member.RESTConfig(), controllertest.Scheme(t))
	testkit.Eventually(t, 2*time.Minute, "the Deployment and its ConfigMap on the member", func() (bool, string) {
		proc.checkRunning(t)
		var got appsv1.Deployment
		var cm corev1.ConfigMap
		err := memberClient.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web"}, &got)
		if err == nil {
			err = memberClient.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web-config"}, &cm)
		}
		return err == nil, fmt.Sprint(err)
	})
	// propagateDeps leaves the Secret: the chart reads Secrets in
	// flotilla-system only. The distributor attaches a workload's
	// dependencies in one pass, so the ConfigMap's binding being there
	// means the Secret's would be too.
	var secret corev1.Secret
	if err := memberClient.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "web-secret"}, &secret); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret the Deployment refers to reached the member (%v); the chart does not propagate Secrets", err)
	}
	for name, want := range map[string]bool{"web-config-configmap": true, "web-secret-secret": false} {
		var rb workv1.ResourceBinding
		err := admin.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: name}, &rb)
		if got := err == nil; got != want {
			t.Errorf("attached binding shop/%s exists: %v (%v), want %v", name, got, err, want)
		}
	}
	if !strings.Contains(strings.ToLower(proc.log()), "successfully acquired lease") {
		t.Error("the control plane never logged that it holds the lease")
	}

	// The metrics endpoint reviews the caller's token with the host as the
	// ServiceAccount (TokenReview, SubjectAccessReview): an admin gets them.
	testkit.Eventually(t, time.Minute, "metrics for an authorized caller", func() (bool, string) {
		code, body, err := scrape(t, metricsAddr, ca, host.Token)
		return err == nil && code == http.StatusOK && strings.Contains(body, "controller_runtime_"), fmt.Sprintf("status %d, error %v", code, err)
	})

	// The webhook reads a Cluster's credentials Secret with the
	// ServiceAccount's rights: a good one is admitted, a broken one refused.
	webhookAdmits(t, admin, webhookAddr, ca, clientCA.Client(t, "kube-apiserver"), member.Name)

	if log := strings.ToLower(proc.log()); strings.Contains(log, "forbidden") {
		t.Errorf("the host forbade the control plane something its role should grant:\n%s", proc.log())
	}

	refusals(t, saConfig, member.Name)
}

// refusals checks that the ServiceAccount's token is refused what the
// chart's role leaves out, and still reads the credentials it needs.
func refusals(t *testing.T, cfg *rest.Config, memberName string) {
	t.Helper()
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := sa.CoreV1().Secrets(namespace).Get(ctx, memberName, metav1.GetOptions{}); err != nil {
		t.Errorf("the ServiceAccount cannot read the member's credentials in %s: %v", namespace, err)
	}
	for what, op := range map[string]func() error{
		"list Secrets in another namespace": func() error {
			_, err := sa.CoreV1().Secrets("shop").List(ctx, metav1.ListOptions{})
			return err
		},
		"read a Secret in kube-system": func() error {
			_, err := sa.CoreV1().Secrets("kube-system").Get(ctx, "anything", metav1.GetOptions{})
			return err
		},
		"change a template": func() error {
			_, err := sa.AppsV1().Deployments("shop").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{})
			return err
		},
		"bind itself to cluster-admin": func() error {
			_, err := sa.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "flotilla-escalates"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: releaseName}},
			}, metav1.CreateOptions{})
			return err
		},
		"create a Pod": func() error {
			_, err := sa.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := op(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
}

// waitGranted waits until the host's authorizer has the chart's bindings,
// which it learns from a watch: a cluster-wide and a flotilla-system right
// of the ServiceAccount answer something other than Forbidden.
func waitGranted(t *testing.T, cfg *rest.Config) {
	t.Helper()
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the chart's RBAC in force", func() (bool, string) {
		_, errNS := sa.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{})
		_, errSecret := sa.CoreV1().Secrets(namespace).Get(t.Context(), "none", metav1.GetOptions{})
		return errNS == nil && apierrors.IsNotFound(errSecret), fmt.Sprintf("namespace: %v; secret: %v", errNS, errSecret)
	})
}

// install applies a chart's CRDs (waiting until they are established),
// then its Namespaces, RBAC, ServiceAccount and Secrets (the serving certificate, the
// agent's hub kubeconfig), for real; the Deployment, Services and
// PodDisruptionBudget are left out, as the test runs the binary itself.
func install(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	testkit.MustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	if err := crd.Apply(t.Context(), c, pick(objs, "CustomResourceDefinition"), "helm", time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Secret"} {
		for _, o := range pick(objs, kind) {
			if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("helm"), client.ForceOwnership); err != nil {
				t.Fatalf("apply %s %s: %v", kind, o.GetName(), err)
			}
		}
	}
}

// serviceAccountToken returns a token of a chart's ServiceAccount name in
// flotilla-system from the TokenRequest API, as the kubelet mounts one
// into its pods.
func serviceAccountToken(t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	expiry := int64(3600)
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for the ServiceAccount %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// writeKubeconfig writes a kubeconfig of cfg's server, CA and token only.
func writeKubeconfig(t *testing.T, dir string, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["host"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["flotilla"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["flotilla"] = &clientcmdapi.Context{Cluster: "host", AuthInfo: "flotilla"}
	kc.CurrentContext = "flotilla"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// scrape GETs /metrics over HTTPS, trusting ca for the metrics Service's
// name, with token.
func scrape(t *testing.T, addr string, ca []byte, token string) (int, string, error) {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: "flotilla-metrics.flotilla-system.svc", MinVersion: tls.VersionTLS12,
	}}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// process is the running binary (control plane or agent), its output kept.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    strings.Builder
	exited chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// checkRunning fails the test at once when the process has exited.
func (p *process) checkRunning(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("the process exited:\n%s", p.log())
	default:
	}
}

// start runs bin with args; it is stopped (SIGTERM by PID, then SIGKILL)
// when the test ends, and its output is logged if the test failed.
func start(t *testing.T, bin string, args []string) *process {
	t.Helper()
	p := &process{exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("process log:\n%s", p.log())
		}
	})
	return p
}

// propagateWeb creates in the hub the namespace shop, the Deployment
// shop/web and a PropagationPolicy placing it on member. With deps, the
// Deployment reads the ConfigMap shop/web-config and the Secret
// shop/web-secret, created too, and the policy has propagateDeps.
func propagateWeb(t *testing.T, hub client.Client, member string, deps bool) {
	t.Helper()
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	web := &appsv1.Deployment{}
	testkit.MustYAML(t, web, `
metadata: {namespace: shop, name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`)
	if deps {
		testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}, Data: map[string]string{"a": "b"}})
		testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-secret"}, StringData: map[string]string{"a": "b"}})
		web.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-secret"}}},
		}
	}
	testkit.MustCreate(t, hub, web)
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, member)
	pp.Spec.PropagateDeps = deps
	testkit.MustCreate(t, hub, pp)
}
