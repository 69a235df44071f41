package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// FederatedHPA is one horizontal pod autoscaler over the fleet; Karmada's
// spec and status. Its target is a template of its own namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fhpa,categories=flotilla
// +kubebuilder:printcolumn:name="Reference",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="MinPods",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="MaxPods",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the autoscaler.
	Spec api.FederatedHPASpec `json:"spec"`

	// Status is the autoscaler's last observation.
	// +optional
	Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status,omitempty"`
}

// FederatedHPAList is a list of FederatedHPA.
//
// +kubebuilder:object:root=true
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the autoscalers.
	Items []FederatedHPA `json:"items"`
}

// Engine is the FederatedHPA as controlplane/api's type.
func (h *FederatedHPA) Engine() api.FederatedHPA {
	return api.FederatedHPA{ObjectMeta: *h.ObjectMeta.DeepCopy(), Spec: *h.Spec.DeepCopy(), Status: *h.Status.DeepCopy()}
}

// Validate returns what is wrong with the FederatedHPA; nil when valid.
func (h *FederatedHPA) Validate() field.ErrorList {
	e := h.Engine()
	return api.ValidateFederatedHPA(&e)
}

// CronFederatedHPA scales a template, or a FederatedHPA's bounds, on a
// schedule; Karmada's spec and status. Its target is an object of its own
// namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cronfhpa,categories=flotilla
// +kubebuilder:printcolumn:name="Reference",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the schedule.
	Spec api.CronFederatedHPASpec `json:"spec"`

	// Status is each rule's execution history.
	// +optional
	Status api.CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPAList is a list of CronFederatedHPA.
//
// +kubebuilder:object:root=true
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the schedules.
	Items []CronFederatedHPA `json:"items"`
}

// Engine is the CronFederatedHPA as controlplane/api's type.
func (c *CronFederatedHPA) Engine() api.CronFederatedHPA {
	return api.CronFederatedHPA{ObjectMeta: *c.ObjectMeta.DeepCopy(), Spec: *c.Spec.DeepCopy(), Status: *c.Status.DeepCopy()}
}

// Validate returns what is wrong with the CronFederatedHPA; nil when valid.
func (c *CronFederatedHPA) Validate() field.ErrorList {
	e := c.Engine()
	return api.ValidateCronFederatedHPA(&e)
}

func init() {
	SchemeBuilder.Register(&FederatedHPA{}, &FederatedHPAList{}, &CronFederatedHPA{}, &CronFederatedHPAList{})
}
