package crossplane_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/package/crds"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// deadline bounds each wait; the machine is shared, so it is generous.
const deadline = 60 * time.Second

// fleetFleet is the fleet name of the control plane and the provider config.
const testFleet = "test"

// env is one apiserver that is both Crossplane's management cluster and the
// flotilla host (apiserver only, so templates are only stored there), with
// the control plane's reconcilers and the provider's running in-process,
// and three real member apiservers.
type env struct {
	mgmt    client.Client
	members map[string]client.Client
	fleet   []*testenv.Cluster
	names   []string
}

func startEnv(t *testing.T) env {
	t.Helper()
	return startEnvWith(t, 3)
}

// startEnvWith is startEnv with n members.
func startEnvWith(t *testing.T, n int) env {
	t.Helper()
	fleet := testenv.Start(t, testenv.Options{Clusters: 1 + n, Mode: testenv.APIServerOnly})
	mgmtCluster, members := fleet.Clusters[0], fleet.Clusters[1:]
	ctx := t.Context()

	scheme, err := crossplane.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := client.New(mgmtCluster.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := crd.Install(ctx, mgmt, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := crds.Install(ctx, mgmt, time.Minute); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(mgmtCluster.RESTConfig(), ctrl.Options{
		Client:                 controller.ClientOptions(),
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := controller.Setup(mgr, controller.Options{
		Fleet:            testFleet,
		ProbeInterval:    300 * time.Millisecond,
		FailureThreshold: time.Second,
		SuccessThreshold: time.Second,
		NoExecuteAfter:   2 * time.Second,
		Resync:           time.Second,
	}); err != nil {
		t.Fatal(err)
	}
	if err := crossplane.Setup(mgr, crossplane.Options{
		PollInterval: 2 * time.Second, PendingPollInterval: 500 * time.Millisecond, MaxReconcileRate: 100,
		InjectedIdentity: mgmtCluster.RESTConfig(),
	}); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	// The default ClusterProviderConfig: the host's kubeconfig in a Secret.
	mustCreate(t, mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crossplane-system"}})
	mustCreate(t, mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: "flotilla-host"},
		Data:       map[string][]byte{"kubeconfig": readFile(t, mgmtCluster.KubeconfigPath)},
	})
	mustCreate(t, mgmt, &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			Fleet: testFleet,
			Credentials: v1alpha1.ProviderCredentials{
				Source:    xpv2.CredentialsSourceSecret,
				SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "crossplane-system", Name: "flotilla-host"}, Key: "kubeconfig"},
			},
		},
	})
	clients := map[string]client.Client{}
	names := make([]string, len(members))
	for i, m := range members {
		c, err := client.New(m.RESTConfig(), client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		clients[m.Name], names[i] = c, m.Name
	}
	return env{mgmt: mgmt, members: clients, fleet: members, names: names}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func mustYAML(t *testing.T, into runtime.Object, format string, args ...any) {
	t.Helper()
	if err := yaml.Unmarshal(fmt.Appendf(nil, format, args...), into); err != nil {
		t.Fatal(err)
	}
}

// poll waits until f reports true; its last explanation is in the failure.
func poll(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(deadline)
	last := ""
	for time.Now().Before(end) {
		ok, why := f()
		if ok {
			return
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not reached within %v: %s", what, deadline, last)
}

// gone waits until obj no longer exists in c.
func gone(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	poll(t, fmt.Sprintf("%T %s gone", obj, obj.GetName()), func() (bool, string) {
		err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("err %v, finalizers %v", err, obj.GetFinalizers())
	})
}

// memberDeployments reads Deployment name from each member; nil where absent.
func memberDeployments(t *testing.T, members map[string]client.Client, name string) (map[string]*appsv1.Deployment, error) {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	for cluster, c := range members {
		var d appsv1.Deployment
		err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, &d)
		switch {
		case apierrors.IsNotFound(err):
			out[cluster] = nil
		case err != nil:
			return nil, err
		default:
			out[cluster] = &d
		}
	}
	return out, nil
}

// setReady plays the member's deployment controller, which APIServerOnly
// members do not run.
func setReady(t *testing.T, c client.Client, name string) {
	t.Helper()
	var d appsv1.Deployment
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, &d); err != nil {
		t.Fatal(err)
	}
	n := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	if err := c.Status().Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
}

// conditionOf reads a managed resource's condition of type ct.
func conditionOf(t *testing.T, c client.Client, mg interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}, ct xpv2.ConditionType,
) (xpv2.Condition, error) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(mg), mg); err != nil {
		return xpv2.Condition{}, err
	}
	return mg.GetCondition(ct), nil
}
