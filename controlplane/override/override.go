package override

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Applied lists the override rules that ran on a template for one cluster,
// in the order they ran. It is for display: plan output and status.
type Applied struct {
	// Rules are the rules that matched the cluster and were applied.
	Rules []AppliedRule `json:"rules,omitempty"`
}

// AppliedRule identifies one rule that ran and carries its overriders.
type AppliedRule struct {
	// Kind is OverridePolicy or ClusterOverridePolicy.
	Kind string `json:"kind"`
	// Namespace of the policy; empty for a ClusterOverridePolicy.
	Namespace string `json:"namespace,omitempty"`
	// Name of the policy.
	Name string `json:"name"`
	// Rule is the index in spec.overrideRules; a policy in the deprecated
	// targetCluster/overriders form has the one rule 0.
	Rule int `json:"rule"`
	// Overriders are the rule's overriders as written.
	Overriders api.Overriders `json:"overriders"`
}

// Policy names the rule's policy as "Kind namespace/name" or "Kind name".
func (r AppliedRule) Policy() string {
	return policyName(r.Kind, r.Namespace, r.Name)
}

// Field is the rule's location in its policy, e.g. "spec.overrideRules[2]".
func (r AppliedRule) Field() string {
	return fmt.Sprintf("spec.overrideRules[%d]", r.Rule)
}

// Error reports an overrider that could not be applied. Its fields let a
// front end point at the exact policy attribute and template path.
type Error struct {
	// Policy is "Kind namespace/name" or "Kind name".
	Policy string
	// Field is the overrider's location in the policy, e.g.
	// "spec.overrideRules[0].overriders.imageOverrider[1]".
	Field string
	// Path is the JSON pointer in the template the overrider failed on,
	// when one is known.
	Path string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s %s: %v", e.Policy, e.Field, e.Err)
	}
	return fmt.Sprintf("%s %s at %s: %v", e.Policy, e.Field, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// pathError carries the template path an overrider failed on up to Error.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// Apply applies the rules of overrides to obj for one cluster: policies in
// the given order (policy.MatchOverrides puts cluster-wide ones first, then
// namespaced, each by specificity and name), rules in order, each only where
// its targetCluster matches the cluster. obj is replaced only when every rule
// succeeded, so a failure never leaves a half-overridden template behind.
func Apply(obj *unstructured.Unstructured, cluster *api.Cluster, overrides []policy.AppliedOverride) (Applied, error) {
	var applied Applied
	// Overriders never modify the document they are given; each returns a
	// new one (or the same when it changes nothing), so no copy is needed
	// for a failure to leave obj as it was.
	content := obj.Object
	kind := obj.GroupVersionKind().GroupKind()
	for _, o := range overrides {
		for i, rule := range o.Rules {
			if !policy.ClusterMatches(rule.TargetCluster, cluster) {
				continue
			}
			r := AppliedRule{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Rule: i, Overriders: rule.Overriders}
			next, err := applyOverriders(content, kind, rule.Overriders)
			if err != nil {
				return Applied{}, ruleError(r, err)
			}
			content = next
			applied.Rules = append(applied.Rules, r)
		}
	}
	obj.Object = content
	return applied, nil
}

// overriderError records which overrider of a rule failed.
type overriderError struct {
	field string
	index int
	err   error
}

func (e *overriderError) Error() string { return e.err.Error() }
func (e *overriderError) Unwrap() error { return e.err }

func ruleError(r AppliedRule, err error) error {
	out := &Error{Policy: r.Policy(), Field: r.Field(), Err: err}
	var oe *overriderError
	if errors.As(err, &oe) {
		out.Field = fmt.Sprintf("%s.overriders.%s[%d]", r.Field(), oe.field, oe.index)
		out.Err = oe.err
	}
	var pe *pathError
	if errors.As(out.Err, &pe) {
		out.Path = pe.path
		out.Err = pe.err
	}
	return out
}

// applyOverriders runs one rule's overriders in Karmada's order: image,
// command, args, labels, annotations, field, plaintext. Like every overrider
// it leaves obj untouched and returns the changed document.
func applyOverriders(obj map[string]any, kind schema.GroupKind, o api.Overriders) (map[string]any, error) {
	var err error
	for i, io := range o.ImageOverrider {
		if obj, err = applyImage(obj, kind, io); err != nil {
			return nil, &overriderError{field: "imageOverrider", index: i, err: err}
		}
	}
	for i, co := range o.CommandOverrider {
		if obj, err = applyCommandArgs(obj, kind, fieldCommand, co); err != nil {
			return nil, &overriderError{field: "commandOverrider", index: i, err: err}
		}
	}
	for i, ao := range o.ArgsOverrider {
		if obj, err = applyCommandArgs(obj, kind, fieldArgs, ao); err != nil {
			return nil, &overriderError{field: "argsOverrider", index: i, err: err}
		}
	}
	for i, lo := range o.LabelsOverrider {
		if obj, err = applyLabelsAnnotations(obj, fieldLabels, lo); err != nil {
			return nil, &overriderError{field: "labelsOverrider", index: i, err: err}
		}
	}
	for i, ao := range o.AnnotationsOverrider {
		if obj, err = applyLabelsAnnotations(obj, fieldAnnotations, ao); err != nil {
			return nil, &overriderError{field: "annotationsOverrider", index: i, err: err}
		}
	}
	for i, fo := range o.FieldOverrider {
		if obj, err = applyField(obj, fo); err != nil {
			return nil, &overriderError{field: "fieldOverrider", index: i, err: err}
		}
	}
	return applyPlaintext(obj, o.Plaintext)
}

// applyPlaintext applies a rule's plaintext overriders as one JSON patch, as
// Karmada does. When the patch fails it is replayed one operation at a time
// to name the operation at fault; JSON Patch applies operations in order, so
// the replay fails at the same place.
func applyPlaintext(obj map[string]any, in []api.PlaintextOverrider) (map[string]any, error) {
	if len(in) == 0 {
		return obj, nil
	}
	ops := make([]operation, 0, len(in))
	for i, p := range in {
		switch p.Operator {
		case api.OverriderOpAdd, api.OverriderOpReplace, api.OverriderOpRemove:
		default:
			return nil, &overriderError{field: "plaintext", index: i, err: &pathError{path: p.Path, err: unsupportedOperator(p.Operator)}}
		}
		ops = append(ops, fieldOperation(p.Operator, p.Path, p.Value.Raw))
	}
	out, err := patchObject(obj, ops)
	if err == nil {
		return out, nil
	}
	cur := obj
	for i, op := range ops {
		next, stepErr := patchObject(cur, []operation{op})
		if stepErr != nil {
			return nil, &overriderError{field: "plaintext", index: i, err: &pathError{path: op.Path, err: stepErr}}
		}
		cur = next
	}
	return nil, &overriderError{field: "plaintext", index: 0, err: err}
}

func policyName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}
