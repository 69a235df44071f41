package scheduler

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NoExecuteUntolerated decides, as Karmada's taint manager does
// (NoExecuteTaintManager.needEviction), whether the NoExecute taints of a
// cluster evict a template with these tolerations at now. Every NoExecute
// taint must be tolerated; the first toleration that tolerates a taint is
// the one used (GetMatchingTolerations). A used toleration with
// tolerationSeconds tolerates each NoExecute taint it matches only until
// the taint's timeAdded plus those seconds (GetMinTolerationTimeWithCurrentTime);
// a taint without timeAdded never runs out. It returns the taint that
// evicts, or nil and how long until one will (0: never). A zero now counts
// no time: tolerations never run out, which keeps a plan made without a
// clock (Terraform, preview) independent of when it is made.
func NoExecuteUntolerated(taints []corev1.Taint, tolerations []corev1.Toleration, now time.Time) (*corev1.Taint, time.Duration) {
	var noExecute []*corev1.Taint
	var used []*corev1.Toleration
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		noExecute = append(noExecute, t)
		var match *corev1.Toleration
		for j := range tolerations {
			if tolerates(&tolerations[j], t) {
				match = &tolerations[j]
				break
			}
		}
		if match == nil {
			return t, 0
		}
		used = append(used, match)
	}
	if now.IsZero() {
		return nil, 0
	}
	var first *corev1.Taint
	var trigger time.Time
	for _, tol := range used {
		if tol.TolerationSeconds == nil {
			continue
		}
		for _, t := range noExecute {
			if t.TimeAdded == nil || !tolerates(tol, t) {
				continue
			}
			at := t.TimeAdded.Add(time.Duration(*tol.TolerationSeconds) * time.Second)
			if first == nil || at.Before(trigger) {
				first, trigger = t, at
			}
		}
	}
	switch {
	case first == nil:
		return nil, 0
	case !trigger.After(now):
		return first, 0
	default:
		return nil, trigger.Sub(now)
	}
}
