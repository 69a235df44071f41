package clusterstatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func TestOwnTaints(t *testing.T) {
	got := ownTaints([]corev1.Taint{
		{Key: "other", Effect: corev1.TaintEffectNoSchedule},
		{Key: api.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule},
		{Key: api.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute},
	})
	if want := api.TaintClusterUnreachable + ":NoSchedule, " + api.TaintClusterUnreachable + ":NoExecute"; got != want {
		t.Errorf("ownTaints = %q, want %q", got, want)
	}
}
