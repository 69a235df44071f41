package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// RefusedFieldError is a claiming policy's field that a plan cannot honour:
// the template is not planned, and the error names the policy and the field.
// The continuous control plane honours the same fields (it leaves such a
// template unscheduled, or waits), so only the front ends without a queue
// (preview, Terraform, the Crossplane preview) refuse them.
type RefusedFieldError struct {
	// Policy is the claiming propagation policy.
	Policy PolicyRef
	// Field is the refused field, rooted at the policy ("spec.schedulerName").
	Field *field.Error
}

func (e *RefusedFieldError) Error() string {
	return fmt.Sprintf("%s: %s", e.Policy, e.Field.Error())
}

// refuseClaim says why a plan cannot honour the claiming policy, or nil.
//
//   - schedulerName naming another scheduler: Karmada leaves the template
//     to that scheduler, unscheduled until it acts; a plan has no other
//     scheduler to wait for, and an empty placement would look like success.
//   - dependentOverrides naming an override policy the plan was not given:
//     Karmada waits for it to be created; a plan receives its override
//     policies by value, so the missing one is missing from the input.
func refuseClaim(f Fleet, claim policy.Claim, ref PolicyRef) error {
	spec := claim.Spec
	if api.OtherScheduler(spec.SchedulerName) {
		return &RefusedFieldError{Policy: ref, Field: field.Invalid(field.NewPath("spec", "schedulerName"), spec.SchedulerName,
			fmt.Sprintf("names a scheduler other than flotilla's (%q): Karmada leaves its templates unscheduled until that scheduler acts, "+
				"and a plan has no other scheduler to wait for; remove it or set %q", api.DefaultSchedulerName, api.DefaultSchedulerName))}
	}
	if missing := policy.MissingDependentOverrides(claim, f.OverridePolicies, f.ClusterOverridePolicies); len(missing) > 0 {
		kind := api.KindOverridePolicy
		if claim.Kind == api.KindClusterPropagationPolicy {
			kind = api.KindClusterOverridePolicy
		}
		where := ""
		if claim.Namespace != "" {
			where = " in namespace " + claim.Namespace
		}
		return &RefusedFieldError{Policy: ref, Field: field.Invalid(field.NewPath("spec", "dependentOverrides"), spec.DependentOverrides,
			fmt.Sprintf("propagation waits for %s %s%s, which is not among the override policies given; pass it, or remove it from dependentOverrides",
				kind, strings.Join(missing, ", "), where))}
	}
	return nil
}

// suspendedClusters lists the clusters of placement whose dispatch the
// policy's suspension holds back (api.DispatchSuspended), in placement order.
func suspendedClusters(s *api.Suspension, placement []api.TargetCluster) []string {
	var out []string
	for _, tc := range placement {
		if api.DispatchSuspended(s, tc.Name) {
			out = append(out, tc.Name)
		}
	}
	return out
}
