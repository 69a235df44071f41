package api_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func TestIsClusterStatusTaint(t *testing.T) {
	cases := map[string]bool{
		"cluster.karmada.io/not-ready":     true,
		"cluster.karmada.io/unreachable":   true,
		"cluster.karmada.io/other":         false,
		"node.kubernetes.io/not-ready":     false,
		"dedicated":                        false,
		"":                                 false,
		"cluster.karmada.io/not-ready/sub": false,
	}
	for key, want := range cases {
		if got := api.IsClusterStatusTaint(key); got != want {
			t.Errorf("IsClusterStatusTaint(%q) = %t, want %t", key, got, want)
		}
	}
}

func TestNotReadyStatus(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	refused := fmt.Errorf("cluster east is %w: connection refused", api.ErrNotConnected)
	cases := map[string]struct {
		reason string
		err    error
		at     metav1.Time
		want   api.ClusterStatus
	}{
		"unreachable": {
			reason: api.ReasonClusterNotReachable, err: refused, at: at,
			want: api.ClusterStatus{Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionFalse, Reason: "ClusterNotReachable",
				Message: "cluster east is not connected: connection refused", LastTransitionTime: at,
			}}},
		},
		"membership conflict, no time": {
			reason: api.ReasonMembershipConflict, err: errors.New(`already registered as "m"`),
			want: api.ClusterStatus{Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionFalse, Reason: "MembershipConflict", Message: `already registered as "m"`,
			}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, api.NotReadyStatus(tc.reason, tc.err, tc.at)); diff != "" {
				t.Errorf("NotReadyStatus (-want +got):\n%s", diff)
			}
		})
	}
}
