package webhook_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// startHost starts a host apiserver with flotilla's CRDs and a webhook
// server registered through webhook.Register and webhook.Install, and
// returns a client of the host.
func startHost(t *testing.T) client.Client {
	t.Helper()
	hub, _ := startHostWith(t, webhook.Options{})
	return hub
}

// startHostWith is startHost with the ResourceBinding and Work handlers
// configured by opts; it also returns the host, for clients of other users.
func startHostWith(t *testing.T, opts webhook.Options) (client.Client, *testenv.Cluster) {
	t.Helper()
	fleet := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	host := fleet.Clusters[0]
	ctx := t.Context()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, policyv1.AddToScheme, workv1.AddToScheme, configv1.AddToScheme, autoscalingv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	hub := controllertest.Host(t, host, scheme)
	port := testkit.FreePort(t)
	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	cert, ca, err := webhook.ServingCertificate(url)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Secrets == nil {
		opts.Secrets = hub
	}
	if opts.Quotas == nil {
		opts.Quotas = hub
	}
	controllertest.StartManager(t, host.RESTConfig(), ctrl.Options{
		Scheme: scheme,
		WebhookServer: crwebhook.NewServer(crwebhook.Options{
			Host: "127.0.0.1", Port: port,
			TLSOpts: []func(*tls.Config){func(c *tls.Config) {
				c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
			}},
		}),
	}, func(mgr manager.Manager) error {
		opts.Mapper = mgr.GetRESTMapper()
		webhook.Register(mgr.GetWebhookServer(), scheme, opts)
		return nil
	})
	if err := webhook.Install(ctx, hub, webhook.Config{URL: url, CABundle: ca}); err != nil {
		t.Fatal(err)
	}
	// The webhook is in force once the host sends a bad policy to it.
	probe := policyFromYAML(t, "probe", `spec: {resourceSelectors: []}`)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := hub.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "denied the request"), nil
	})
	if err != nil {
		t.Fatalf("webhook never answered: %v", err)
	}
	return hub, host
}

func policyFromYAML(t *testing.T, name, spec string) *policyv1.PropagationPolicy {
	t.Helper()
	p := &policyv1.PropagationPolicy{}
	if err := yaml.UnmarshalStrict([]byte(spec), p); err != nil {
		t.Fatal(err)
	}
	p.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: name}
	return p
}

// TestWebhookRefusesWhatTheEngineRefuses: a policy the engine would refuse
// is refused by the host with the engine's field path and message; a valid
// one is stored; an update that breaks a stored policy is refused too.
func TestWebhookRefusesWhatTheEngineRefuses(t *testing.T) {
	hub := startHost(t)
	ctx := t.Context()

	bad := policyFromYAML(t, "web", `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [a, b]}
    spreadConstraints:
    - {spreadByField: cluster, minGroups: 2, maxGroups: 1}
`)
	err := hub.Create(ctx, bad)
	want := `spec.placement.spreadConstraints[0].maxGroups: Invalid value: 1: maxGroups lower than minGroups is not allowed`
	if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("create of a policy with maxGroups < minGroups: got %v, want an Invalid error containing %q", err, want)
	}
	if !strings.Contains(err.Error(), `PropagationPolicy.policy.flotilla.io "web" is invalid`) {
		t.Errorf("error does not name the object: %v", err)
	}

	good := policyFromYAML(t, "web", `
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [a, b]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [a]}, weight: 1}
`)
	if err := hub.Create(ctx, good); err != nil {
		t.Fatalf("create of a valid policy: %v", err)
	}
	good.Spec.Placement.ReplicaScheduling.WeightPreference.StaticWeightList[0].Weight = 0
	err = hub.Update(ctx, good)
	want = `spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid value: 0: must be greater than or equal to 1`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("update to weight 0: got %v, want an error containing %q", err, want)
	}
	var stored policyv1.PropagationPolicy
	if err := hub.Get(ctx, client.ObjectKeyFromObject(good), &stored); err != nil {
		t.Fatal(err)
	}
	if w := stored.Spec.Placement.ReplicaScheduling.WeightPreference.StaticWeightList[0].Weight; w != 1 {
		t.Errorf("stored weight = %d after a refused update, want 1", w)
	}
	if err := hub.Delete(ctx, &stored); err != nil {
		t.Errorf("delete is never refused: %v", err)
	}
}
