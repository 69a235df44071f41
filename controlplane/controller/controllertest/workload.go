package controllertest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Deadline bounds every wait of the integration tests: with Options' short
// periods, a state that takes longer than this is not coming.
const Deadline = 30 * time.Second

// Deployment is Deployment default/web (label app=web, image nginx) with
// the replicas given: the template most integration tests propagate.
func Deployment(replicas int32) *appsv1.Deployment {
	d := NamedDeployment("web")
	d.Spec.Replicas = ptr.To(replicas)
	return d
}

// NamedDeployment is a one-replica Deployment in default, labelled and
// with a container named after it.
func NamedDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "nginx"}}},
			},
		},
	}
}

// SetReady plays the member's deployment controller, which APIServerOnly
// members do not run, once: Deployment default/web reports n replicas
// ready and available.
func SetReady(t testing.TB, c client.Client, n int32) {
	t.Helper()
	var d appsv1.Deployment
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	if err := c.Status().Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
}

// PlayDeploymentController writes the status of Deployment default/web in an
// APIServerOnly member until the test ends, as its deployment controller
// would: every replica available while healthy is set, none otherwise.
func PlayDeploymentController(t testing.TB, c client.Client, healthy *atomic.Bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var d appsv1.Deployment
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				continue
			}
			n := ptr.Deref(d.Spec.Replicas, 1)
			want := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
			if !healthy.Load() {
				want.ReadyReplicas, want.AvailableReplicas, want.UnavailableReplicas = 0, 0, n
			}
			if equality.Semantic.DeepEqual(d.Status, want) {
				continue
			}
			d.Status = want
			// A conflict or an outage is retried on the next tick.
			_ = c.Status().Update(ctx, &d)
		}
	}()
}

// SetImage changes the image of template Deployment default/web on the
// host.
func SetImage(t testing.TB, hub client.Client, image string) {
	t.Helper()
	var d appsv1.Deployment
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	orig := d.DeepCopy()
	d.Spec.Template.Spec.Containers[0].Image = image
	if err := hub.Patch(t.Context(), &d, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// WaitReplicas waits until each member's Deployment web has the given
// replicas; -1 means it must not exist.
func WaitReplicas(t testing.TB, clients map[string]client.Client, want map[string]int32) {
	t.Helper()
	WaitReplicasWithin(t, Deadline, clients, want)
}

// WaitReplicasWithin is WaitReplicas with its own deadline, for states
// that wait on something slower than the control plane (fresh metrics).
func WaitReplicasWithin(t testing.TB, deadline time.Duration, clients map[string]client.Client, want map[string]int32) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("replicas %v", want), func() (bool, string) {
		got := map[string]int32{}
		for name, c := range clients {
			var d appsv1.Deployment
			err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d)
			switch {
			case apierrors.IsNotFound(err):
				got[name] = -1
			case err != nil:
				return false, err.Error()
			default:
				got[name] = ptr.Deref(d.Spec.Replicas, 1)
			}
		}
		for name, n := range want {
			if got[name] != n {
				return false, fmt.Sprintf("got %v", got)
			}
		}
		return true, ""
	})
}

// WaitPlaced waits until the Deployment name exists on cluster only.
func WaitPlaced(t testing.TB, members map[string]client.Client, name, cluster string) {
	t.Helper()
	testkit.Eventually(t, Deadline, fmt.Sprintf("%s only on %s", name, cluster), func() (bool, string) {
		var on []string
		for m, c := range members {
			var d appsv1.Deployment
			err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, &d)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return false, err.Error()
			default:
				on = append(on, m)
			}
		}
		return len(on) == 1 && on[0] == cluster, fmt.Sprintf("on %v", on)
	})
}
