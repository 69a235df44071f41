package api

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverridePolicy changes the templates it selects in its own namespace, per
// target cluster. It mirrors Karmada's policy.karmada.io/v1alpha1 kind.
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the override rule.
	Spec OverrideSpec `json:"spec"`
}

// ClusterOverridePolicy is the cluster-wide form of OverridePolicy.
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the override rule.
	Spec OverrideSpec `json:"spec"`
}

// OverrideSpec is the body shared by both override policy kinds.
type OverrideSpec struct {
	// ResourceSelectors pick the templates; empty selects every template.
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// OverrideRules are applied in order, each on the clusters it targets.
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// TargetCluster restricts Overriders to matching clusters.
	// Deprecated: use OverrideRules; defaulting folds it into OverrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders applied to the clusters TargetCluster selects.
	// Deprecated: use OverrideRules; defaulting folds it into OverrideRules.
	// +optional
	Overriders Overriders `json:"overriders"`
}

// RuleWithCluster is a set of overriders for the clusters TargetCluster selects.
type RuleWithCluster struct {
	// TargetCluster selects the clusters; nil selects all.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	// Overriders to apply.
	Overriders Overriders `json:"overriders"`
}

// Overriders are the changes of one rule. Within a rule they apply in the
// order image, command, args, labels, annotations, field, plaintext.
type Overriders struct {
	// Plaintext are raw JSON patch operations.
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`
	// ImageOverrider change parts of container images.
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`
	// CommandOverrider change container commands.
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`
	// ArgsOverrider change container args.
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`
	// LabelsOverrider change metadata.labels.
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`
	// AnnotationsOverrider change metadata.annotations.
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`
	// FieldOverrider patch JSON or YAML embedded in a string field.
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// LabelAnnotationOverrider adds, removes or replaces labels or annotations.
type LabelAnnotationOverrider struct {
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value holds the keys (and, except for remove, values).
	// +optional
	Value map[string]string `json:"value,omitempty"`
}

// ImageOverrider changes one component of container images.
type ImageOverrider struct {
	// Predicate picks the image field; nil finds the images of Pods,
	// ReplicaSets, Deployments and StatefulSets.
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`
	// Component is Registry, Repository or Tag.
	Component ImageComponent `json:"component"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value is the new component; ignored for remove.
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate picks an image field by JSON pointer.
type ImagePredicate struct {
	// Path is a JSON pointer to the image string.
	Path string `json:"path"`
}

// ImageComponent is a part of an image reference [registry/]repository[:tag].
type ImageComponent string

const (
	// Registry is the registry host part of an image.
	Registry ImageComponent = "Registry"
	// Repository is the repository part of an image.
	Repository ImageComponent = "Repository"
	// Tag is the tag or digest part of an image.
	Tag ImageComponent = "Tag"
)

// CommandArgsOverrider adds or removes items of a container's command or args.
type CommandArgsOverrider struct {
	// ContainerName is the container to change.
	ContainerName string `json:"containerName"`
	// Operator is add or remove.
	Operator OverriderOperator `json:"operator"`
	// Value are the items appended (add) or deleted (remove).
	// +optional
	Value []string `json:"value,omitempty"`
}

// PlaintextOverrider is one JSON patch operation.
type PlaintextOverrider struct {
	// Path is a JSON pointer, starting with "/".
	Path string `json:"path"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value to set; must be empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// FieldOverrider patches JSON or YAML text held in one string field, such
// as a ConfigMap data entry.
type FieldOverrider struct {
	// FieldPath is a JSON pointer to the string field.
	FieldPath string `json:"fieldPath"`
	// JSON operations, for a field holding JSON. Exclusive with YAML.
	// +optional
	JSON []JSONPatchOperation `json:"json,omitempty"`
	// YAML operations, for a field holding YAML. Exclusive with JSON.
	// +optional
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one operation inside a JSON-valued field.
type JSONPatchOperation struct {
	// SubPath is a JSON pointer inside the field's document.
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value to set; must be empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOperation is one operation inside a YAML-valued field.
type YAMLPatchOperation struct {
	// SubPath is a JSON pointer inside the field's document.
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace.
	Operator OverriderOperator `json:"operator"`
	// Value to set; must be empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// OverriderOperator is the operation an overrider performs.
type OverriderOperator string

// Operators an overrider may use.
const (
	// OverriderOpAdd adds a value.
	OverriderOpAdd OverriderOperator = "add"
	// OverriderOpRemove removes a value.
	OverriderOpRemove OverriderOperator = "remove"
	// OverriderOpReplace replaces a value.
	OverriderOpReplace OverriderOperator = "replace"
)
