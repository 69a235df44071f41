package api

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// TestValidateFederatedHPA: each bad field is refused with its path, a
// valid autoscaler passes.
func TestValidateFederatedHPA(t *testing.T) {
	const target = "scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
	for _, tc := range []struct {
		name, spec string
		// want is "" for a valid spec, else the error's field path and a
		// part of its message.
		want, detail string
	}{
		{name: "valid", spec: target + `
minReplicas: 2
maxReplicas: 10
metrics:
- {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}
- {type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}}
- {type: Pods, pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: "10"}}}
behavior:
  scaleDown:
    stabilizationWindowSeconds: 300
    policies: [{type: Percent, value: 10, periodSeconds: 60}]
`},
		{name: "min over max", spec: target + "minReplicas: 5\nmaxReplicas: 3", want: "spec.maxReplicas", detail: "must be at least minReplicas (5)"},
		{name: "min below 1", spec: target + "minReplicas: 0\nmaxReplicas: 3", want: "spec.minReplicas", detail: "must be at least 1"},
		{name: "max unset", spec: target, want: "spec.maxReplicas", detail: "must be at least 1"},
		{name: "unknown metric type", spec: target + "maxReplicas: 3\nmetrics: [{type: Magic}]", want: "spec.metrics[0].type", detail: `Unsupported value: "Magic"`},
		{name: "type without its source", spec: target + "maxReplicas: 3\nmetrics: [{type: Resource}]", want: "spec.metrics[0].resource", detail: "Required value"},
		{name: "utilization of a pods metric", spec: target + "maxReplicas: 3\nmetrics: [{type: Pods, pods: {metric: {name: rps}, target: {type: Utilization, averageUtilization: 5}}}]", want: "spec.metrics[0].pods.target.type", detail: "Unsupported value"},
		{name: "utilization unset", spec: target + "maxReplicas: 3\nmetrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization}}}]", want: "spec.metrics[0].resource.target.averageUtilization", detail: "Required value"},
		{name: "target in another namespace", spec: "scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: other/web}\nmaxReplicas: 3", want: "spec.scaleTargetRef.name", detail: "another namespace is not allowed"},
		{name: "target without kind", spec: "scaleTargetRef: {apiVersion: apps/v1, name: web}\nmaxReplicas: 3", want: "spec.scaleTargetRef.kind", detail: "Required value"},
		{name: "target an autoscaler", spec: "scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: web}\nmaxReplicas: 3", want: "spec.scaleTargetRef.kind", detail: "not an autoscaler"},
		{name: "policy period too long", spec: target + "maxReplicas: 3\nbehavior: {scaleUp: {policies: [{type: Pods, value: 4, periodSeconds: 3600}]}}", want: "spec.behavior.scaleUp.policies[0].periodSeconds", detail: "between 1 and 1800"},
		{name: "unknown policy type", spec: target + "maxReplicas: 3\nbehavior: {scaleUp: {policies: [{type: Nodes, value: 4, periodSeconds: 60}]}}", want: "spec.behavior.scaleUp.policies[0].type", detail: "Unsupported value"},
		{name: "window too long", spec: target + "maxReplicas: 3\nbehavior: {scaleDown: {stabilizationWindowSeconds: 7200}}", want: "spec.behavior.scaleDown.stabilizationWindowSeconds", detail: "between 0 and 3600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := FederatedHPA{}
			h.Namespace, h.Name = "shop", "web"
			if err := yaml.UnmarshalStrict([]byte(tc.spec), &h.Spec); err != nil {
				t.Fatal(err)
			}
			checkErrors(t, ValidateFederatedHPA(&h).ToAggregate(), tc.want, tc.detail)
		})
	}
}

// TestValidateCronFederatedHPA: schedules, time zones, targets and the
// replicas each target takes are checked field by field.
func TestValidateCronFederatedHPA(t *testing.T) {
	const deploy = "scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
	const fhpa = "scaleTargetRef: {apiVersion: autoscaling.flotilla.io/v1alpha1, kind: FederatedHPA, name: web}\n"
	for _, tc := range []struct {
		name, spec   string
		want, detail string
	}{
		{name: "valid workload rule", spec: deploy + `rules: [{name: peak, schedule: "0 8 * * 1-5", timeZone: Europe/Paris, targetReplicas: 10, successfulHistoryLimit: 5, failedHistoryLimit: 0}]`},
		{name: "valid descriptor, scale to zero", spec: deploy + `rules: [{name: night, schedule: "@daily", targetReplicas: 0}]`},
		{name: "valid FederatedHPA rule (Karmada's group)", spec: `scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: web}
rules: [{name: peak, schedule: "*/5 * * * *", targetMinReplicas: 4}]`},
		{name: "bad schedule", spec: deploy + `rules: [{name: peak, schedule: "every morning", targetReplicas: 1}]`, want: "spec.rules[0].schedule", detail: "not a cron schedule"},
		{name: "seconds field", spec: deploy + `rules: [{name: peak, schedule: "*/10 * * * * *", targetReplicas: 1}]`, want: "spec.rules[0].schedule", detail: "not a cron schedule"},
		{name: "time zone in the schedule", spec: deploy + `rules: [{name: peak, schedule: "CRON_TZ=Asia/Tokyo 0 8 * * *", targetReplicas: 1}]`, want: "spec.rules[0].schedule", detail: "name the time zone in timeZone"},
		{name: "bad time zone", spec: deploy + `rules: [{name: peak, schedule: "0 8 * * *", timeZone: Mars/Olympus, targetReplicas: 1}]`, want: "spec.rules[0].timeZone", detail: `unknown time zone "Mars/Olympus"`},
		{name: "Local time zone", spec: deploy + `rules: [{name: peak, schedule: "0 8 * * *", timeZone: Local, targetReplicas: 1}]`, want: "spec.rules[0].timeZone", detail: "control plane machine's"},
		{name: "duplicate rule name", spec: deploy + `rules: [{name: a, schedule: "@hourly", targetReplicas: 1}, {name: a, schedule: "@daily", targetReplicas: 2}]`, want: "spec.rules[1].name", detail: "Duplicate value"},
		{name: "no rules", spec: deploy + `rules: []`, want: "spec.rules", detail: "at least one rule"},
		{name: "workload without targetReplicas", spec: deploy + `rules: [{name: a, schedule: "@hourly"}]`, want: "spec.rules[0].targetReplicas", detail: "the replicas to scale the Deployment to"},
		{name: "workload with bounds", spec: deploy + `rules: [{name: a, schedule: "@hourly", targetReplicas: 1, targetMaxReplicas: 4}]`, want: "spec.rules[0].targetMaxReplicas", detail: "only for a FederatedHPA target"},
		{name: "negative replicas", spec: deploy + `rules: [{name: a, schedule: "@hourly", targetReplicas: -1}]`, want: "spec.rules[0].targetReplicas", detail: "must be at least 0"},
		{name: "FederatedHPA with targetReplicas", spec: fhpa + `rules: [{name: a, schedule: "@hourly", targetReplicas: 3}]`, want: "spec.rules[0].targetReplicas", detail: "takes targetMinReplicas and targetMaxReplicas"},
		{name: "FederatedHPA without bounds", spec: fhpa + `rules: [{name: a, schedule: "@hourly"}]`, want: "spec.rules[0].targetMaxReplicas", detail: "Required value"},
		{name: "FederatedHPA min over max", spec: fhpa + `rules: [{name: a, schedule: "@hourly", targetMinReplicas: 5, targetMaxReplicas: 2}]`, want: "spec.rules[0].targetMinReplicas", detail: "must not exceed targetMaxReplicas (2)"},
		{name: "other autoscaling kind", spec: `scaleTargetRef: {apiVersion: autoscaling.flotilla.io/v1alpha1, kind: CronFederatedHPA, name: web}
rules: [{name: a, schedule: "@hourly", targetMinReplicas: 1}]`, want: "spec.scaleTargetRef.kind", detail: "Unsupported value"},
		{name: "target in another namespace", spec: `scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: kube-system/coredns}
rules: [{name: a, schedule: "@hourly", targetReplicas: 0}]`, want: "spec.scaleTargetRef.name", detail: "another namespace is not allowed"},
		{name: "history limit out of range", spec: deploy + `rules: [{name: a, schedule: "@hourly", targetReplicas: 1, successfulHistoryLimit: 0}]`, want: "spec.rules[0].successfulHistoryLimit", detail: "between 1 and 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CronFederatedHPA{}
			c.Namespace, c.Name = "shop", "web"
			if err := yaml.UnmarshalStrict([]byte(tc.spec), &c.Spec); err != nil {
				t.Fatal(err)
			}
			checkErrors(t, ValidateCronFederatedHPA(&c).ToAggregate(), tc.want, tc.detail)
		})
	}
}

func checkErrors(t *testing.T, err error, want, detail string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("valid spec refused: %v", err)
	case want == "":
	case err == nil:
		t.Fatalf("accepted, want %s refused (%s)", want, detail)
	case !strings.Contains(err.Error(), want+": ") || !strings.Contains(err.Error(), detail):
		t.Fatalf("error %q, want field %s with %q", err, want, detail)
	}
}

// TestIsAutoscalingKind: both groups' kinds are recognised, the built-in
// HorizontalPodAutoscaler is an ordinary template.
func TestIsAutoscalingKind(t *testing.T) {
	for gk, want := range map[schema.GroupKind]bool{
		{Group: AutoscalingGroup, Kind: KindFederatedHPA}:             true,
		{Group: FlotillaAutoscalingGroup, Kind: KindCronFederatedHPA}: true,
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:       false,
		{Group: AutoscalingGroup, Kind: "Other"}:                      false,
	} {
		if got := IsAutoscalingKind(gk); got != want {
			t.Errorf("IsAutoscalingKind(%v) = %v, want %v", gk, got, want)
		}
	}
}
