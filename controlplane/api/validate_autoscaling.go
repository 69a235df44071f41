package api

import (
	"fmt"
	"strings"
	"time"
	// The time zones are the same on every machine the control plane runs
	// on, also in an image without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// IsAutoscalingKind reports whether gk is FederatedHPA or CronFederatedHPA,
// in Karmada's group or flotilla's: kinds only the continuous control
// plane acts on.
func IsAutoscalingKind(gk schema.GroupKind) bool {
	return (gk.Group == AutoscalingGroup || gk.Group == FlotillaAutoscalingGroup) &&
		(gk.Kind == KindFederatedHPA || gk.Kind == KindCronFederatedHPA)
}

// ErrAutoscalingContinuousOnly is why the synchronous driver (Terraform,
// preview) refuses FederatedHPA and CronFederatedHPA.
var ErrAutoscalingContinuousOnly = fmt.Errorf("FederatedHPA and CronFederatedHPA scale a template between runs (on the members' live metrics, or on a schedule), which only the continuous control plane does; a plan cannot show them and an apply would not keep them acting")

// ValidateFederatedHPA checks a FederatedHPA as Kubernetes validates an
// autoscaling/v2 HorizontalPodAutoscaler (Karmada's webhook does the same):
// the target in the object's own namespace, 1 <= minReplicas <= maxReplicas,
// metrics of a known type with a valid target, behavior policies in range.
func ValidateFederatedHPA(h *FederatedHPA) field.ErrorList {
	var errs field.ErrorList
	if h.Namespace == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), "a FederatedHPA scales a template of its own namespace"))
	}
	spec := field.NewPath("spec")
	errs = append(errs, validateScaleTargetRef(h.Spec.ScaleTargetRef, spec.Child("scaleTargetRef"))...)
	if isAutoscalingGroup(h.Spec.ScaleTargetRef.APIVersion) {
		errs = append(errs, field.Invalid(spec.Child("scaleTargetRef", "kind"), h.Spec.ScaleTargetRef.Kind, "a FederatedHPA scales a workload template, not an autoscaler"))
	}
	minReplicas := int32(1)
	if h.Spec.MinReplicas != nil {
		minReplicas = *h.Spec.MinReplicas
		if minReplicas < 1 {
			errs = append(errs, field.Invalid(spec.Child("minReplicas"), minReplicas, "must be at least 1"))
		}
	}
	if h.Spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(spec.Child("maxReplicas"), h.Spec.MaxReplicas, "must be at least 1"))
	} else if h.Spec.MaxReplicas < minReplicas {
		errs = append(errs, field.Invalid(spec.Child("maxReplicas"), h.Spec.MaxReplicas, fmt.Sprintf("must be at least minReplicas (%d)", minReplicas)))
	}
	for i, m := range h.Spec.Metrics {
		errs = append(errs, validateMetricSpec(m, spec.Child("metrics").Index(i))...)
	}
	if b := h.Spec.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, spec.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, spec.Child("behavior", "scaleDown"))...)
	}
	return errs
}

// ValidateCronFederatedHPA checks a CronFederatedHPA as Karmada's webhook
// does, and a little more: the target in the object's own namespace; rule
// names unique; a schedule the controller's cron parser reads (five fields
// or a descriptor, no time zone inside it); a time zone of the IANA
// database; targetReplicas (>= 0) for a workload target, and
// targetMinReplicas/targetMaxReplicas (>= 1, min <= max) for a
// FederatedHPA target, never the other pair; history limits in range.
func ValidateCronFederatedHPA(c *CronFederatedHPA) field.ErrorList {
	var errs field.ErrorList
	if c.Namespace == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), "a CronFederatedHPA scales an object of its own namespace"))
	}
	spec := field.NewPath("spec")
	ref := c.Spec.ScaleTargetRef
	errs = append(errs, validateScaleTargetRef(ref, spec.Child("scaleTargetRef"))...)
	scalesHPA := isAutoscalingGroup(ref.APIVersion)
	if scalesHPA && ref.Kind != KindFederatedHPA {
		errs = append(errs, field.NotSupported(spec.Child("scaleTargetRef", "kind"), ref.Kind, []string{KindFederatedHPA}))
	}
	rules := spec.Child("rules")
	if len(c.Spec.Rules) == 0 {
		errs = append(errs, field.Required(rules, "at least one rule"))
	}
	names := sets.New[string]()
	for i, r := range c.Spec.Rules {
		p := rules.Index(i)
		switch {
		case r.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case len(r.Name) > 32:
			errs = append(errs, field.TooLong(p.Child("name"), r.Name, 32))
		case names.Has(r.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		names.Insert(r.Name)
		if _, err := ParseCronSchedule(r.Schedule); err != nil {
			errs = append(errs, field.Invalid(p.Child("schedule"), r.Schedule, err.Error()))
		}
		if r.TimeZone != nil {
			if _, err := LoadTimeZone(r.TimeZone); err != nil {
				errs = append(errs, field.Invalid(p.Child("timeZone"), *r.TimeZone, err.Error()))
			}
		}
		errs = append(errs, validateRuleReplicas(r, scalesHPA, ref.Kind, p)...)
		if l := r.SuccessfulHistoryLimit; l != nil && (*l < 1 || *l > MaxHistoryLimit) {
			errs = append(errs, field.Invalid(p.Child("successfulHistoryLimit"), *l, fmt.Sprintf("must be between 1 and %d", MaxHistoryLimit)))
		}
		if l := r.FailedHistoryLimit; l != nil && (*l < 0 || *l > MaxHistoryLimit) {
			errs = append(errs, field.Invalid(p.Child("failedHistoryLimit"), *l, fmt.Sprintf("must be between 0 and %d", MaxHistoryLimit)))
		}
	}
	return errs
}

// ScalesFederatedHPA reports whether a CronFederatedHPA's target is a
// FederatedHPA (its bounds are scaled) rather than a workload template.
func ScalesFederatedHPA(ref autoscalingv2.CrossVersionObjectReference) bool {
	return isAutoscalingGroup(ref.APIVersion) && ref.Kind == KindFederatedHPA
}

// cronParser reads the schedules: Kubernetes CronJob's syntax, five
// fields or a descriptor (@hourly, @every 1h30m). Karmada's scheduler reads
// the same five fields; seconds are not accepted, so a rule that runs in
// Karmada runs here at the same minutes.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCronSchedule reads a rule's schedule. A time zone inside it
// (CRON_TZ= or TZ=) is refused: the rule's timeZone says it, once.
func ParseCronSchedule(schedule string) (cron.Schedule, error) {
	s := strings.TrimSpace(schedule)
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return nil, fmt.Errorf("name the time zone in timeZone, not in the schedule")
	}
	sched, err := cronParser.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("not a cron schedule (five fields: minute hour day-of-month month day-of-week, or a descriptor such as @hourly): %w", err)
	}
	return sched, nil
}

// LoadTimeZone is a rule's time zone: UTC when unset, else the IANA zone it
// names. "Local" and "" are refused: they would mean the control plane
// machine's zone, which differs between replicas and hosts.
func LoadTimeZone(tz *string) (*time.Location, error) {
	if tz == nil {
		return time.UTC, nil
	}
	if *tz == "" || *tz == "Local" {
		return nil, fmt.Errorf("name an IANA time zone such as Europe/Paris; %q would be the control plane machine's", *tz)
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (an IANA name such as Europe/Paris)", *tz)
	}
	return loc, nil
}

func isAutoscalingGroup(apiVersion string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && (gv.Group == AutoscalingGroup || gv.Group == FlotillaAutoscalingGroup)
}

// validateScaleTargetRef checks a target reference. It has no namespace:
// the target is always in the autoscaler's own namespace, so a name with
// a slash (another namespace's object, "other/web") is refused by name.
func validateScaleTargetRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if ref.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	switch {
	case ref.Name == "":
		errs = append(errs, field.Required(p.Child("name"), ""))
	case strings.Contains(ref.Name, "/"):
		errs = append(errs, field.Invalid(p.Child("name"), ref.Name, "must name an object of this object's own namespace; a scale target in another namespace is not allowed"))
	default:
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

// metricTypes are the metric source types of autoscaling/v2.
var metricTypes = []string{
	string(autoscalingv2.ResourceMetricSourceType), string(autoscalingv2.ContainerResourceMetricSourceType),
	string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ObjectMetricSourceType),
	string(autoscalingv2.ExternalMetricSourceType),
}

// validateMetricSpec checks one metric: a known type whose source, and only
// that one, is set, with a valid target.
func validateMetricSpec(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := 0
	for _, present := range []bool{m.Resource != nil, m.ContainerResource != nil, m.Pods != nil, m.Object != nil, m.External != nil} {
		if present {
			set++
		}
	}
	if set > 1 {
		errs = append(errs, field.Forbidden(p, "set only the source of the metric's type"))
	}
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if m.Resource == nil {
			return append(errs, field.Required(p.Child("resource"), "for type Resource"))
		}
		if m.Resource.Name == "" {
			errs = append(errs, field.Required(p.Child("resource", "name"), ""))
		}
		errs = append(errs, validateMetricTarget(m.Resource.Target, true, p.Child("resource", "target"))...)
	case autoscalingv2.ContainerResourceMetricSourceType:
		if m.ContainerResource == nil {
			return append(errs, field.Required(p.Child("containerResource"), "for type ContainerResource"))
		}
		if m.ContainerResource.Name == "" {
			errs = append(errs, field.Required(p.Child("containerResource", "name"), ""))
		}
		if m.ContainerResource.Container == "" {
			errs = append(errs, field.Required(p.Child("containerResource", "container"), ""))
		}
		errs = append(errs, validateMetricTarget(m.ContainerResource.Target, true, p.Child("containerResource", "target"))...)
	case autoscalingv2.PodsMetricSourceType:
		if m.Pods == nil {
			return append(errs, field.Required(p.Child("pods"), "for type Pods"))
		}
		if m.Pods.Metric.Name == "" {
			errs = append(errs, field.Required(p.Child("pods", "metric", "name"), ""))
		}
		if m.Pods.Target.Type != autoscalingv2.AverageValueMetricType {
			errs = append(errs, field.NotSupported(p.Child("pods", "target", "type"), m.Pods.Target.Type, []string{string(autoscalingv2.AverageValueMetricType)}))
		}
		errs = append(errs, validateMetricTarget(m.Pods.Target, false, p.Child("pods", "target"))...)
	case autoscalingv2.ObjectMetricSourceType:
		if m.Object == nil {
			return append(errs, field.Required(p.Child("object"), "for type Object"))
		}
		if m.Object.Metric.Name == "" {
			errs = append(errs, field.Required(p.Child("object", "metric", "name"), ""))
		}
		errs = append(errs, validateScaleTargetRef(m.Object.DescribedObject, p.Child("object", "describedObject"))...)
		errs = append(errs, validateMetricTarget(m.Object.Target, false, p.Child("object", "target"))...)
	case autoscalingv2.ExternalMetricSourceType:
		if m.External == nil {
			return append(errs, field.Required(p.Child("external"), "for type External"))
		}
		if m.External.Metric.Name == "" {
			errs = append(errs, field.Required(p.Child("external", "metric", "name"), ""))
		}
		errs = append(errs, validateMetricTarget(m.External.Target, false, p.Child("external", "target"))...)
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricTypes))
	}
	return errs
}

// validateMetricTarget checks a target: a known type with its value set
// and positive. Utilization is only for resources.
func validateMetricTarget(t autoscalingv2.MetricTarget, resource bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t.Type {
	case autoscalingv2.UtilizationMetricType:
		if !resource {
			return append(errs, field.NotSupported(p.Child("type"), t.Type, []string{string(autoscalingv2.ValueMetricType), string(autoscalingv2.AverageValueMetricType)}))
		}
		if t.AverageUtilization == nil || *t.AverageUtilization < 1 {
			errs = append(errs, field.Required(p.Child("averageUtilization"), "a percentage of at least 1 for type Utilization"))
		}
	case autoscalingv2.AverageValueMetricType:
		if t.AverageValue == nil || t.AverageValue.Sign() <= 0 {
			errs = append(errs, field.Required(p.Child("averageValue"), "a positive quantity for type AverageValue"))
		}
	case autoscalingv2.ValueMetricType:
		if resource {
			return append(errs, field.NotSupported(p.Child("type"), t.Type, []string{string(autoscalingv2.UtilizationMetricType), string(autoscalingv2.AverageValueMetricType)}))
		}
		if t.Value == nil || t.Value.Sign() <= 0 {
			errs = append(errs, field.Required(p.Child("value"), "a positive quantity for type Value"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, []string{string(autoscalingv2.UtilizationMetricType), string(autoscalingv2.ValueMetricType), string(autoscalingv2.AverageValueMetricType)}))
	}
	return errs
}

// validateScalingRules checks one direction's behavior as Kubernetes
// does: a stabilization window of at most an hour, policies of type Pods or
// Percent with a positive value and a period of 1 to 1800 seconds.
func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > 3600) {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be between 0 and 3600"))
	}
	if s := r.SelectPolicy; s != nil && *s != autoscalingv2.MaxChangePolicySelect && *s != autoscalingv2.MinChangePolicySelect && *s != autoscalingv2.DisabledPolicySelect {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *s, []string{string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect), string(autoscalingv2.DisabledPolicySelect)}))
	}
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, []string{string(autoscalingv2.PodsScalingPolicy), string(autoscalingv2.PercentScalingPolicy)}))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than 0"))
		}
		if pol.PeriodSeconds <= 0 || pol.PeriodSeconds > 1800 {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, "must be between 1 and 1800"))
		}
	}
	return errs
}

// validateRuleReplicas checks a rule's replicas against its target: a
// FederatedHPA target takes bounds, a workload takes replicas.
func validateRuleReplicas(r CronFederatedHPARule, scalesHPA bool, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if scalesHPA {
		if r.TargetReplicas != nil {
			errs = append(errs, field.Forbidden(p.Child("targetReplicas"), "a FederatedHPA target takes targetMinReplicas and targetMaxReplicas"))
		}
		if r.TargetMinReplicas == nil && r.TargetMaxReplicas == nil {
			errs = append(errs, field.Required(p.Child("targetMaxReplicas"), "targetMinReplicas or targetMaxReplicas, or both, to scale a FederatedHPA"))
		}
		if v := r.TargetMinReplicas; v != nil && *v < 1 {
			errs = append(errs, field.Invalid(p.Child("targetMinReplicas"), *v, "must be at least 1"))
		}
		if v := r.TargetMaxReplicas; v != nil && *v < 1 {
			errs = append(errs, field.Invalid(p.Child("targetMaxReplicas"), *v, "must be at least 1"))
		}
		if r.TargetMinReplicas != nil && r.TargetMaxReplicas != nil && *r.TargetMinReplicas > *r.TargetMaxReplicas {
			errs = append(errs, field.Invalid(p.Child("targetMinReplicas"), *r.TargetMinReplicas, fmt.Sprintf("must not exceed targetMaxReplicas (%d)", *r.TargetMaxReplicas)))
		}
		return errs
	}
	if r.TargetMinReplicas != nil {
		errs = append(errs, field.Forbidden(p.Child("targetMinReplicas"), "only for a FederatedHPA target; a "+kind+" takes targetReplicas"))
	}
	if r.TargetMaxReplicas != nil {
		errs = append(errs, field.Forbidden(p.Child("targetMaxReplicas"), "only for a FederatedHPA target; a "+kind+" takes targetReplicas"))
	}
	switch {
	case r.TargetReplicas == nil:
		errs = append(errs, field.Required(p.Child("targetReplicas"), "the replicas to scale the "+kind+" to"))
	case *r.TargetReplicas < 0:
		errs = append(errs, field.Invalid(p.Child("targetReplicas"), *r.TargetReplicas, "must be at least 0"))
	}
	return errs
}
