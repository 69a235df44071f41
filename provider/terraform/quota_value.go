package terraform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// quotaNoun names flotilla_federated_resource_quota in messages.
const quotaNoun = "federated resource quota"

// quotaFields are the spec attributes of flotilla_federated_resource_quota,
// derived from the API type as the policies' are (schema_shape.go):
// `overall` and `static_assignments[*].hard` are ResourceLists, maps of
// quantities.
var quotaFields = sync.OnceValue(func() []*specField {
	return mustSpecFields(reflect.TypeFor[api.FederatedResourceQuotaSpec]())
})

// quotaSpecAttrs are the attributes a quota value is decoded from; the
// others (the write-only clusters, the computed rendered and connections)
// may be unknown while the quota itself is known.
func quotaSpecAttrs() []string {
	out := []string{attrName, attrNamespace}
	for _, f := range quotaFields() {
		out = append(out, f.name)
	}
	return out
}

// decodeQuota converts a flotilla_federated_resource_quota value (its
// configuration, plan or state, or the value another resource receives)
// into the Karmada object and validates it with Karmada's rules. known is
// false, with no diagnostics, while a spec attribute is unknown; the quota
// is nil whenever it is invalid. With schemaChecked, values the schema's
// own validators reject (a quantity that does not parse) are left to them.
func decodeQuota(v tftypes.Value, at path.Path, schemaChecked bool) (q *api.FederatedResourceQuota, known bool, diags diag.Diagnostics) {
	var attrs map[string]tftypes.Value
	if !v.IsKnown() || v.IsNull() || v.As(&attrs) != nil {
		if v.IsKnown() {
			diags.AddAttributeError(at, "Invalid "+quotaNoun, "Expected a flotilla_federated_resource_quota resource, for example flotilla_federated_resource_quota.team.")
		}
		return nil, v.IsKnown(), diags
	}
	spec := map[string]tftypes.Value{}
	types := map[string]tftypes.Type{}
	for _, name := range quotaSpecAttrs() {
		a, ok := attrs[name]
		if !ok {
			diags.AddAttributeError(at.AtName(name), "Invalid "+quotaNoun, "Expected a flotilla_federated_resource_quota resource: it has no "+name+".")
			return nil, true, diags
		}
		if !a.IsFullyKnown() {
			return nil, false, nil
		}
		spec[name], types[name] = a, a.Type()
	}
	name, _ := stringAttr(spec, attrName)
	namespace, _ := stringAttr(spec, attrNamespace)
	conv := &specEncoder{rejected: map[string]*valueError{}}
	doc, err := conv.objectJSON(quotaFields(), tftypes.NewValue(tftypes.Object{AttributeTypes: types}, spec), at, map[string]bool{attrName: true, attrNamespace: true})
	if err != nil {
		diags.AddAttributeError(at, "Invalid "+quotaNoun, err.Error())
		return nil, true, diags
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		diags.AddAttributeError(at, "Invalid "+quotaNoun, err.Error())
		return nil, true, diags
	}
	q = &api.FederatedResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.PolicyGroupVersion.String(), Kind: api.KindFederatedResourceQuota},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}
	if err := decodeStrict(raw, &q.Spec); err != nil {
		diags.AddAttributeError(at, "Invalid "+quotaNoun, err.Error())
		return nil, true, diags
	}
	rejected := conv.rejected
	if !schemaChecked {
		for _, key := range sortedKeys(rejected) {
			ve := rejected[key]
			diags.AddAttributeError(ve.path, "Invalid "+quotaNoun, fmt.Sprintf("%s %s/%s: %s", quotaNoun, namespace, name, ve.Error()))
		}
		rejected, doc = nil, nil
	}
	errs := api.ValidateFederatedResourceQuota(q)
	for _, fe := range errs {
		if d, ok := specErrorDiagnostic(quotaFields(), quotaNoun+" "+namespace+"/"+name, fe, doc, at, rejected); ok {
			diags.Append(d)
		}
	}
	if len(errs) > 0 || len(conv.rejected) > 0 {
		return nil, true, diags
	}
	return q, true, diags
}

// quotasFromTerraform decodes a list of quota values (flotilla_manifest's
// federated_resource_quotas). known is false while any is unknown.
func quotasFromTerraform(v tftypes.Value, at path.Path) (qs []api.FederatedResourceQuota, known bool, diags diag.Diagnostics) {
	if v.IsNull() {
		return nil, true, nil
	}
	if !v.IsKnown() {
		return nil, false, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		diags.AddAttributeError(at, "Invalid federated resource quotas", "Expected a list of flotilla_federated_resource_quota resources, e.g. [flotilla_federated_resource_quota.team].")
		return nil, true, diags
	}
	known = true
	for i, e := range elems {
		q, ok, d := decodeQuota(e, at.AtListIndex(i), false)
		diags.Append(d...)
		known = known && ok
		if q != nil {
			qs = append(qs, *q)
		}
	}
	return qs, known, diags
}
