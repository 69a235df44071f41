package terraform

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestStagesValue: the stages attribute holds each stage's name and
// clusters, reads back the same, and is null without a rollout.
func TestStagesValue(t *testing.T) {
	t.Parallel()
	stages := []policy.Stage{{Name: "canary", Clusters: []string{"east"}}, {Name: "empty", Clusters: []string{}}, {Name: "rest", Clusters: []string{"north", "west"}}}
	got, err := stagesFromRaw(stagesValue(stages))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stages, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if v := stagesValue(nil); !v.IsNull() {
		t.Errorf("no rollout: %v, want null", v)
	}
	if got, err := stagesFromRaw(tftypes.NewValue(stagesType, tftypes.UnknownValue)); err != nil || got != nil {
		t.Errorf("unknown: %v, %v; want nil", got, err)
	}
}

// TestStagedRendered: after a staged apply, rendered holds the planned
// object for the updated and the suspended clusters, the recorded one for
// the clusters still pending, and nothing for a pending cluster that ran
// nothing before.
func TestStagedRendered(t *testing.T) {
	t.Parallel()
	planned := rawStringMap(map[string]string{"canary": "new-c", "east": "new-e", "west": "new-w", "fresh": "new-f", "held": "new-h"})
	recorded := rawStringMap(map[string]string{"canary": "old-c", "east": "old-e", "west": "old-w", "held": "old-h"})
	got := stagedRendered(planned, recorded, []string{"canary"}, []string{"held"})
	want := rawStringMap(map[string]string{"canary": "new-c", "east": "old-e", "west": "old-w", "held": "new-h"})
	if !got.Equal(want) {
		t.Errorf("rendered = %v, want %v", got, want)
	}
	if all := stagedRendered(planned, recorded, []string{"canary", "east", "west", "fresh", "held"}, nil); !all.Equal(planned) {
		t.Errorf("every cluster updated: rendered = %v, want the plan %v", all, planned)
	}
}
