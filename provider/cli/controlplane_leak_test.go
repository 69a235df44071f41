package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// syncBuffer is a bytes.Buffer safe for a process writing while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestControlplaneLogsNoCredentials runs the control plane at trace level
// (controller-runtime's and client-go's logs included) while it registers a
// member from a token Secret and propagates a template to it, then scans
// every log line for the member's token. Expected count: 0.
func TestControlplaneLogsNoCredentials(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, member := fleet.Clusters[0], fleet.Clusters[1]
	var logs syncBuffer
	processLogger("flotilla", "trace", &logs)

	stop := runInProcess(t, controlplaneConfig{
		kubeconfig: host.KubeconfigPath, fleet: "test", metricsAddr: "0", probeAddr: "0", inProcess: true,
		options: shared.Options{ProbeInterval: 300 * time.Millisecond, Resync: time.Second},
	})

	hub := apiClient(t, host.RESTConfig())
	// The CRDs are installed by the control plane as it starts.
	create := func(obj client.Object) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return hub.Create(ctx, obj) == nil, nil
		})
		if err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-system"}})
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: member.Name}, Data: controllertest.TokenData(member)})
	create(controllertest.ClusterObject(member.Name, member.Host, "flotilla-system"))
	create(&policyv1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Spec: api.PropagationSpec{
			ResourceSelectors: []api.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}},
			Placement:         api.Placement{ClusterAffinity: &api.ClusterAffinity{ClusterNames: []string{member.Name}}},
		},
	})
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}, Data: map[string]string{"mode": "fast"}})

	mc := apiClient(t, member.RESTConfig())
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		return mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &corev1.ConfigMap{}) == nil, nil
	})
	if err != nil {
		t.Fatal("the template never reached the member")
	}
	stop()

	out := logs.String()
	lines := strings.Count(out, "\n")
	if lines < 20 || !strings.Contains(out, "[TRACE]") {
		t.Fatalf("the control plane logged %d lines and no trace; the scan would prove nothing", lines)
	}
	if n := strings.Count(out, member.Token); n != 0 {
		t.Errorf("the member's token appears %d times in %d log lines", n, lines)
	}
	t.Logf("scanned %d log lines at trace level: the member's token appears 0 times", lines)
}
