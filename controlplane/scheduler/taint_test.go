package scheduler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestNoExecuteUntolerated follows Karmada's
// NoExecuteTaintManager.needEvictionWithCurrentTime, with
// helper.GetMatchingTolerations and helper.GetMinTolerationTimeWithCurrentTime.
func TestNoExecuteUntolerated(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	taint := func(key string, added *time.Time) corev1.Taint {
		tt := corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}
		if added != nil {
			tt.TimeAdded = &metav1.Time{Time: *added}
		}
		return tt
	}
	tol := func(key string, seconds *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
	}
	notReady := taint("not-ready", &t0)
	cases := []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		now         time.Time
		wantKey     string
		wantWait    time.Duration
	}{
		{name: "no NoExecute taint", taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}, now: t0},
		{name: "untolerated", taints: []corev1.Taint{notReady}, now: t0, wantKey: "not-ready"},
		{name: "tolerated for good", taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{tol("not-ready", nil)}, now: t0.Add(time.Hour)},
		{name: "tolerated for 300s, 100s in", taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{tol("not-ready", ptr.To[int64](300))},
			now: t0.Add(100 * time.Second), wantWait: 200 * time.Second},
		{name: "tolerated for 300s, exactly up", taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{tol("not-ready", ptr.To[int64](300))},
			now: t0.Add(300 * time.Second), wantKey: "not-ready"},
		{name: "tolerated for 300s, past", taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{tol("not-ready", ptr.To[int64](300))},
			now: t0.Add(time.Hour), wantKey: "not-ready"},
		{name: "no clock: never runs out", taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{tol("not-ready", ptr.To[int64](0))}},
		{name: "taint without timeAdded never runs out", taints: []corev1.Taint{taint("not-ready", nil)}, tolerations: []corev1.Toleration{tol("not-ready", ptr.To[int64](0))},
			now: t0.Add(time.Hour)},
		// GetMatchingTolerations uses the first toleration that matches:
		// a later one for good does not extend it.
		{name: "first matching toleration is used", taints: []corev1.Taint{notReady},
			tolerations: []corev1.Toleration{tol("not-ready", ptr.To[int64](60)), tol("not-ready", nil)}, now: t0.Add(2 * time.Minute), wantKey: "not-ready"},
		// A used toleration counts against every NoExecute taint it
		// matches; the earliest trigger decides.
		{name: "earliest trigger over taints", taints: []corev1.Taint{taint("a", ptr.To(t0.Add(time.Minute))), taint("b", &t0)},
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](120)}},
			now:         t0.Add(150 * time.Second), wantKey: "b"},
		{name: "one of two taints untolerated", taints: []corev1.Taint{notReady, taint("unreachable", &t0)},
			tolerations: []corev1.Toleration{tol("not-ready", nil)}, now: t0, wantKey: "unreachable"},
	}
	for _, tc := range cases {
		got, wait := NoExecuteUntolerated(tc.taints, tc.tolerations, tc.now)
		key := ""
		if got != nil {
			key = got.Key
		}
		if key != tc.wantKey || wait != tc.wantWait {
			t.Errorf("%s: NoExecuteUntolerated = %q, %v; want %q, %v", tc.name, key, wait, tc.wantKey, tc.wantWait)
		}
	}
}
