//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const deadline = 45 * time.Second

// TestUpPropagateFailoverDown runs the whole local control plane on real
// processes: up starts a host, the control plane built from this checkout and
// two members and writes one kubeconfig; scripts/controlplane-demo.sh, run
// against it the way its users run it, applies a Deployment and a
// PropagationPolicy through the host context with kubectl, sees 4 replicas
// divided 2+2 over both members and all Ready, stops member2 and sees all 4
// Ready on member1; down stops every recorded process and removes the
// directory. The demo script had a test and a local control plane of its own
// that propagated and failed over exactly as this one did; one control plane
// now serves both, and every assertion of the two is kept.
func TestUpPropagateFailoverDown(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the demo script and the cluster proxy check drive kubectl, which is not on PATH")
		}
		t.Skip("the demo script and the cluster proxy check drive kubectl, which is not on PATH")
	}
	dir, st := startLocal(t)
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	var contexts []string
	for name := range cfg.Contexts {
		contexts = append(contexts, name)
	}
	slices.Sort(contexts)
	if want := []string{"host", "member1", "member2"}; !slices.Equal(contexts, want) || cfg.CurrentContext != "host" {
		t.Fatalf("kubeconfig contexts %q (current %q), want %q (current host)", contexts, cfg.CurrentContext, want)
	}
	var again bytes.Buffer
	if err := run([]string{"up", "-n", "2", "-dir", dir, "-bin", st.Controlplane.Cmdline[0]}, &again); err != nil {
		t.Fatalf("second up: %v", err)
	}
	if after, err := readState(dir); err != nil || !strings.Contains(again.String(), "already up") || after.Controlplane.PID != st.Controlplane.PID {
		t.Fatalf("a second up while up must change nothing (state %v): %s", err, again.String())
	}
	if err := run([]string{"stop-member", "-dir", dir, "member9"}, &again); err == nil || !strings.Contains(err.Error(), `no member "member9"`) {
		t.Fatalf("stop-member member9: got %v, want an error naming the member", err)
	}
	hub, member1 := contextClient(t, dir, "host"), contextClient(t, dir, "member1")

	// The cluster proxy is registered: the host's admin, bound by name to
	// cluster-admin (the impersonator impersonates subjects bound by name),
	// reads member1 through it, as admin in system:masters there.
	testkitCreate(t, hub, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "admin-by-name"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "admin"}}})
	waitFor(t, "member1's namespaces through the cluster proxy", func() (bool, string) {
		out, err := exec.Command("kubectl", "--kubeconfig", filepath.Join(dir, kubeconfig), "--context", "host", "get", "--raw",
			"/apis/clusterproxy.flotilla.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/kube-system").CombinedOutput()
		return err == nil && strings.Contains(string(out), `"kube-system"`), string(out)
	})

	began := time.Now()
	runDemoScript(t, dir)
	// The script sums readyReplicas over the survivors; member1's
	// Deployment itself must say 4 of 4.
	if a := deployment(t, member1); a != "4/4" {
		t.Errorf("member1's web after the demo: %s, want 4/4", a)
	}
	t.Logf("demo: propagation and failover done %s after it started", time.Since(began).Round(100*time.Millisecond))

	var out bytes.Buffer
	if err := run([]string{"down", "-dir", dir}, &out); err != nil {
		t.Fatalf("down: %v", err)
	}
	for _, p := range st.all() {
		if p.Running() {
			t.Errorf("%s (pid %d) still runs after down", p.Name, p.PID)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after down: %v", dir, err)
	}
}

// runDemoScript runs scripts/controlplane-demo.sh against the local control
// plane in dir with 4 replicas: it must propagate web 2+2 over member1 and
// member2, all Ready, stop member2 and see all replicas Ready on member1.
func runDemoScript(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "controlplane-demo.sh"))
	cmd.Env = append(os.Environ(), "CONTROLPLANE_DIR="+dir, "REPLICAS=4", "TIMEOUT=45")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("controlplane-demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"all 4 replicas Ready across member1 member2",
		`binding: [{"name":"member1","replicas":2},{"name":"member2","replicas":2}]`,
		"stopped member member2",
		"all 4 replicas Ready on member1",
		`binding: [{"name":"member1","replicas":4}]`,
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// startLocal runs up with two members in the test's directory, after a down
// of whatever an earlier run left there, checks that every recorded process
// runs, and registers down with t.Cleanup (a stop that keeps the logs, when
// the test failed).
func startLocal(t *testing.T) (string, *state) {
	t.Helper()
	return startLocalWith(t, buildBinary(t))
}

// startLocalWith is startLocal with the control plane binary bin.
func startLocalWith(t *testing.T, bin string) (string, *state) {
	t.Helper()
	dir := testDir(t)
	var out bytes.Buffer
	// A test binary killed before its cleanup (a -timeout panic, say) leaves
	// detached processes behind; the next run stops them, by recorded PID.
	if err := run([]string{"down", "-dir", dir}, &out); err != nil {
		t.Fatalf("down of an earlier run: %v", err)
	}
	begin := time.Now()
	if err := run([]string{"up", "-n", "2", "-dir", dir, "-bin", bin, "-timeout", "2m"}, &out); err != nil {
		t.Fatalf("up: %v (up stopped what it started; logs kept in %s)\n%s", err, dir, out.String())
	}
	t.Logf("up took %s", time.Since(begin).Round(100*time.Millisecond))
	for _, want := range []string{"export KUBECONFIG=" + filepath.Join(dir, kubeconfig), "CONTROLPLANE_DIR=" + dir + " scripts/controlplane-demo.sh"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("up does not print %q:\n%s", want, out.String())
		}
	}
	st, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(st.Controlplane.Log); err == nil {
				t.Logf("up output:\n%s\ncontrol plane log:\n%s", out.String(), log)
			}
			// The processes stop; their logs stay until the next run.
			if err := st.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
			t.Logf("logs kept in %s", dir)
			return
		}
		if err := run([]string{"down", "-dir", dir}, &out); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	if running, total, err := st.countRunning(); err != nil || running != total || total != 1+2+2*4+1 {
		t.Fatalf("after up %d of %d recorded processes run (%v), want all of 1 control plane + 2 etcd + 2×4 member + 1 host apiserver", running, total, err)
	}
	return dir, st
}

// testDir is the same directory on every run of a test from one checkout,
// and differs between checkouts and tests, so that runs never share one.
func testDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(wd + "\x00" + t.Name()))
	return filepath.Join(os.TempDir(), "flotilla-localup-test-"+hex.EncodeToString(sum[:6]))
}

// deployment is web's "ready/replicas" on a member, or why it is not there.
func deployment(t *testing.T, c client.Client) string {
	var d appsv1.Deployment
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, ptr.Deref(d.Spec.Replicas, 1))
}

func propagateWeb(t *testing.T, hub client.Client) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	if err := yaml.Unmarshal([]byte(`
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`), pp); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{pp, web} {
		if err := hub.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
}

// contextClient is a client built from one context of up's kubeconfig, so
// the test reaches every cluster the way a user does.
func contextClient(t *testing.T, dir, name string) client.Client {
	t.Helper()
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: filepath.Join(dir, kubeconfig)},
		&clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := shared.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildBinary is the provider binary of this checkout, built once per test
// binary (testkit.SharedProvider; TestMain removes it): the tests only run
// it, and each link costs several CPU seconds, most of a minute on a
// loaded machine.
func buildBinary(t *testing.T) string {
	t.Helper()
	return testkit.SharedProvider(t, filepath.Join("..", ".."))
}

func waitFor(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	last := ""
	for ctx.Err() == nil {
		ok, why := f()
		if ok {
			return
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not reached within %v: %s", what, deadline, last)
}

func testkitCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}
