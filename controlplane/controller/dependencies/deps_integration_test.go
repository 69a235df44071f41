package dependencies_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestPropagateDeps runs the dependencies distributor against a real host
// and three real members: a Deployment claimed with propagateDeps and
// divided over two members takes the ConfigMap and the Secret it refers to,
// which no policy claims, to exactly its members; an edit of the ConfigMap
// follows; moving the Deployment moves them and prunes the member it left;
// deleting the Deployment removes them from the members and deletes their
// attached bindings.
func TestPropagateDeps(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()

	pp := controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(names[:2]...).Divided(api.ReplicaDivisionPreferenceWeighted).PropagateDeps())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env"}, Data: map[string]string{"mode": "blue"}}
	testkit.MustCreate(t, hub, cm)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-tls"}, Data: map[string][]byte{"mode": []byte("blue")}}
	testkit.MustCreate(t, hub, secret)
	testkit.MustCreate(t, hub, dependentDeployment())

	t.Log("propagate: the dependencies reach the Deployment's two members only")
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: 2, names[1]: 2, names[2]: -1})
	waitDependencies(t, env, map[string]bool{names[0]: true, names[1]: true, names[2]: false}, "blue")
	for _, name := range []string{"web-env-configmap", "web-tls-secret"} {
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &rb); err != nil {
			t.Fatal(err)
		}
		if rb.Labels[shared.LabelAttached] != "true" || rb.Spec.Placement != nil {
			t.Errorf("binding %s: labels %v placement %v, want an attached binding without placement", name, rb.Labels, rb.Spec.Placement)
		}
		if len(rb.Spec.RequiredBy) != 1 || rb.Spec.RequiredBy[0].Name != "web-deployment.apps" {
			t.Errorf("binding %s: requiredBy %+v, want web-deployment.apps", name, rb.Spec.RequiredBy)
		}
	}

	t.Log("edits of the ConfigMap and of the Secret (not a template kind) reach the members")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(cm), cm, func() {
		cm.Data["mode"] = "green"
	})
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(secret), secret, func() {
		secret.Data["mode"] = []byte("green")
	})
	waitDependencies(t, env, map[string]bool{names[0]: true, names[1]: true, names[2]: false}, "green")

	t.Log("move: the dependencies follow the Deployment and leave the first member")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{names[1], names[2]}
	})
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: -1, names[1]: 2, names[2]: 2})
	waitDependencies(t, env, map[string]bool{names[0]: false, names[1]: true, names[2]: true}, "green")

	t.Log("delete: the dependencies leave the members and their bindings go")
	if err := hub.Delete(ctx, dependentDeployment()); err != nil {
		t.Fatal(err)
	}
	waitDependencies(t, env, map[string]bool{names[0]: false, names[1]: false, names[2]: false}, "")
	testkit.Eventually(t, controllertest.Deadline, "attached bindings deleted", func() (bool, string) {
		var list workv1.ResourceBindingList
		if err := hub.List(ctx, &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		var left []string
		for _, rb := range list.Items {
			left = append(left, rb.Name)
		}
		return len(left) == 0, fmt.Sprintf("bindings %v", left)
	})
	for _, obj := range []client.Object{cm, secret} {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("dependency %s on the host: %v", obj.GetName(), err)
		}
	}
}

// dependentDeployment is a Deployment of 4 replicas whose pods take their
// environment from ConfigMap web-env and mount Secret web-tls.
func dependentDeployment() *appsv1.Deployment {
	d := controllertest.Deployment(4)
	spec := &d.Spec.Template.Spec
	spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-env"}}}}
	spec.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "web-tls"}}}}
	return d
}

// waitDependencies waits until ConfigMap web-env and Secret web-tls, both
// with data mode=mode, exist on the members marked true and on no other.
func waitDependencies(t *testing.T, env controllertest.Fleet, want map[string]bool, mode string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("dependencies on %v", want), func() (bool, string) {
		for name, present := range want {
			c := env.Members[name]
			var cm corev1.ConfigMap
			cmErr := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web-env"}, &cm)
			var sec corev1.Secret
			secErr := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web-tls"}, &sec)
			for _, err := range []error{cmErr, secErr} {
				if err != nil && !apierrors.IsNotFound(err) {
					return false, fmt.Sprintf("%s: %v", name, err)
				}
			}
			if present && (cmErr != nil || secErr != nil || cm.Data["mode"] != mode || string(sec.Data["mode"]) != mode) {
				return false, fmt.Sprintf("%s: configmap %v (mode %q), secret %v (mode %q)", name, cmErr, cm.Data["mode"], secErr, sec.Data["mode"])
			}
			if !present && (cmErr == nil || secErr == nil) {
				return false, fmt.Sprintf("%s: dependencies still there (configmap %v, secret %v)", name, cmErr, secErr)
			}
		}
		return true, ""
	})
}
