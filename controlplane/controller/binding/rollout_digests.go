package binding

import (
	"encoding/json"
	"fmt"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// The execution controller applies a Work under a staged rollout only
// when its manifest is what the binding renders now or a rendering whose
// digest the binding controller recorded here (shared's content check).

// recordDigests fills the digests of status.rollout.clusters once the
// rollout's actions are carried out on desired. A cluster that gets the
// current rendering records its digest; a held cluster keeps the digest
// recorded when its rendering was written, never one of the Work it
// holds, which may have been changed since; a rolled-back cluster records
// the stable copy's digest, taken when the stable copy was. A Work from
// before digests were recorded is taken as it is, once.
func recordDigests(st *api.BindingRolloutStatus, prev *api.BindingRolloutStatus, actions map[string]rolloutAction, have, desired map[string]*workv1.Work) error {
	before := map[string]api.BindingRolloutCluster{}
	if prev != nil {
		for _, c := range prev.Clusters {
			before[c.Name] = c
		}
	}
	for i := range st.Clusters {
		c := &st.Clusters[i]
		want, had, p := desired[c.Name], have[c.Name], before[c.Name]
		if want == nil {
			continue
		}
		wantDigest := func() (string, error) { return shared.ManifestsDigest(want.Spec.Workload.Manifests) }
		stableDigest := func(w *workv1.Work) (string, error) {
			raw, ok := w.Annotations[shared.AnnotationStableManifests]
			if !ok {
				return "", nil
			}
			var ms []api.Manifest
			if err := json.Unmarshal([]byte(raw), &ms); err != nil {
				return "", fmt.Errorf("annotation %s of work %s/%s: %w", shared.AnnotationStableManifests, w.Namespace, w.Name, err)
			}
			return shared.ManifestsDigest(ms)
		}
		var err error
		switch actions[c.Name] {
		case rolloutHold:
			c.Digest, c.StableDigest = p.Digest, p.StableDigest
			if c.Digest == "" {
				c.Digest, err = wantDigest()
			}
			if err == nil && c.StableDigest == "" {
				c.StableDigest, err = stableDigest(want)
			}
		case rolloutRollback:
			if c.Digest = p.StableDigest; c.Digest == "" {
				c.Digest, err = wantDigest()
			}
		default:
			c.Digest, err = wantDigest()
			_, kept := want.Annotations[shared.AnnotationStableManifests]
			switch {
			case err != nil || !kept:
			case had != nil && had.Annotations[shared.AnnotationStableManifests] == want.Annotations[shared.AnnotationStableManifests] && p.StableDigest != "":
				// The stable copy carried over from the Work.
				c.StableDigest = p.StableDigest
			case had != nil && p.Digest != "" && !hasStable(had):
				// The stable copy is the rendering the Work held.
				c.StableDigest = p.Digest
			default:
				c.StableDigest, err = stableDigest(want)
			}
		}
		if err != nil {
			return fmt.Errorf("record the rollout's digest for cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

// hasStable reports whether a Work keeps a stable copy.
func hasStable(w *workv1.Work) bool {
	_, ok := w.Annotations[shared.AnnotationStableRevision]
	return ok
}
