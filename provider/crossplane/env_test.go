package crossplane_test

import (
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
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

// startEnvWith is startEnv with the given number of members; tests of the
// host side alone need none.
func startEnvWith(t *testing.T, n int) env {
	t.Helper()
	fleet := testenv.Start(t, testenv.Options{Clusters: 1 + n, Mode: testenv.APIServerOnly})
	mgmtCluster, members := fleet.Clusters[0], fleet.Clusters[1:]
	ctx := t.Context()

	scheme, err := crossplane.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgmt := controllertest.Host(t, mgmtCluster, scheme)
	if err := crds.Install(ctx, mgmt, time.Minute); err != nil {
		t.Fatal(err)
	}
	controllertest.StartManager(t, mgmtCluster.RESTConfig(), ctrl.Options{Client: shared.ClientOptions(), Scheme: scheme},
		controllertest.SetupControlPlane(controllertest.Options(testFleet)),
		func(mgr manager.Manager) error {
			return crossplane.Setup(mgr, crossplane.Options{
				PollInterval: 2 * time.Second, PendingPollInterval: 500 * time.Millisecond, MaxReconcileRate: 100,
				InjectedIdentity: mgmtCluster.RESTConfig(),
			})
		})

	// The default ClusterProviderConfig: the host's kubeconfig in a Secret.
	testkit.MustCreate(t, mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crossplane-system"}})
	testkit.MustCreate(t, mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: "flotilla-host"},
		Data:       map[string][]byte{"kubeconfig": testkit.ReadFile(t, mgmtCluster.KubeconfigPath)},
	})
	testkit.MustCreate(t, mgmt, &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			Fleet: testFleet,
			Credentials: v1alpha1.ProviderCredentials{
				Source:    xpv2.CredentialsSourceSecret,
				SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "crossplane-system", Name: "flotilla-host"}, Key: "kubeconfig"},
			},
		},
	})
	clients, names := controllertest.MemberClients(t, members, scheme)
	return env{mgmt: mgmt, members: clients, fleet: members, names: names}
}

// poll waits until f reports true; its last explanation is in the failure.
func poll(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	testkit.Eventually(t, deadline, what, f)
}

// gone waits until obj no longer exists in c.
func gone(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	goneWithin(t, c, obj, deadline)
}

// goneWithin is gone with its own deadline.
func goneWithin(t *testing.T, c client.Client, obj client.Object, deadline time.Duration) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("%T %s gone", obj, obj.GetName()), func() (bool, string) {
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
// readyAndStatus reads a Manifest's Ready condition and its aggregated
// status as JSON ("" while it has none).
func readyAndStatus(t *testing.T, c client.Client, mr *v1alpha1.Manifest) (xpv2.Condition, string, error) {
	t.Helper()
	cond, err := conditionOf(t, c, mr, xpv2.TypeReady)
	if err != nil || mr.Status.AtProvider.Status == nil {
		return cond, "", err
	}
	return cond, string(mr.Status.AtProvider.Status.Raw), nil
}

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
