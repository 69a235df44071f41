package api

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ConfigGroup is the API group of Karmada's ResourceInterpreterCustomization.
const ConfigGroup = "config.karmada.io"

// ConfigGroupVersion is config.karmada.io/v1alpha1.
var ConfigGroupVersion = schema.GroupVersion{Group: ConfigGroup, Version: "v1alpha1"}

// KindResourceInterpreterCustomization is the kind of Karmada's declarative
// interpreter customization.
const KindResourceInterpreterCustomization = "ResourceInterpreterCustomization"

// ResourceInterpreterCustomization is Karmada's
// config.karmada.io/v1alpha1 ResourceInterpreterCustomization, field for
// field: Lua scripts that teach the interpreter a kind (controlplane/interpret
// runs them). It is cluster-scoped, as in Karmada.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the target kind and its scripts.
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is the target and its rules.
type ResourceInterpreterCustomizationSpec struct {
	// Target is the resource type the rules apply to.
	Target CustomizationTarget `json:"target"`
	// Customizations are the rules, one Lua script per operation.
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget is the apiVersion and kind a customization applies to.
type CustomizationTarget struct {
	// APIVersion is the target's group/version, e.g. argoproj.io/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind is the target's kind, e.g. Rollout.
	Kind string `json:"kind"`
}

// CustomizationRules are the operations a customization may script, named
// as in Karmada. Every rule is a Lua script defining one global function.
type CustomizationRules struct {
	// Retention defines Retain(desiredObj, observedObj).
	Retention *LuaScript `json:"retention,omitempty"`
	// ReplicaResource defines GetReplicas(obj).
	ReplicaResource *LuaScript `json:"replicaResource,omitempty"`
	// ComponentResource defines GetComponents(obj): the components of a
	// multi-component workload, each with its replicas and what one of
	// its replicas requests. Where a kind has it, it replaces
	// ReplicaResource for scheduling, as in Karmada with the
	// MultiplePodTemplatesScheduling feature on.
	ComponentResource *LuaScript `json:"componentResource,omitempty"`
	// ReplicaRevision defines ReviseReplica(obj, desiredReplica).
	ReplicaRevision *LuaScript `json:"replicaRevision,omitempty"`
	// StatusReflection defines ReflectStatus(observedObj).
	StatusReflection *LuaScript `json:"statusReflection,omitempty"`
	// StatusAggregation defines AggregateStatus(desiredObj, statusItems).
	StatusAggregation *LuaScript `json:"statusAggregation,omitempty"`
	// HealthInterpretation defines InterpretHealth(observedObj).
	HealthInterpretation *LuaScript `json:"healthInterpretation,omitempty"`
	// DependencyInterpretation defines GetDependencies(desiredObj).
	DependencyInterpretation *LuaScript `json:"dependencyInterpretation,omitempty"`
}

// LuaScript holds one rule's script. Karmada has one Go type per rule, all
// of this shape; one type is enough to read and write the same documents.
type LuaScript struct {
	// LuaScript is the Lua source.
	LuaScript string `json:"luaScript"`
}

// ValidateResourceInterpreterCustomization checks what Karmada's webhook
// checks before the scripts run: a target.
// Whether the scripts compile and define their function is checked by
// controlplane/interpret, which owns the Lua VM.
func ValidateResourceInterpreterCustomization(ric *ResourceInterpreterCustomization) field.ErrorList {
	var errs field.ErrorList
	target := field.NewPath("spec", "target")
	if ric.Spec.Target.APIVersion == "" {
		errs = append(errs, field.Required(target.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(ric.Spec.Target.APIVersion); err != nil {
		errs = append(errs, field.Invalid(target.Child("apiVersion"), ric.Spec.Target.APIVersion, err.Error()))
	}
	if ric.Spec.Target.Kind == "" {
		errs = append(errs, field.Required(target.Child("kind"), ""))
	}
	return errs
}
