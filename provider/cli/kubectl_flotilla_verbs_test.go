package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	searchv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/search/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// pluginRun runs the plugin against host as user ("" for the host's
// admin) and returns its exit code, stdout and stderr.
func pluginRun(host *testenv.Cluster, user string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	// The host flags go right after the verb, before exec's `--`.
	full := []string{args[0], "--kubeconfig", host.KubeconfigPath}
	if user != "" {
		full = append(full, "--as", user)
	}
	full = append(full, args[1:]...)
	code := KubectlFlotilla(full, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// memberReaderRules are what alice may do in namespace default of each
// member: read pods, ConfigMaps, Deployments and events, read logs and
// exec into pods. bob and carol may do nothing there.
var memberReaderRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "configmaps", "events"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
}

// testPluginVerbs runs the plugin's verbs against the fleet of
// TestClusterProxyAndPlugin (both members answering) and attacks each:
// a user allowed the proxy on the host but nothing in the member (bob) is
// Forbidden there by the member, which only holds if the request reached
// it as bob and not with the control plane's credentials. Checks report
// with Errorf, so one run names every check that fails.
func testPluginVerbs(t *testing.T, host *testenv.Cluster, hub client.Client, members []*testenv.Cluster) {
	begin := time.Now()
	defer func() { t.Logf("plugin verbs and the cache: %s", time.Since(begin).Round(time.Millisecond)) }()
	ctx := t.Context()
	n1, n2 := members[0].Name, members[1].Name
	hostCS := host.Clientset(t)

	// The search cache: alice may use the cache and list
	// Deployments in default on the host; bob may use the cache only.
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "search-user"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetview.Group}, Resources: []string{"search/api", "search/apis"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "search-users"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "search-user"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployment-lister"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-lists"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployment-lister"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{})
		return err
	})
	// get, before any ResourceRegistry: the proxy answers, and -v says why.
	code, out, errOut := pluginRun(host, "alice", "get", "deployments", "-n", "default", "-v=1")
	if code != 0 || !strings.Contains(errOut, "source: cluster proxy") || !strings.Contains(errOut, "no ResourceRegistry caches") ||
		!rowFor(out, n1, "web") || !rowFor(out, n2, "web") {
		t.Errorf("get deployments without a registry: exit %d, want the proxy named as the source and both rows:\n%s%s", code, out, errOut)
	}

	reg := &searchv1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "deployments"}, Spec: searchv1.ResourceRegistrySpec{
		ResourceSelectors: []searchv1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}
	reg.Spec.TargetCluster.ClusterNames = []string{n1, n2}
	testkit.MustCreate(t, hub, reg)
	proxyHeader := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	var cacheOut string
	testkit.Eventually(t, time.Minute, "get deployments answered by the search cache", func() (bool, string) {
		code, out, errOut := pluginRun(host, "alice", "get", "deployments", "-n", "default", "-v=1")
		cacheOut = out
		return code == 0 && strings.Contains(errOut, "source: search cache") && rowFor(out, n1, "web") && rowFor(out, n2, "web"), out + errOut
	})
	// The cache prints the columns a member prints for Deployments (it
	// serves a Table), the same as the proxy did above.
	if want, got := []string{"CLUSTER", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, strings.Fields(strings.SplitN(cacheOut, "\n", 2)[0]); !slices.Equal(got, want) || !slices.Equal(proxyHeader, want) {
		t.Errorf("get deployments -n default: columns from the cache %v and from the proxy %v, want %v both:\n%s", got, proxyHeader, want, cacheOut)
	}
	code, out, errOut = pluginRun(host, "alice", "get", "deploy", "web", "-n", "default", "-C", n2, "-o", "json", "--source", "cache")
	if code != 0 || !strings.Contains(out, `"`+ClusterAnnotation+`": "`+n2+`"`) || strings.Contains(out, `"`+n1+`"`) || strings.Contains(out, "managedFields") {
		t.Errorf("get deploy web -C %s -o json from the cache: exit %d, want member2's object only, annotated, without managed fields:\n%s%s", n2, code, out, errOut)
	}
	// The attack on the cache: bob may use it but may list Deployments
	// nowhere on the host, so the cache shows him nothing and the plugin
	// asks the members as bob, who refuse him.
	code, out, errOut = pluginRun(host, "bob", "get", "deployments", "-n", "default", "-v=1")
	if code == 0 || rowFor(out, n1, "web") || !strings.Contains(errOut, "source: cluster proxy") ||
		!strings.Contains(errOut, `User "bob" cannot list resource "deployments"`) {
		t.Errorf("bob's get deployments: exit %d, want the cache's refusal, then the members' Forbidden for bob:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "alice", "get", "configmaps", "-n", "default", "--source", "cache"); code == 0 ||
		!strings.Contains(errOut, "no ResourceRegistry caches") {
		t.Errorf("get configmaps --source cache: exit %d, want the cache's not-cached answer:\n%s%s", code, out, errOut)
	}

	// logs: the pod is found in its one member without -C; the member has
	// no kubelet, so its own answers pass through: an empty log for a pod
	// with no node, and its refusal of an unknown container.
	pod := "web-" + n1
	if code, out, errOut := pluginRun(host, "alice", "logs", pod, "-n", "default", "--tail", "5"); code != 0 || out != "" {
		t.Errorf("logs %s: exit %d, want the member's empty log of a pod without a node:\n%s%s", pod, code, out, errOut)
	}
	if code, _, errOut := pluginRun(host, "alice", "logs", pod, "-n", "default", "-c", "nosuch", "-f"); code == 0 ||
		!strings.Contains(errOut, "cluster "+n1) || !strings.Contains(errOut, "container nosuch is not valid for pod "+pod) {
		t.Errorf("logs -c nosuch: exit %d, want the member's refusal naming the cluster:\n%s", code, errOut)
	}
	if code, _, errOut := pluginRun(host, "alice", "logs", "web-nowhere", "-n", "default"); code == 0 ||
		!strings.Contains(errOut, "not found in clusters "+n1+", "+n2) {
		t.Errorf("logs of a pod in no member: exit %d, want the members named:\n%s", code, errOut)
	}
	if code, _, errOut := pluginRun(host, "bob", "logs", pod, "-n", "default", "-C", n1); code == 0 ||
		!strings.Contains(errOut, `User "bob" cannot get resource "pods/log"`) {
		t.Errorf("bob's logs: exit %d, want the member's Forbidden for bob:\n%s", code, errOut)
	}

	// exec: through the upgrade path, the member answers that the pod has
	// no node (no kubelet runs here); bob is refused by the member.
	if code, _, errOut := pluginRun(host, "alice", "exec", pod, "-n", "default", "-i", "--", "ls", "/"); code == 0 ||
		!strings.Contains(errOut, "cluster "+n1) || !strings.Contains(errOut, "does not have a host assigned") {
		t.Errorf("exec %s: exit %d, want the member's answer for a pod without a node:\n%s", pod, code, errOut)
	}
	if code, _, errOut := pluginRun(host, "bob", "exec", pod, "-n", "default", "-C", n1, "--", "ls"); code == 0 ||
		!strings.Contains(errOut, `User "bob" cannot`) || !strings.Contains(errOut, "pods/exec") {
		t.Errorf("bob's exec: exit %d, want the member's Forbidden for bob:\n%s", code, errOut)
	}

	// logs and exec through a real node endpoint: in the second member the
	// pod runs on kwok's node, and the member's apiserver reaches kwok's
	// kubelet endpoints (TLS, its kubelet client flags) for the log and the
	// exec stream, as alice. bob is refused by that member.
	kpod := "web-" + n2
	if err := members[1].WriteContainerLog("first line of "+kpod, "last line of "+kpod); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := pluginRun(host, "alice", "logs", kpod, "-n", "default"); code != 0 ||
		out != "first line of "+kpod+"\nlast line of "+kpod+"\n" {
		t.Errorf("logs %s: exit %d, want both lines the node serves:\n%q%s", kpod, code, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "alice", "logs", kpod, "-n", "default", "-C", n2, "--tail", "1"); code != 0 || out != "last line of "+kpod+"\n" {
		t.Errorf("logs %s --tail 1: exit %d, want the last line:\n%q%s", kpod, code, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "bob", "logs", kpod, "-n", "default", "-C", n2); code == 0 || strings.Contains(out, kpod) ||
		!strings.Contains(errOut, `User "bob" cannot get resource "pods/log"`) {
		t.Errorf("bob's logs of %s: exit %d, want the member's Forbidden for bob:\n%s%s", kpod, code, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "alice", "exec", kpod, "-n", "default", "--", "echo", "hello from", n2); code != 0 || out != "hello from "+n2+"\n" {
		t.Errorf("exec %s -- echo: exit %d, want the command's output:\n%q%s", kpod, code, out, errOut)
	}
	pluginStdin = strings.NewReader("piped through " + n2 + "\n")
	code, out, errOut = pluginRun(host, "alice", "exec", kpod, "-n", "default", "-C", n2, "-i", "--", "head", "-n", "1")
	pluginStdin = os.Stdin
	if code != 0 || out != "piped through "+n2+"\n" {
		t.Errorf("exec -i %s -- head -n 1: exit %d, want the line from stdin:\n%q%s", kpod, code, out, errOut)
	}
	if code, _, errOut := pluginRun(host, "alice", "exec", kpod, "-n", "default", "--", "sh", "-c", "exit 3"); code == 0 ||
		!strings.Contains(errOut, "cluster "+n2) || !strings.Contains(errOut, "exit status 3") {
		t.Errorf("exec %s -- exit 3: exit %d, want the command's failure (as kwok reports it) named with the cluster:\n%s", kpod, code, errOut)
	}
	if code, out, errOut := pluginRun(host, "bob", "exec", kpod, "-n", "default", "-C", n2, "--", "echo", "bob was here"); code == 0 || strings.Contains(out, "bob was here") ||
		!strings.Contains(errOut, `User "bob" cannot`) || !strings.Contains(errOut, "pods/exec") {
		t.Errorf("bob's exec in %s: exit %d, want the member's Forbidden for bob:\n%s%s", kpod, code, out, errOut)
	}

	// describe: the object and its events, from the named member.
	m1 := members[0].Clientset(t)
	dep, err := m1.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, func() error {
		_, err := m1.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.scaled"},
			InvolvedObject: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", UID: dep.UID},
			Reason:         "ScalingReplicaSet", Message: "Scaled up replica set web-1 to 1", Type: corev1.EventTypeNormal,
			Source: corev1.EventSource{Component: "deployment-controller"}, LastTimestamp: metav1.Now()}, metav1.CreateOptions{})
		return err
	})
	code, out, errOut = pluginRun(host, "alice", "describe", "deployment", "web", "-n", "default", "-C", n1)
	if code != 0 || !strings.Contains(out, "Cluster: "+n1) || !strings.Contains(out, "uid: "+string(dep.UID)) ||
		!strings.Contains(out, "ScalingReplicaSet") || strings.Contains(out, "managedFields") {
		t.Errorf("describe deployment web -C %s: exit %d, want the object and its event:\n%s%s", n1, code, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "bob", "describe", "deployment", "web", "-n", "default", "-C", n1); code == 0 ||
		!strings.Contains(errOut, `User "bob" cannot get resource "deployments"`) || strings.Contains(out, string(dep.UID)) {
		t.Errorf("bob's describe: exit %d, want the member's Forbidden for bob:\n%s%s", code, out, errOut)
	}

	// describe across members: without -C, every member that has the
	// object, each under its cluster; a member without it is passed over,
	// an object in none names the members, and -C naming a member without
	// it is an error. bob is refused by both members and sees nothing.
	code, out, errOut = pluginRun(host, "alice", "describe", "deployment", "web", "-n", "default")
	if code != 0 || !strings.Contains(out, "Cluster: "+n1+"\n") || !strings.Contains(out, "Cluster: "+n2+"\n") || strings.Index(out, "Cluster: "+n1) > strings.Index(out, "Cluster: "+n2) {
		t.Errorf("describe deployment web without -C: exit %d, want it from %s then %s:\n%s%s", code, n1, n2, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "alice", "describe", "pod", kpod, "-n", "default"); code != 0 ||
		!strings.Contains(out, "Cluster: "+n2+"\n") || strings.Contains(out, "Cluster: "+n1) || !strings.Contains(out, "nodeName: "+members[1].NodeName(1)) {
		t.Errorf("describe pod %s without -C: exit %d, want it from %s only:\n%s%s", kpod, code, n2, out, errOut)
	}
	if code, _, errOut := pluginRun(host, "alice", "describe", "pod", "web-nowhere", "-n", "default"); code == 0 ||
		!strings.Contains(errOut, "not found in clusters "+n1+", "+n2) {
		t.Errorf("describe a pod in no member: exit %d, want the members named:\n%s", code, errOut)
	}
	if code, out, errOut := pluginRun(host, "alice", "describe", "pod", kpod, "-n", "default", "-C", n1+","+n2); code == 0 ||
		!strings.Contains(out, "Cluster: "+n2+"\n") || !strings.Contains(errOut, "cluster "+n1+": pods "+kpod) || !strings.Contains(errOut, "not found") {
		t.Errorf("describe pod %s -C %s,%s: exit %d, want %s printed and %s named as lacking it:\n%s%s", kpod, n1, n2, code, n2, n1, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "bob", "describe", "deployment", "web", "-n", "default"); code == 0 || strings.Contains(out, "Cluster:") ||
		strings.Count(errOut, `User "bob" cannot get resource "deployments"`) != 2 {
		t.Errorf("bob's describe without -C: exit %d, want both members' Forbidden for bob and nothing printed:\n%s%s", code, out, errOut)
	}

	// top against a member with metrics: the second member's figures
	// (metrics-server scraping kwok's node) under a CLUSTER column, the
	// first named as serving no metrics.k8s.io; bob is refused by the
	// member that serves them.
	testkit.Eventually(t, 90*time.Second, "top pods -A shows "+kpod+" in "+n2, func() (bool, string) {
		code, out, errOut := pluginRun(host, "alice", "top", "pods", "-A")
		return code != 0 && hasTopRow(out, n2, "default", kpod) && strings.HasPrefix(out, "CLUSTER") &&
			strings.Contains(errOut, "member "+n1+" does not serve metrics.k8s.io") && !strings.Contains(errOut, "cluster "+n2), out + errOut
	})
	if code, out, errOut := pluginRun(host, "alice", "top", "nodes", "-C", n2); code != 0 || !hasTopRow(out, n2, members[1].NodeName(1)) {
		t.Errorf("top nodes -C %s: exit %d, want its node's figures:\n%s%s", n2, code, out, errOut)
	}
	if code, out, errOut := pluginRun(host, "bob", "top", "pods", "-n", "default", "-C", n2); code == 0 || hasTopRow(out, n2, kpod) ||
		!strings.Contains(errOut, `User "bob" cannot list resource "pods" in API group "metrics.k8s.io"`) {
		t.Errorf("bob's top in %s: exit %d, want the member's Forbidden for bob:\n%s%s", n2, code, out, errOut)
	}

	// promote: alice may create Deployments in default and
	// ClusterPropagationPolicies on the host. bob, who may not read the Deployment in the
	// member, is refused there and nothing is made on the host; alice's
	// promote makes the template and the policy, and the control plane
	// adopts the member's object in place (same UID).
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "promoter"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-promotes"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "promoter"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}, {Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "promoter"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"policy.flotilla.io"}, Resources: []string{"clusterpropagationpolicies"}, Verbs: []string{"create", "delete"}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := hostCS.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "promoters"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "promoter"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}, {Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}, metav1.CreateOptions{})
		return err
	})
	policyKey := client.ObjectKey{Name: "default-web-deployment"}
	if code, _, errOut := pluginRun(host, "bob", "promote", "deployment", "web", "-n", "default", "-C", n1); code == 0 ||
		!strings.Contains(errOut, `User "bob" cannot get resource "deployments"`) {
		t.Errorf("bob's promote: exit %d, want the member's Forbidden for bob:\n%s", code, errOut)
	}
	if err := hub.Get(ctx, policyKey, &policyv1.ClusterPropagationPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("after bob's refused promote: want no ClusterPropagationPolicy on the host, got %v", err)
	}
	if code, out, errOut := pluginRun(host, "alice", "promote", "deployment", "web", "-n", "default", "-C", n1); code != 0 {
		t.Errorf("promote deployment web -C %s: exit %d\n%s%s", n1, code, out, errOut)
	}
	var policy policyv1.ClusterPropagationPolicy
	if err := hub.Get(ctx, policyKey, &policy); err != nil || policy.Spec.ConflictResolution != api.ConflictOverwrite ||
		policy.Spec.Placement.ClusterAffinity == nil || !slices.Equal(policy.Spec.Placement.ClusterAffinity.ClusterNames, []string{n1}) {
		t.Errorf("promoted policy: want default-web-deployment placing on %s with Overwrite, got %+v %v", n1, policy.Spec, err)
	}
	testkit.Eventually(t, time.Minute, "the member's Deployment adopted in place", func() (bool, string) {
		got, err := m1.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.UID == dep.UID && got.Labels[render.LabelManagedBy] == render.ManagedByFlotilla && got.Annotations[execution.AnnotationAdopted] == "true",
			fmt.Sprintf("uid %s (was %s), labels %v, annotations %v", got.UID, dep.UID, got.Labels, got.Annotations)
	})
	if code, _, errOut := pluginRun(host, "alice", "promote", "deployment", "web", "-n", "default", "-C", n1); code == 0 ||
		!strings.Contains(errOut, "already promoted") {
		t.Errorf("promote twice: exit %d, want the existing policy named:\n%s", code, errOut)
	}

	// cordon, taint, uncordon on the host's Cluster, as the host's admin.
	taints := func() []corev1.Taint {
		var cl clusterv1.Cluster
		if err := hub.Get(ctx, client.ObjectKey{Name: n1}, &cl); err != nil {
			t.Fatal(err)
		}
		return cl.Spec.Taints
	}
	has := func(key string, effect corev1.TaintEffect) bool {
		return slices.ContainsFunc(taints(), func(t corev1.Taint) bool { return t.Key == key && t.Effect == effect })
	}
	if code, out, errOut := pluginRun(host, "", "cordon", n1); code != 0 || !has(api.TaintClusterUnschedulable, corev1.TaintEffectNoSchedule) {
		t.Errorf("cordon %s: exit %d, taints %v:\n%s%s", n1, code, taints(), out, errOut)
	}
	if code, out, _ := pluginRun(host, "", "cordon", n1); code != 0 || !strings.Contains(out, "already cordoned") || len(taints()) != 1 {
		t.Errorf("cordon twice: exit %d, want one taint and 'already cordoned': %v\n%s", code, taints(), out)
	}
	if code, _, errOut := pluginRun(host, "", "taint", "clusters", n1, "dedicated=gpu:NoExecute"); code != 0 || !has("dedicated", corev1.TaintEffectNoExecute) {
		t.Errorf("taint %s: exit %d, taints %v\n%s", n1, code, taints(), errOut)
	}
	if code, _, errOut := pluginRun(host, "", "taint", n1, "dedicated=cpu:NoExecute"); code == 0 || !strings.Contains(errOut, "--overwrite") {
		t.Errorf("taint without --overwrite over another value: exit %d, want a refusal:\n%s", code, errOut)
	}
	if code, _, errOut := pluginRun(host, "", "uncordon", n1); code != 0 || has(api.TaintClusterUnschedulable, corev1.TaintEffectNoSchedule) {
		t.Errorf("uncordon %s: exit %d, taints %v\n%s", n1, code, taints(), errOut)
	}
	if code, _, errOut := pluginRun(host, "", "taint", n1, "dedicated-"); code != 0 || len(taints()) != 0 {
		t.Errorf("taint %s dedicated-: exit %d, taints %v\n%s", n1, code, taints(), errOut)
	}
	if code, _, errOut := pluginRun(host, "", "cordon", "nosuch"); code == 0 || !strings.Contains(errOut, "cluster nosuch: no such Cluster on the host") {
		t.Errorf("cordon nosuch: exit %d, want the cluster named:\n%s", code, errOut)
	}
	// bob may read Clusters but not change them.
	if code, _, errOut := pluginRun(host, "bob", "cordon", n1); code == 0 || !strings.Contains(errOut, "cluster "+n1) ||
		!strings.Contains(errOut, `User "bob" cannot patch resource "clusters"`) || len(taints()) != 0 {
		t.Errorf("bob's cordon: exit %d, want the host's Forbidden naming the cluster, taints %v:\n%s", code, taints(), errOut)
	}
}

// hasTopRow reports whether top's table has a row of cluster with the
// leading fields, then a CPU and a memory figure.
func hasTopRow(table, cluster string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) == len(fields)+3 && f[0] == cluster && slices.Equal(f[1:1+len(fields)], fields) &&
			strings.HasSuffix(f[len(f)-2], "m") && strings.HasSuffix(f[len(f)-1], "Mi") {
			return true
		}
	}
	return false
}

// TestPluginCompletion sources the bash completion into a real bash and
// completes the plugin's verbs and top's resources.
func TestPluginCompletion(t *testing.T) {
	var script, stderr bytes.Buffer
	if code := KubectlFlotilla([]string{"completion", "bash"}, &script, &stderr); code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, stderr.String())
	}
	for _, tc := range []struct{ words, want string }{
		{"kubectl-flotilla c", "cordon completion"},
		{"kubectl-flotilla top n", "nodes"},
		{"kubectl-flotilla get --so", "--source"},
	} {
		words := strings.Fields(tc.words)
		cmd := exec.Command("bash", "--norc", "-c", script.String()+`
COMP_WORDS=(`+tc.words+`); COMP_CWORD=`+string(rune('0'+len(words)-1))+`; _kubectl_flotilla; echo "${COMPREPLY[*]}"`)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("complete %q: got %q (%v), want %q", tc.words, out, err, tc.want)
		}
	}
	if code := KubectlFlotilla([]string{"completion", "fish"}, &script, &stderr); code != 2 {
		t.Errorf("completion fish: exit %d, want 2", code)
	}
}

// TestTaintChange table-tests the taint arguments and their effect on a
// Cluster's taints.
func TestTaintChange(t *testing.T) {
	start := []corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}}
	for _, tc := range []struct {
		name      string
		specs     []string
		overwrite bool
		want      []corev1.Taint
		changed   bool
		err       string
	}{
		{name: "add", specs: []string{"b=2:PreferNoSchedule"}, changed: true,
			want: append(slices.Clone(start), corev1.Taint{Key: "b", Value: "2", Effect: corev1.TaintEffectPreferNoSchedule})},
		{name: "same again", specs: []string{"a=1:NoSchedule"}, want: start},
		{name: "other value refused", specs: []string{"a=2:NoSchedule"}, err: "--overwrite"},
		{name: "other value overwritten", specs: []string{"a=2:NoSchedule"}, overwrite: true, changed: true,
			want: []corev1.Taint{{Key: "a", Value: "2", Effect: corev1.TaintEffectNoSchedule}, start[1]}},
		{name: "remove one effect", specs: []string{"a:NoExecute-"}, changed: true, want: start[:1]},
		{name: "remove every effect", specs: []string{"a-"}, changed: true, want: []corev1.Taint{}},
		{name: "remove absent", specs: []string{"z-"}, want: start},
		{name: "bad effect", specs: []string{"a=1:Never"}, err: `effect "Never"`},
		{name: "no effect", specs: []string{"a=1"}, err: `effect ""`},
		{name: "no key", specs: []string{"=1:NoSchedule"}, err: "no key"},
		{name: "status taint", specs: []string{api.TaintClusterNotReady + ":NoExecute-"}, err: "Ready condition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := taintChange{overwrite: tc.overwrite}
			var err error
			for _, s := range tc.specs {
				if err = c.parse(s); err != nil {
					break
				}
			}
			var got []corev1.Taint
			var changed bool
			if err == nil {
				got, changed, err = c.apply("east", start)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error with %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil || changed != tc.changed || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v changed=%v err=%v, want %v changed=%v", got, changed, err, tc.want, tc.changed)
			}
		})
	}
}

// TestReorderFlags table-tests kubectl's flag placement.
func TestReorderFlags(t *testing.T) {
	fs := newFlagSet("test", &bytes.Buffer{})
	fs.Bool("i", false, "")
	fs.Bool("t", false, "")
	fs.Bool("A", false, "")
	fs.String("n", "", "")
	for _, tc := range []struct{ in, want string }{
		{"pods -A -n x", "-A -n x pods"},
		{"pod -it -n x -- sh -c ls -l", "-i -t -n x pod -- sh -c ls -l"},
		{"pod -n=x", "-n=x pod"},
	} {
		if got := strings.Join(reorderFlags(fs, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("reorderFlags(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
