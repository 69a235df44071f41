package controller

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// A Work's identity (its binding, template and cluster) says whose it is,
// not what it holds: whoever may write in an execution namespace can
// change a Work's manifest, and the binding controller writes it back only
// after the change was seen, if at all (a held rollout stage keeps what its
// Work holds). So the execution controller applies a Work only when its
// manifest is what the binding renders for the cluster now, or, under a
// staged rollout, the rendering the binding controller recorded for the
// cluster in the binding's status (verifyContent).

// renderTrusted renders a binding's template with what trust derived (the
// clusters and the replica scheduling), whatever the binding's own spec
// says: for every cluster, or for only that one when only is set.
func renderTrusted(ctx context.Context, c client.Reader, is *hoststore.Interpreters, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, t *trusted, fleet, only string) (map[string]render.Work, error) {
	checked := rb.DeepCopy()
	checked.Spec.Clusters = t.clusters
	checked.Spec.Placement = &api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{ReplicaSchedulingType: t.scheduling}}
	return hoststore.RenderBindingFor(ctx, hoststore.Indexed(c), is, checked, tmpl, fleet, only)
}

// verifyContent checks a verified Work's manifest against its binding. The
// binding's current rendering for the cluster passes. Under a staged
// rollout, so does a rendering whose digest the binding controller recorded
// for the cluster (status.rollout.clusters: the rendering a held stage
// keeps, or the stable copy a rollback gives back); anything else is
// refused, since nothing writes a held Work back. Without a rollout, a
// different manifest waits (errPending): the binding controller, which the
// Work's change brings back, writes the rendering again, and a template
// changed a moment ago gets its Work rewritten the same way.
func verifyContent(ctx context.Context, c client.Reader, is *hoststore.Interpreters, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, t *trusted, w *workv1.Work, cluster, fleet string) error {
	got, err := manifestsDigest(w.Spec.Workload.Manifests)
	if err != nil {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: field.ErrorList{field.Invalid(field.NewPath("spec", "workload", "manifests"), "(undecodable)", err.Error())}}
	}
	rendered, err := renderTrusted(ctx, c, is, rb, tmpl, t, fleet, cluster)
	if err != nil {
		// The binding controller reports the render failure on the
		// binding; it could not have written this Work now either.
		return errPending
	}
	if r, ok := rendered[cluster]; ok {
		raw, err := render.CanonicalJSON(r.Object)
		if err != nil {
			return err
		}
		want, err := manifestsDigest([]api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
		if err != nil {
			return err
		}
		if got == want {
			return nil
		}
	}
	if t.rollout == nil {
		return errPending
	}
	if rc := rolloutClusterOf(rb, cluster); rc != nil && (got == rc.Digest || got == rc.StableDigest) {
		return nil
	}
	return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: field.ErrorList{field.Invalid(field.NewPath("spec", "workload", "manifests"), "sha256:"+got,
		fmt.Sprintf("is neither what binding %s renders for cluster %s now nor the rendering its staged rollout holds there; the Work was changed after the binding controller wrote it, and it is not applied", hoststore.BindingRef(rb), cluster))}}
}

// rolloutClusterOf is the binding's rollout record of cluster, nil when
// there is none.
func rolloutClusterOf(rb *workv1.ResourceBinding, cluster string) *api.BindingRolloutCluster {
	if rb.Status.Rollout == nil {
		return nil
	}
	for i := range rb.Status.Rollout.Clusters {
		if rb.Status.Rollout.Clusters[i].Name == cluster {
			return &rb.Status.Rollout.Clusters[i]
		}
	}
	return nil
}

// manifestsDigest is the hex SHA-256 of a Work's manifests, each decoded
// and encoded again (sorted keys, numbers as written) so the apiserver's
// encoding of a stored Work gives the digest of the bytes the binding
// controller wrote.
func manifestsDigest(manifests []api.Manifest) (string, error) {
	h := sha256.New()
	for i, m := range manifests {
		dec := json.NewDecoder(bytes.NewReader(m.Raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", fmt.Errorf("decode manifest %d: %w", i, err)
		}
		if dec.More() {
			return "", fmt.Errorf("decode manifest %d: %w", i, errors.New("more than one JSON value"))
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("encode manifest %d: %w", i, err)
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

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
		wantDigest := func() (string, error) { return manifestsDigest(want.Spec.Workload.Manifests) }
		stableDigest := func(w *workv1.Work) (string, error) {
			raw, ok := w.Annotations[AnnotationStableManifests]
			if !ok {
				return "", nil
			}
			var ms []api.Manifest
			if err := json.Unmarshal([]byte(raw), &ms); err != nil {
				return "", fmt.Errorf("annotation %s of work %s/%s: %w", AnnotationStableManifests, w.Namespace, w.Name, err)
			}
			return manifestsDigest(ms)
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
			_, kept := want.Annotations[AnnotationStableManifests]
			switch {
			case err != nil || !kept:
			case had != nil && had.Annotations[AnnotationStableManifests] == want.Annotations[AnnotationStableManifests] && p.StableDigest != "":
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
	_, ok := w.Annotations[AnnotationStableRevision]
	return ok
}
