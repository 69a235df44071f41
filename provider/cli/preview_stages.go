package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// PreviewRollout is a template's staged rollout in `preview -o json`.
type PreviewRollout struct {
	// OnGateFailure is Halt or Rollback.
	OnGateFailure string `json:"onGateFailure"`
	// Stages are in rollout order, the implicit "remaining" stage last.
	Stages []PreviewStage `json:"stages"`
}

// PreviewStage is one stage of a rollout with the placed clusters it took.
type PreviewStage struct {
	Name string `json:"name"`
	// Clusters are the stage's clusters in update order.
	Clusters []string `json:"clusters"`
	// Batches split Clusters by maxConcurrentClusters.
	Batches [][]string `json:"batches"`
	// BakeSeconds, MaxUnhealthyClusters and TimeoutSeconds are the stage's
	// gate with its defaults filled in.
	BakeSeconds          int `json:"bakeSeconds"`
	MaxUnhealthyClusters int `json:"maxUnhealthyClusters"`
	TimeoutSeconds       int `json:"timeoutSeconds"`
}

// previewRollout is r's rollout, nil when the claiming policy has none.
func previewRollout(r plan.Result) *PreviewRollout {
	if r.Rollout == nil {
		return nil
	}
	out := &PreviewRollout{OnGateFailure: string(r.Rollout.FailureAction()), Stages: make([]PreviewStage, 0, len(r.Stages))}
	for _, s := range r.Stages {
		batches := s.Batches
		if batches == nil {
			batches = [][]string{}
		}
		out.Stages = append(out.Stages, PreviewStage{
			Name: s.Name, Clusters: s.Clusters, Batches: batches,
			BakeSeconds: int(s.Gate.Bake().Seconds()), MaxUnhealthyClusters: s.Gate.MaxUnhealthy(), TimeoutSeconds: int(s.Gate.Timeout().Seconds()),
		})
	}
	return out
}

// writeRollout prints a template's stages in the table output, one line
// per stage, batches separated by "|":
//
//	# Deployment default/web rollout (on gate failure: Halt)
//	#   1. canary: east (gate: bake 30s, at most 0 unhealthy, timeout 600s)
//	#   2. rest: north | west (gate: bake 0s, at most 0 unhealthy, timeout 600s)
func writeRollout(w io.Writer, r PreviewResult) {
	if r.Rollout == nil {
		return
	}
	fmt.Fprintf(w, "\n# %s rollout (on gate failure: %s)\n", r.Template, r.Rollout.OnGateFailure)
	for i, s := range r.Rollout.Stages {
		batches := make([]string, len(s.Batches))
		for j, b := range s.Batches {
			batches[j] = strings.Join(b, ", ")
		}
		clusters := strings.Join(batches, " | ")
		if clusters == "" {
			clusters = "(no placed cluster)"
		}
		fmt.Fprintf(w, "#   %d. %s: %s (gate: bake %ds, at most %d unhealthy, timeout %ds)\n",
			i+1, s.Name, clusters, s.BakeSeconds, s.MaxUnhealthyClusters, s.TimeoutSeconds)
	}
}
