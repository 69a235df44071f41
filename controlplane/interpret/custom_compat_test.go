package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// TestAggregateStatusStatusItems follows Karmada's VM.AggregateStatus: a
// script gets statusItems nil when no member has an item, so the common
// "if statusItems == nil then initialise the status" branch runs, and a
// table (one entry per member, reported or not) otherwise.
func TestAggregateStatusStatusItems(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("agg", api.CustomizationRules{StatusAggregation: lua(`
function AggregateStatus(desiredObj, statusItems)
  if desiredObj.status == nil then desiredObj.status = {} end
  if statusItems == nil then
    desiredObj.status.phase = "Initialised"
    return desiredObj
  end
  desiredObj.status.phase = "Aggregated"
  desiredObj.status.members = #statusItems
  return desiredObj
end`)})})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		items []interpret.Member
		want  map[string]any
	}{
		{"no member: nil", nil, map[string]any{"phase": "Initialised"}},
		{"an empty list is no member either", []interpret.Member{}, map[string]any{"phase": "Initialised"}},
		{"a member that has not reported is an item", []interpret.Member{{Cluster: "east"}},
			map[string]any{"phase": "Aggregated", "members": int64(1)}},
		{"every member is an item", []interpret.Member{{Cluster: "west", Applied: true, Status: map[string]any{"ready": int64(1)}}, {Cluster: "east"}},
			map[string]any{"phase": "Aggregated", "members": int64(2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := in.AggregateStatus(obj(t, widget), tc.items)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
