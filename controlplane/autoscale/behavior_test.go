package autoscale

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

func ago(s int) time.Time { return now.Add(-time.Duration(s) * time.Second) }

func rules(window int32, sel autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window), SelectPolicy: ptr.To(sel), Policies: policies}
}

func pods(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: n, PeriodSeconds: period}
}

func percent(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: n, PeriodSeconds: period}
}

// TestNormalize: stabilization windows and scaling policies as the HPA
// controller applies them, with Kubernetes' default behavior.
func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      Input
		want    int32
		limited bool
		reason  string
	}{
		{name: "default scale-up: the larger of 4 pods or 100% per 15 s",
			in: Input{Current: 2, Desired: 20, Min: 1, Max: 100}, want: 6, limited: true, reason: "ScaleUpLimit"},
		{name: "default scale-up from 10: 100% wins over 4 pods",
			in: Input{Current: 10, Desired: 50, Min: 1, Max: 100}, want: 20, limited: true, reason: "ScaleUpLimit"},
		{name: "default scale-down waits for the highest recommendation of the last 300 s",
			in: Input{Current: 10, Desired: 2, Min: 1, Max: 100, Recommendations: []Recommendation{{8, ago(60)}, {3, ago(400)}}}, want: 8, reason: "DesiredWithinRange"},
		{name: "default scale-down after the window: 100% per 15 s, down to minReplicas",
			in: Input{Current: 10, Desired: 2, Min: 1, Max: 100, Recommendations: []Recommendation{{9, ago(400)}}}, want: 2, reason: "DesiredWithinRange"},
		{name: "a scale-up window takes the lowest recent recommendation",
			in: Input{Current: 3, Desired: 10, Min: 1, Max: 100, Recommendations: []Recommendation{{4, ago(30)}},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(60, autoscalingv2.MaxChangePolicySelect, pods(100, 15))}}, want: 4, reason: "DesiredWithinRange"},
		{name: "a pods policy counts what its period already removed",
			in: Input{Current: 9, Desired: 5, Min: 1, Max: 100, ScaleDowns: []ScaleEvent{{1, ago(30)}},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(0, autoscalingv2.MaxChangePolicySelect, pods(1, 60))}}, want: 9, limited: true, reason: "ScaleDownLimit"},
		{name: "a percent policy counts what its period already added",
			in: Input{Current: 6, Desired: 12, Min: 1, Max: 100, ScaleUps: []ScaleEvent{{2, ago(30)}},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.MaxChangePolicySelect, percent(50, 60))}}, want: 6, limited: true, reason: "ScaleUpLimit"},
		{name: "selectPolicy Min takes the smallest change",
			in: Input{Current: 10, Desired: 30, Min: 1, Max: 100,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, autoscalingv2.MinChangePolicySelect, pods(4, 15), percent(100, 15))}}, want: 14, limited: true, reason: "ScaleUpLimit"},
		{name: "selectPolicy Disabled never scales down",
			in: Input{Current: 10, Desired: 2, Min: 1, Max: 100,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(0, autoscalingv2.DisabledPolicySelect, percent(100, 15))}}, want: 10, limited: true, reason: "ScaleDownLimit"},
		{name: "maxReplicas bounds a scale-up the policies allow",
			in: Input{Current: 5, Desired: 50, Min: 1, Max: 8}, want: 8, limited: true, reason: "TooManyReplicas"},
		{name: "minReplicas bounds a scale-down",
			in: Input{Current: 5, Desired: 1, Min: 3, Max: 10, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(0, autoscalingv2.MaxChangePolicySelect, percent(100, 15))}}, want: 3, limited: true, reason: "TooFewReplicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = now
			got := Normalize(tc.in)
			if got.Replicas != tc.want || got.Limited != tc.limited || got.Reason != tc.reason {
				t.Fatalf("got %+v, want %d (limited %v, %s)", got, tc.want, tc.limited, tc.reason)
			}
		})
	}
}
