package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

func TestWebhookFlags(t *testing.T) {
	cases := []struct {
		cfg     webhookConfig
		wantErr string
	}{
		{webhookConfig{}, ""},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Ignore"}, ""},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":9443", failurePolicy: "Sometimes"}, `--webhook-failure-policy "Sometimes": must be Fail or Ignore`},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: "9443", failurePolicy: "Fail"}, `--webhook-bind-address "9443"`},
		{webhookConfig{url: "https://127.0.0.1:9443", bindAddress: ":http", failurePolicy: "Fail"}, "the port must be a positive number"},
		{webhookConfig{url: "https://", bindAddress: ":9443", failurePolicy: "Fail"}, "--webhook-url"},
	}
	for _, tc := range cases {
		srv, ca, err := tc.cfg.webhookServer()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.wantErr)
		case tc.wantErr == "" && tc.cfg.url != "" && (srv == nil || len(ca) == 0):
			t.Errorf("%+v: no server or CA bundle", tc.cfg)
		case tc.cfg.url == "" && srv != nil:
			t.Errorf("the webhook is off without a URL, got a server")
		}
	}
}

// TestControlplaneServesWebhook runs the controlplane against a real host
// with --webhook-url: the host refuses an invalid policy with the engine's
// message and stores a valid one.
func TestControlplaneServesWebhook(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runControlplane(ctx, controlplaneConfig{
			kubeconfig: host.KubeconfigPath, fleet: "test", metricsAddr: "0", probeAddr: "0", inProcess: true,
			webhook: webhookConfig{url: fmt.Sprintf("https://127.0.0.1:%d", port), bindAddress: fmt.Sprintf("127.0.0.1:%d", port), failurePolicy: "Fail"},
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controlplane: %v", err)
		}
	})

	hub := apiClient(t, host.RESTConfig())
	policy := func(weight int64) *policyv1.PropagationPolicy {
		return &policyv1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: api.PropagationSpec{
				ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
				Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     api.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: api.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &api.ClusterPreferences{StaticWeightList: []api.StaticClusterWeight{
						{TargetCluster: api.ClusterAffinity{ClusterNames: []string{"a"}}, Weight: weight},
					}},
				}},
			},
		}
	}
	want := "staticWeightList[0].weight: Invalid value: 0: must be greater than or equal to 1"
	var last error
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		last = hub.Create(ctx, policy(0), client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), "denied the request"), nil
	})
	if err != nil {
		t.Fatalf("the host never called the webhook; last create: %v", last)
	}
	if !strings.Contains(last.Error(), want) {
		t.Errorf("refusal %q lacks %q", last, want)
	}
	if err := hub.Create(t.Context(), policy(2)); err != nil {
		t.Errorf("a valid policy is refused: %v", err)
	}
}
