package cli

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	fleetviewctl "github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const proxyService = "flotilla-cluster-proxy"

// TestClusterProxyAndPlugin runs the cluster proxy behind a real host's
// aggregation layer (APIService, front-proxy request headers, aggregator
// routing to endpoints) over two real members, and attacks it: a host user
// allowed clusters/proxy but without rights in the member is Forbidden
// there (a proxy that forwarded with the control plane's own member
// credentials would let them read), one with rights reads and watches,
// one without clusters/proxy is refused by the host, forged request
// headers sent to the proxy directly are refused, a Pull member is refused
// with its reason; then the plugin's get prints both members' objects
// under a CLUSTER column, and with one member frozen names it and prints
// the other.
func TestClusterProxyAndPlugin(t *testing.T) {
	begin := time.Now()
	// The second member (member3) plays kubelet: kwok serves its pods'
	// logs and exec at its node's address, metrics-server its metrics.
	env := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly, Aggregation: true,
		Kubelet: []string{"member3"}, MetricsServer: testkit.MetricsServer(t, filepath.Join("..", ".."))})
	host, members := env.Clusters[0], env.Clusters[1:]
	f := controllertest.Fleet{Host: host, Hub: controllertest.SystemHost(t, host), Clusters: members, Scheme: controllertest.Scheme(t)}
	hostCS := host.Clientset(t)
	ctx := t.Context()

	for _, m := range members {
		cs := m.Clientset(t)
		token := impersonatorToken(t, cs)
		testkit.MustCreate(t, f.Hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: shared.SystemNamespace, Name: m.Name}, Data: controllertest.TokenData(m)})
		testkit.MustCreate(t, f.Hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: shared.SystemNamespace, Name: m.Name + "-impersonator"},
			Data: map[string][]byte{clusterv1.SecretKeyToken: []byte(token)}})
		cl := controllertest.ClusterObject(m.Name, m.Host, shared.SystemNamespace)
		cl.Spec.ImpersonatorSecretRef = &api.LocalSecretReference{Namespace: shared.SystemNamespace, Name: m.Name + "-impersonator"}
		testkit.MustCreate(t, f.Hub, cl)
		// alice may read pods, deployments, configmaps and events, logs
		// and exec in default; bob and carol have nothing in any member.
		mustCreate(t, func() error {
			_, err := cs.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
				Rules: memberReaderRules}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.AppsV1().Deployments("default").Create(ctx, proxiedDeployment(), metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
			return err
		})
		// In the kubelet member the pod runs on kwok's node; in the other
		// it has no node.
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}
		if m == members[1] {
			spec.NodeName = m.NodeName(1)
		}
		mustCreate(t, func() error {
			_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + m.Name}, Spec: spec}, metav1.CreateOptions{})
			return err
		})
		// alice may read the metrics API (pods and nodes), everywhere.
		mustCreate(t, func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads-metrics"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{})
			return err
		})
	}
	// alice and bob may use the proxy of every Cluster and list Clusters;
	// carol may not.
	grantFleetViewers(t, hostCS,
		rbacv1.PolicyRule{APIGroups: []string{fleetview.Group}, Resources: []string{"clusters/proxy"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list"}})
	certPEM, serving := proxyServing(t)
	ln := registerProxy(t, host, certPEM)
	f.StartControlPlane(t, func(o *shared.Options) {
		o.ClusterProxy = fleetview.Options{Listener: ln.listener, Certificate: serving, RequestTimeout: 3 * time.Second}
	})

	n1, n2 := members[0].Name, members[1].Name
	member1 := members[0].Clientset(t)
	testkit.Eventually(t, time.Minute, "the impersonator's ClusterRole in the first member names alice and bob", func() (bool, string) {
		r, err := member1.RbacV1().ClusterRoles().Get(ctx, fleetviewctl.ImpersonatorRoleName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, rule := range r.Rules {
			if slices.Contains(rule.Resources, "users") && slices.Contains(rule.ResourceNames, "alice") && slices.Contains(rule.ResourceNames, "bob") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", r.Rules)
	})

	pods := proxyPath(members[0].Name, "/api/v1/namespaces/default/pods")
	testkit.Eventually(t, time.Minute, "kubectl get --raw through the APIService as alice", func() (bool, string) {
		out, err := kubectl(host, "alice", "get", "--raw", pods)
		return err == nil && strings.Contains(out, `"web-`+n1+`"`), out
	})
	// The attack: bob may use the proxy but has no rights in the member.
	if out, err := kubectl(host, "bob", "get", "--raw", pods); err == nil || !strings.Contains(out, `User "bob" cannot list resource "pods"`) {
		t.Fatalf("bob through the proxy: want the member's Forbidden for user bob, got err=%v:\n%s", err, out)
	}
	if out, err := kubectl(host, "carol", "get", "--raw", pods); err == nil || !strings.Contains(out, "clusters/proxy") {
		t.Fatalf("carol through the proxy: want the host's Forbidden on clusters/proxy, got err=%v:\n%s", err, out)
	}
	// Forged front-proxy headers sent to the proxy directly, without the
	// host's client certificate, authenticate no one.
	direct := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own server
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ln.addr+pods, nil)
	req.Header.Set("X-Remote-User", "alice")
	req.Header.Set("X-Remote-Group", "system:masters")
	if resp, err := direct.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged X-Remote-User straight to the proxy: want 401, got %v %v", resp, err)
	}

	// Streaming: alice watches ConfigMaps of member1 through the proxy.
	aliceHost := host.RESTConfig()
	aliceHost.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	aliceM1, err := kubernetes.NewForConfig(memberConfig(aliceHost, members[0].Name, 0))
	if err != nil {
		t.Fatal(err)
	}
	w, err := aliceM1.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{TimeoutSeconds: ptr.To[int64](30)})
	if err != nil {
		t.Fatalf("watch through the proxy: %v", err)
	}
	defer w.Stop()
	mustCreate(t, func() error {
		_, err := member1.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{})
		return err
	})
	waitWatched(t, w, "watched")

	// A Pull member is refused with its reason.
	pull := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "pulled"}, Spec: api.ClusterSpec{SyncMode: api.Pull}}
	testkit.MustCreate(t, f.Hub, pull)
	testkit.Eventually(t, 30*time.Second, "a Pull member refused", func() (bool, string) {
		out, err := kubectl(host, "", "get", "--raw", proxyPath("pulled", "/api/v1/namespaces"))
		return err != nil && strings.Contains(out, "Pull mode"), out
	})

	// The plugin: both members' deployments under a CLUSTER column.
	var stdout, stderr bytes.Buffer
	args := []string{"get", "deployments", "-n", "default", "--kubeconfig", host.KubeconfigPath, "--as", "alice", "-C", n1 + "," + n2}
	if code := KubectlFlotilla(args, &stdout, &stderr); code != 0 {
		t.Fatalf("plugin get: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	table := stdout.String()
	if !strings.HasPrefix(table, "CLUSTER") || !rowFor(table, n1, "web") || !rowFor(table, n2, "web") {
		t.Fatalf("plugin get deployments: want a CLUSTER column and web in both members:\n%s", table)
	}
	stdout.Reset()
	if code := KubectlFlotilla([]string{"get", "pods", "-A", "--kubeconfig", host.KubeconfigPath, "--as", "alice", "-o", "yaml", "-C", n1 + "," + n2}, &stdout, &stderr); code == 0 {
		// alice may not list pods across namespaces: every member refuses.
		t.Fatalf("plugin get pods -A as alice: want the members' refusal, got:\n%s", stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := KubectlFlotilla([]string{"get", "po", "-n", "default", "--kubeconfig", host.KubeconfigPath, "--as", "alice", "-o", "yaml"}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), ClusterAnnotation+": "+n2) || !strings.Contains(stdout.String(), "name: web-"+n1) ||
		!strings.Contains(stderr.String(), "cluster pulled skipped: Pull mode") {
		t.Fatalf("plugin get po -o yaml: exit %d, want both members' pods annotated with their cluster:\n%s%s", code, stdout.String(), stderr.String())
	}

	// The other verbs, the search cache and their attacks, on this fleet.
	testPluginVerbs(t, host, f.Hub, members)

	// One member frozen: it is named, the other printed, within bounds.
	// The proxy is asked: the cache would print member2's last objects.
	members[1].FreezeAPIServer(t)
	stdout.Reset()
	stderr.Reset()
	started := time.Now()
	code := KubectlFlotilla(append(args, "--request-timeout", "8s", "--source", "proxy"), &stdout, &stderr)
	took := time.Since(started)
	members[1].ThawAPIServer(t)
	if code == 0 || !rowFor(stdout.String(), n1, "web") || rowFor(stdout.String(), n2, "web") || !strings.Contains(stderr.String(), "cluster "+n2) {
		t.Fatalf("plugin get with member2 frozen: exit %d, want member1's row and member2 named:\n%s%s", code, stdout.String(), stderr.String())
	}
	if took > 12*time.Second {
		t.Fatalf("plugin get with member2 frozen took %s", took)
	}
	t.Logf("stalled member named after %s; stderr: %s", took.Round(time.Millisecond), strings.TrimSpace(stderr.String()))
	t.Logf("whole test %s", time.Since(begin).Round(time.Millisecond))
}

func rowFor(table, cluster, name string) bool {
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == cluster && slices.Contains(fields[1:3], name) {
			return true
		}
	}
	return false
}

func proxyPath(cluster, p string) string {
	return "/apis/" + fleetview.Group + "/" + fleetview.Version + "/clusters/" + cluster + "/proxy" + p
}

func kubectl(host *testenv.Cluster, as string, args ...string) (string, error) {
	full := []string{"--kubeconfig", host.KubeconfigPath, "--request-timeout", "20s"}
	if as != "" {
		full = append(full, "--as", as)
	}
	out, err := exec.Command("kubectl", append(full, args...)...).CombinedOutput()
	return string(out), err
}

// grantFleetViewers gives alice and bob, on the host, the ClusterRole
// fleet-viewer of rules.
func grantFleetViewers(t *testing.T, cs kubernetes.Interface, rules ...rbacv1.PolicyRule) {
	t.Helper()
	mustCreate(t, func() error {
		_, err := cs.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer"}, Rules: rules}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewers"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleet-viewer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{})
		return err
	})
}

// proxyServing is a self-signed serving certificate for the cluster
// proxy's Service, and its PEM for the APIService's caBundle.
func proxyServing(t *testing.T) ([]byte, dynamiccertificates.CertKeyContentProvider) {
	t.Helper()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(proxyService+"."+shared.SystemNamespace+".svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := dynamiccertificates.NewStaticCertKeyContent("cluster-proxy", certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, serving
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

func proxiedDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
}

// impersonatorToken makes the member's impersonator identity, a
// ServiceAccount, and returns a token of it.
func impersonatorToken(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "flotilla-impersonator"}}
	mustCreate(t, func() error {
		_, err := cs.CoreV1().ServiceAccounts("kube-system").Create(t.Context(), sa, metav1.CreateOptions{})
		return err
	})
	tr, err := cs.CoreV1().ServiceAccounts("kube-system").CreateToken(t.Context(), sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

type proxyListener struct {
	listener net.Listener
	addr     string
}

// registerProxy listens for the proxy on loopback and registers it on the
// host, whose aggregation layer reaches it through an ExternalName Service
// naming localhost (testenv.RegisterAPIService), so the test needs no
// address other than loopback and runs the same on every machine.
func registerProxy(t *testing.T, host *testenv.Cluster, caBundle []byte) proxyListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	if err := host.RegisterAPIService(t.Context(), testenv.APIService{Group: fleetview.Group, Version: fleetview.Version,
		Namespace: shared.SystemNamespace, Service: proxyService, Port: port, CABundle: caBundle}); err != nil {
		t.Fatal(err)
	}
	return proxyListener{listener: ln, addr: ln.Addr().String()}
}

func waitWatched(t *testing.T, w watch.Interface, name string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch through the proxy ended before %s was seen", name)
			}
			if cm, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == watch.Added && cm.Name == name {
				return
			}
		case <-timeout:
			t.Fatalf("watch through the proxy: no ADDED event for %s within 20s", name)
		}
	}
}
