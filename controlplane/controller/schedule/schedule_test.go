package schedule

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

func TestRescheduleRequested(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(t0.Add(d)); return &m }
	tests := []struct {
		name      string
		triggered *metav1.Time
		last      *metav1.Time
		want      bool
	}{
		{name: "no request", last: at(0)},
		{name: "request before the last schedule is served", triggered: at(-time.Second), last: at(0)},
		{name: "request after the last schedule", triggered: at(time.Second), last: at(0), want: true},
		{name: "request in the same stored second", triggered: at(0), last: at(0), want: true},
		{name: "never scheduled", triggered: at(0), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := &workv1.ResourceBinding{}
			rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime = tt.triggered, tt.last
			if got := rescheduleRequested(rb); got != tt.want {
				t.Errorf("rescheduleRequested = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRescheduleSettle(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	trig := metav1.NewTime(t0)
	tests := []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		{name: "same second waits for the next", now: t0.Add(300 * time.Millisecond), want: 700 * time.Millisecond},
		{name: "a later second is past the request", now: t0.Add(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rescheduleSettle(&trig, tt.now); got != tt.want {
				t.Errorf("rescheduleSettle = %v, want %v", got, tt.want)
			}
		})
	}
	if got := rescheduleSettle(nil, t0); got != 0 {
		t.Errorf("without a request: %v, want 0", got)
	}
}
