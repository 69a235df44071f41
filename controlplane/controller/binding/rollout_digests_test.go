package binding

import (
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// TestRecordDigests: what the binding controller records for each action
// never comes from a Work edited since it wrote it: a held Work keeps the
// recorded digest, a stable copy taken from (or carried over on) an edited
// Work keeps the digest of what it was, a rollback records the stable
// copy's digest. Only a Work from before digests were recorded is taken as
// it is.
func TestRecordDigests(t *testing.T) {
	v1, v2, evil := rolloutWork("web:v1", nil), rolloutWork("web:v2", nil), rolloutWork("web:evil", nil)
	d := func(w *workv1.Work) string {
		t.Helper()
		s, err := shared.ManifestsDigest(w.Spec.Workload.Manifests)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stableEvil := map[string]string{shared.AnnotationStableRevision: "1", shared.AnnotationStableManifests: mustManifests(t, evil)}
	for _, tc := range []struct {
		name   string
		action rolloutAction
		have   *workv1.Work
		prev   *api.BindingRolloutCluster
		want   api.BindingRolloutCluster
	}{
		{name: "hold of an edited Work keeps the recorded digest", action: rolloutHold, have: evil,
			prev: &api.BindingRolloutCluster{Digest: d(v1)}, want: api.BindingRolloutCluster{Digest: d(v1)}},
		{name: "hold of a Work from before digests takes it once", action: rolloutHold, have: v1,
			want: api.BindingRolloutCluster{Digest: d(v1)}},
		{name: "update of an edited Work: the stable copy's digest is the recorded one", action: rolloutUpdate, have: evil,
			prev: &api.BindingRolloutCluster{Digest: d(v1)}, want: api.BindingRolloutCluster{Digest: d(v2), StableDigest: d(v1)}},
		{name: "update carrying an edited stable copy keeps its recorded digest", action: rolloutUpdate, have: rolloutWork("web:broken", merged(map[string]string{shared.AnnotationRolloutRevision: "x"}, stableEvil)),
			prev: &api.BindingRolloutCluster{Digest: "broken", StableDigest: d(v1)}, want: api.BindingRolloutCluster{Digest: d(v2), StableDigest: d(v1)}},
		{name: "rollback records the stable copy's digest", action: rolloutRollback, have: rolloutWork("web:broken", merged(map[string]string{shared.AnnotationRolloutRevision: "2"}, stableEvil)),
			prev: &api.BindingRolloutCluster{Digest: "broken", StableDigest: d(v1)}, want: api.BindingRolloutCluster{Digest: d(v1)}},
		{name: "promote records the rendering", action: rolloutPromote, have: v2, prev: &api.BindingRolloutCluster{Digest: d(v2)}, want: api.BindingRolloutCluster{Digest: d(v2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := rolloutWork("web:v2", nil)
			want.ResourceVersion = ""
			desired := map[string]*workv1.Work{"a": want}
			have := tc.have.DeepCopy()
			if err := stageWork(tc.action, "a", have, desired, "2"); err != nil {
				t.Fatal(err)
			}
			var prev *api.BindingRolloutStatus
			if tc.prev != nil {
				p := *tc.prev
				p.Name = "a"
				prev = &api.BindingRolloutStatus{Clusters: []api.BindingRolloutCluster{p}}
			}
			st := &api.BindingRolloutStatus{Clusters: []api.BindingRolloutCluster{{Name: "a"}}}
			if err := recordDigests(st, prev, map[string]rolloutAction{"a": tc.action}, map[string]*workv1.Work{"a": have}, desired); err != nil {
				t.Fatal(err)
			}
			tc.want.Name = "a"
			if got := st.Clusters[0]; got != tc.want {
				t.Errorf("recorded %+v, want %+v", got, tc.want)
			}
		})
	}
}
