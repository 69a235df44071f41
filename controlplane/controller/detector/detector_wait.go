package detector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// waitRetry is how soon a template waiting for an override policy or a
// PriorityClass is looked at again; a created override policy brings it back
// at once (the detector watches them).
const waitRetry = 30 * time.Second

// waitFor says why the detector must not write a claimed template's binding
// yet, as Karmada's detector returns "waiting for dependent overrides" or
// fails to resolve the PriorityClass: the event reason and message, or ""
// when nothing is missing. It also returns the resolved schedule priority.
func (d *detector) waitFor(ctx context.Context, tmpl *unstructured.Unstructured, claim policy.Claim) (*api.BindingSchedulePriority, string, string, error) {
	if len(claim.Spec.DependentOverrides) > 0 {
		ops, cops, invalid, err := hoststore.OverridePolicies(ctx, d.client, tmpl.GetNamespace())
		if err != nil {
			return nil, "", "", err
		}
		// An invalid override policy is as good as missing: the binding
		// would be rendered without it.
		if missing := policy.MissingDependentOverrides(claim, ops, cops); len(missing) > 0 {
			for _, p := range invalid {
				if slices.Contains(missing, p.Name) {
					return nil, api.ReasonPolicyInvalid, fmt.Sprintf("%s %s waits for %s (spec.dependentOverrides): %s", claim.Kind, policyName(claim), p.Ref(), p.Message()), nil
				}
			}
			kind := api.KindOverridePolicy
			if claim.Kind == api.KindClusterPropagationPolicy {
				kind = api.KindClusterOverridePolicy
			}
			return nil, api.ReasonDependentOverridesMissing, fmt.Sprintf("%s %s waits for %s %s (spec.dependentOverrides): no binding is written until it exists",
				claim.Kind, policyName(claim), kind, strings.Join(missing, ", ")), nil
		}
	}
	sp := claim.Spec.SchedulePriority
	if sp == nil {
		return nil, "", "", nil
	}
	var pc schedulingv1.PriorityClass
	err := d.client.Get(ctx, client.ObjectKey{Name: sp.PriorityClassName}, &pc)
	switch {
	case shared.IsNotFound(err):
		return nil, api.ReasonPriorityClassNotFound, fmt.Sprintf("%s %s: spec.schedulePriority.priorityClassName %q names no PriorityClass: no binding is written until it exists",
			claim.Kind, policyName(claim), sp.PriorityClassName), nil
	case err != nil:
		return nil, "", "", fmt.Errorf("read PriorityClass %s of %s %s: %w", sp.PriorityClassName, claim.Kind, policyName(claim), err)
	}
	return &api.BindingSchedulePriority{Priority: pc.Value}, "", "", nil
}

func policyName(c policy.Claim) string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "/" + c.Name
}

// waiting records why a template's binding waits, as a Warning event on the
// template (kubectl describe shows it) and a log line.
func (d *detector) waiting(ctx context.Context, tmpl *unstructured.Unstructured, reason, message string) {
	ctrl.LoggerFrom(ctx).Info("template waits", "template", client.ObjectKeyFromObject(tmpl).String(), "reason", reason, "message", message)
	if d.events != nil {
		d.events.Eventf(tmpl, nil, corev1.EventTypeWarning, reason, "Propagate", "%s", message)
	}
}
