package api

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Karmada's autoscaling API: FederatedHPA and CronFederatedHPA
// (autoscaling.karmada.io/v1alpha1). flotilla serves the same shapes under
// autoscaling.flotilla.io (controlplane/apis/autoscaling).
const (
	// AutoscalingGroup is Karmada's API group of FederatedHPA and
	// CronFederatedHPA.
	AutoscalingGroup = "autoscaling.karmada.io"
	// FlotillaAutoscalingGroup is flotilla's API group of the same kinds.
	FlotillaAutoscalingGroup = "autoscaling.flotilla.io"
	// KindFederatedHPA is the kind of FederatedHPA.
	KindFederatedHPA = "FederatedHPA"
	// KindCronFederatedHPA is the kind of CronFederatedHPA.
	KindCronFederatedHPA = "CronFederatedHPA"
)

// Defaults of a CronFederatedHPA rule, Karmada's.
const (
	// DefaultSuccessfulHistoryLimit is how many successful executions a
	// rule's history keeps when the rule names no limit.
	DefaultSuccessfulHistoryLimit = 3
	// DefaultFailedHistoryLimit is how many failed executions a rule's
	// history keeps when the rule names no limit.
	DefaultFailedHistoryLimit = 3
	// MaxHistoryLimit bounds both history limits.
	MaxHistoryLimit = 32
)

// FederatedHPA is one horizontal pod autoscaler over every member the
// target's binding places it on: the autoscaling/v2 HPA spec, whose
// replicas are the template's (the scheduler then divides them).
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the autoscaler.
	Spec FederatedHPASpec `json:"spec"`

	// Status is the autoscaler's last observation.
	// +optional
	Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status,omitempty"`
}

// FederatedHPASpec is Karmada's FederatedHPA spec, the autoscaling/v2
// HorizontalPodAutoscalerSpec.
type FederatedHPASpec struct {
	// ScaleTargetRef is the template to scale, in the FederatedHPA's own
	// namespace.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// MinReplicas is the lower limit of the replicas; 1 when unset.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the upper limit of the replicas, at least MinReplicas.
	MaxReplicas int32 `json:"maxReplicas"`

	// Metrics decide the desired replicas (the largest over all metrics).
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// Behavior bounds how fast the replicas move up and down.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// CronFederatedHPA scales a template, or a FederatedHPA's bounds, on a
// schedule.
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the schedule.
	Spec CronFederatedHPASpec `json:"spec"`

	// Status is each rule's execution history.
	// +optional
	Status CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPASpec is Karmada's CronFederatedHPA spec.
type CronFederatedHPASpec struct {
	// ScaleTargetRef is the template (a kind with a scale subresource) or
	// the FederatedHPA to scale, in the CronFederatedHPA's own namespace.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// Rules are the scheduled scalings.
	// +kubebuilder:validation:MinItems=1
	Rules []CronFederatedHPARule `json:"rules"`
}

// CronFederatedHPARule is one scheduled scaling.
type CronFederatedHPARule struct {
	// Name identifies the rule and its execution history; unique in the
	// CronFederatedHPA. A renamed rule is a new rule with a new history.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`

	// Schedule is a standard five-field cron expression (minute hour
	// day-of-month month day-of-week) or a descriptor such as @hourly.
	Schedule string `json:"schedule"`

	// TargetReplicas are the replicas the template is scaled to; only for
	// a target that is not a FederatedHPA.
	// +optional
	TargetReplicas *int32 `json:"targetReplicas,omitempty"`

	// TargetMinReplicas is the minReplicas written to the target
	// FederatedHPA; unset leaves it.
	// +optional
	TargetMinReplicas *int32 `json:"targetMinReplicas,omitempty"`

	// TargetMaxReplicas is the maxReplicas written to the target
	// FederatedHPA; unset leaves it.
	// +optional
	TargetMaxReplicas *int32 `json:"targetMaxReplicas,omitempty"`

	// Suspend stops the rule's executions; false when unset.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// TimeZone is the IANA time zone the schedule is read in; UTC when
	// unset.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// SuccessfulHistoryLimit is how many successful executions the rule's
	// history keeps; 3 when unset.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// FailedHistoryLimit is how many failed executions the rule's history
	// keeps; 3 when unset.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`
}

// CronFederatedHPAStatus is Karmada's CronFederatedHPA status.
type CronFederatedHPAStatus struct {
	// ExecutionHistories are the rules' histories, in the order of the
	// rules.
	// +optional
	ExecutionHistories []ExecutionHistory `json:"executionHistories,omitempty"`
}

// ExecutionHistory is one rule's executions, newest first.
type ExecutionHistory struct {
	// RuleName is the rule's name.
	RuleName string `json:"ruleName"`

	// NextExecutionTime is when the rule runs next; unset while it is
	// suspended or its schedule cannot be read.
	// +optional
	NextExecutionTime *metav1.Time `json:"nextExecutionTime,omitempty"`

	// SuccessfulExecutions are the successful executions, newest first.
	// +optional
	SuccessfulExecutions []SuccessfulExecution `json:"successfulExecutions,omitempty"`

	// FailedExecutions are the failed executions, newest first.
	// +optional
	FailedExecutions []FailedExecution `json:"failedExecutions,omitempty"`
}

// SuccessfulExecution is one successful run of a rule.
type SuccessfulExecution struct {
	// ScheduleTime is the time the run was scheduled for.
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// ExecutionTime is when it ran.
	ExecutionTime *metav1.Time `json:"executionTime"`

	// AppliedReplicas are the replicas written to the template.
	// +optional
	AppliedReplicas *int32 `json:"appliedReplicas,omitempty"`

	// AppliedMaxReplicas is the maxReplicas written to the FederatedHPA.
	// +optional
	AppliedMaxReplicas *int32 `json:"appliedMaxReplicas,omitempty"`

	// AppliedMinReplicas is the minReplicas written to the FederatedHPA.
	// +optional
	AppliedMinReplicas *int32 `json:"appliedMinReplicas,omitempty"`
}

// FailedExecution is one failed run of a rule, or a rule that cannot run.
type FailedExecution struct {
	// ScheduleTime is the time the run was scheduled for; unset when the
	// rule's schedule or time zone cannot be read.
	// +optional
	ScheduleTime *metav1.Time `json:"scheduleTime,omitempty"`

	// ExecutionTime is when it ran, or was found unable to.
	ExecutionTime *metav1.Time `json:"executionTime"`

	// Message says why it failed.
	Message string `json:"message"`
}
