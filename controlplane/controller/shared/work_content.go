package shared

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

// RenderTrusted renders a binding's template with what trust derived (the
// clusters and the replica scheduling), whatever the binding's own spec
// says: for every cluster, or for only that one when only is set. The
// binding controller writes its Works from it, and verifyContent checks a
// Work against it.
func RenderTrusted(ctx context.Context, c client.Reader, is *hoststore.Interpreters, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, t *Trusted, fleet, only string) (map[string]render.Work, error) {
	checked := rb.DeepCopy()
	checked.Spec.Clusters = t.Clusters
	checked.Spec.Placement = &api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{ReplicaSchedulingType: t.Scheduling}}
	return hoststore.RenderBindingFor(ctx, hoststore.Indexed(c), is, checked, tmpl, fleet, only)
}

// verifyContent checks a verified Work's manifest against its binding. The
// binding's current rendering for the cluster passes. Under a staged
// rollout, so does a rendering whose digest the binding controller recorded
// for the cluster (status.rollout.Clusters: the rendering a held stage
// keeps, or the stable copy a rollback gives back); anything else is
// refused, since nothing writes a held Work back. Without a rollout, a
// different manifest waits (ErrPending): the binding controller, which the
// Work's change brings back, writes the rendering again, and a template
// changed a moment ago gets its Work rewritten the same way.
func verifyContent(ctx context.Context, c client.Reader, is *hoststore.Interpreters, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, t *Trusted, w *workv1.Work, cluster, fleet string) error {
	got, err := ManifestsDigest(w.Spec.Workload.Manifests)
	if err != nil {
		return &RefusedError{Object: "Work " + w.Namespace + "/" + w.Name, Reasons: field.ErrorList{field.Invalid(field.NewPath("spec", "workload", "manifests"), "(undecodable)", err.Error())}}
	}
	rendered, err := RenderTrusted(ctx, c, is, rb, tmpl, t, fleet, cluster)
	if err != nil {
		// The binding controller reports the render failure on the
		// binding; it could not have written this Work now either.
		return ErrPending
	}
	if r, ok := rendered[cluster]; ok {
		raw, err := render.CanonicalJSON(r.Object)
		if err != nil {
			return err
		}
		want, err := ManifestsDigest([]api.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
		if err != nil {
			return err
		}
		if got == want {
			return nil
		}
	}
	if t.Rollout == nil {
		return ErrPending
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

// ManifestsDigest is the hex SHA-256 of a Work's manifests, each decoded
// and encoded again (sorted keys, numbers as written) so the apiserver's
// encoding of a stored Work gives the digest of the bytes the binding
// controller wrote.
func ManifestsDigest(manifests []api.Manifest) (string, error) {
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
