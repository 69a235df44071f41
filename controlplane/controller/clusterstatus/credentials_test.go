package clusterstatus_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// newHost is a host apiserver with the CRDs and flotilla-system, as a
// Fleet without members; its control plane is started with
// StartControlPlane.
func newHost(t *testing.T, host *testenv.Cluster) controllertest.Fleet {
	t.Helper()
	return controllertest.Fleet{Host: host, Hub: controllertest.SystemHost(t, host), Members: map[string]client.Client{}}
}

// addCluster registers m as Cluster name in the host, with a Secret of
// secretNamespace holding data.
func addCluster(t *testing.T, hub client.Client, name, secretNamespace string, m *testenv.Cluster, data map[string][]byte) {
	t.Helper()
	controllertest.Register(t, hub, name, m.Host, secretNamespace, data)
}

// waitClusterReady waits for the Cluster's Ready condition to have status and,
// for False, reason, and returns its message.
func waitClusterReady(t *testing.T, hub client.Client, name string, status metav1.ConditionStatus, reason string) string {
	t.Helper()
	var msg string
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("cluster %s Ready=%s %s", name, status, reason), func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(t.Context(), client.ObjectKey{Name: name}, &cl); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady)
		if c == nil {
			return false, "no Ready condition"
		}
		msg = c.Message
		return c.Status == status && (reason == "" || c.Reason == reason), fmt.Sprintf("%+v", *c)
	})
	return msg
}

// propagateConfigMap creates ConfigMap name in default and a policy that
// sends it to cluster.
func propagateConfigMap(t *testing.T, hub client.Client, name, cluster string) {
	t.Helper()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: %s}
  placement:
    clusterAffinity:
      clusterNames: [%s]
`, name, cluster)
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"from": name}})
}

// TestTenantCredentialsAndMembership runs two control planes with the same
// fleet name over two real host apiservers and one real member:
//   - a Cluster whose Secret holds a kubeconfig with an exec plugin gets
//     Ready=False, reason CredentialsRefused, a message naming the user and
//     exec, and the plugin's marker file never appears;
//   - a Cluster whose spec.secretRef names another namespace is refused
//     the same way;
//   - the first control plane claims the member for Cluster m and applies
//     to it; a second Cluster for the same member in that control plane, and
//     the second control plane's Cluster m, get Ready=False, reason
//     MembershipConflict, and nothing the second control plane propagates
//     reaches the member.
func TestTenantCredentialsAndMembership(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	m := fleet.Clusters[2]
	a, b := newHost(t, fleet.Clusters[0]), newHost(t, fleet.Clusters[1])
	memberClient, err := client.New(m.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	probes := shared.NewProbeTimes()
	a.StartControlPlane(t, func(o *shared.Options) { o.Probes = probes })
	b.StartControlPlane(t)
	ctx := t.Context()

	t.Log("a kubeconfig with an exec plugin is refused and never runs")
	marker := filepath.Join(t.TempDir(), "exec-ran")
	cfg, err := clientcmd.LoadFromFile(m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for name := range cfg.AuthInfos {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh", Args: []string{"-c", "touch " + marker},
		}}
	}
	execKubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	addCluster(t, a.Hub, "exec", shared.SystemNamespace, m, map[string][]byte{clusterv1.SecretKeyKubeconfig: execKubeconfig})
	msg := waitClusterReady(t, a.Hub, "exec", metav1.ConditionFalse, api.ReasonCredentialsRefused)
	for _, want := range []string{"cluster exec", "secret flotilla-system/exec", "kubeconfig: user", "sets exec"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not say %q", msg, want)
		}
	}

	t.Log("a secretRef outside flotilla-system is refused")
	addCluster(t, a.Hub, "elsewhere", "default", m, controllertest.TokenData(m))
	msg = waitClusterReady(t, a.Hub, "elsewhere", metav1.ConditionFalse, api.ReasonCredentialsRefused)
	if want := `spec.secretRef.namespace "default"`; !strings.Contains(msg, want) {
		t.Errorf("Ready message %q does not say %q", msg, want)
	}

	t.Log("the first control plane claims the member and applies to it")
	addCluster(t, a.Hub, "m", shared.SystemNamespace, m, controllertest.TokenData(m))
	waitClusterReady(t, a.Hub, "m", metav1.ConditionTrue, "")
	// The dashboard's heartbeat: a probe answered Ready is remembered in
	// memory; a refused Cluster has none.
	if at, ok := probes.LastProbe("m"); !ok || time.Since(at) > controllertest.Deadline {
		t.Errorf("no recent successful probe of Ready cluster m recorded: %v %v", at, ok)
	}
	if at, ok := probes.LastProbe("exec"); ok {
		t.Errorf("refused cluster exec has a successful probe at %v", at)
	}
	propagateConfigMap(t, a.Hub, "from-a", "m")
	testkit.Eventually(t, controllertest.Deadline, "ConfigMap from-a in the member", func() (bool, string) {
		err := memberClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "from-a"}, &corev1.ConfigMap{})
		return err == nil, fmt.Sprintf("get: %v", err)
	})

	t.Log("a second Cluster for the same member is refused")
	addCluster(t, a.Hub, "m-twin", shared.SystemNamespace, m, controllertest.TokenData(m))
	msg = waitClusterReady(t, a.Hub, "m-twin", metav1.ConditionFalse, api.ReasonMembershipConflict)
	if want := `is already registered as "m" in fleet "test"`; !strings.Contains(msg, want) {
		t.Errorf("Ready message %q does not say %q", msg, want)
	}

	t.Log("a second control plane with the same fleet name is refused, and applies nothing")
	addCluster(t, b.Hub, "m", shared.SystemNamespace, m, controllertest.TokenData(m))
	msg = waitClusterReady(t, b.Hub, "m", metav1.ConditionFalse, api.ReasonMembershipConflict)
	if want := `already registered as "m" in fleet "test" by controlplane/`; !strings.Contains(msg, want) {
		t.Errorf("Ready message %q does not say %q", msg, want)
	}
	propagateConfigMap(t, b.Hub, "from-b", "m")
	propagateConfigMap(t, a.Hub, "from-a-later", "m")
	// The first control plane's later ConfigMap arriving shows the member
	// was written to since; the second's must still be absent.
	testkit.Eventually(t, controllertest.Deadline, "ConfigMap from-a-later in the member", func() (bool, string) {
		err := memberClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "from-a-later"}, &corev1.ConfigMap{})
		return err == nil, fmt.Sprintf("get: %v", err)
	})
	time.Sleep(3 * time.Second) // several resyncs of the second control plane (Resync 1s)
	if err := memberClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "from-b"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the second control plane wrote to a member claimed by the first: get from-b: %v", err)
	}
	if err := memberClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "from-a"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the first control plane's ConfigMap is gone from the member: %v", err)
	}
	var marker2 corev1.ConfigMap
	if err := memberClient.Get(ctx, client.ObjectKey{Namespace: member.MembershipNamespace, Name: member.MembershipName}, &marker2); err != nil {
		t.Fatal(err)
	}
	if marker2.Data[member.MembershipMemberKey] != "m" || !strings.HasPrefix(marker2.Data[member.MembershipOwnerKey], "controlplane/") {
		t.Errorf("membership marker %v, want member m owned by a control plane", marker2.Data)
	}

	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the exec plugin of a Cluster's kubeconfig ran: stat %s: %v", marker, err)
	}
}
