package work

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// TestVerifiedByHub: the agent takes a Work as verified only when its
// current generation carries the control plane's signature, checked with
// the key published on its Cluster; a typed annotation, a signature copied
// from another Work or generation, a changed spec or another key never pass.
func TestVerifiedByHub(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	signer := &workSigner{key: ed25519.NewKeyFromSeed(seed)}
	seed[0] = 1
	other := &workSigner{key: ed25519.NewKeyFromSeed(seed)}
	cluster := func(s *workSigner) *clusterv1.Cluster {
		cl := &clusterv1.Cluster{}
		cl.Name = "west"
		if s != nil {
			cl.Annotations = map[string]string{AnnotationSigningKey: base64.StdEncoding.EncodeToString(s.key.Public().(ed25519.PublicKey))}
		}
		return cl
	}
	work := func(name string, gen int64) *workv1.Work {
		w := &workv1.Work{}
		w.Namespace, w.Name, w.UID, w.Generation = "flotilla-es-west", name, types.UID("uid-"+name), gen
		w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)}}}
		return w
	}
	signed := func(s *workSigner, w *workv1.Work, cr string) *workv1.Work {
		a, _, err := s.sign(t.Context(), w, cr)
		if err != nil {
			t.Fatal(err)
		}
		w.Annotations = a
		return w
	}
	tests := []struct {
		name     string
		work     *workv1.Work
		cluster  *clusterv1.Cluster
		want     api.ConflictResolution
		pending  bool
		unsigned bool
	}{
		{name: "never verified", work: work("a", 1), cluster: cluster(signer), pending: true},
		{name: "an older generation verified", work: func() *workv1.Work {
			w := signed(signer, work("a", 1), "Abort")
			w.Generation = 2
			return w
		}(), cluster: cluster(signer), pending: true},
		{name: "the annotation typed without a signature", work: func() *workv1.Work {
			w := work("a", 2)
			w.Annotations = map[string]string{AnnotationVerifiedGeneration: "2", shared.AnnotationConflictResolution: "Overwrite"}
			return w
		}(), cluster: cluster(signer), pending: true, unsigned: true},
		{name: "a signature copied from another Work", work: func() *workv1.Work {
			w := work("b", 1)
			w.Annotations = signed(signer, work("a", 1), "Abort").Annotations
			return w
		}(), cluster: cluster(signer), pending: true, unsigned: true},
		{name: "the spec changed after signing, generation kept", work: func() *workv1.Work {
			w := signed(signer, work("a", 1), "Abort")
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"Secret"}`)
			return w
		}(), cluster: cluster(signer), pending: true, unsigned: true},
		{name: "the resolution raised after signing", work: func() *workv1.Work {
			w := signed(signer, work("a", 1), "Abort")
			w.Annotations[shared.AnnotationConflictResolution] = "Overwrite"
			return w
		}(), cluster: cluster(signer), pending: true, unsigned: true},
		{name: "signed with another key", work: signed(other, work("a", 1), "Abort"), cluster: cluster(signer), pending: true, unsigned: true},
		{name: "no key published yet", work: signed(signer, work("a", 1), "Abort"), cluster: cluster(nil), pending: true, unsigned: true},
		{name: "verified, Abort", work: signed(signer, work("a", 2), "Abort"), cluster: cluster(signer), want: api.ConflictAbort},
		{name: "verified with Overwrite", work: signed(signer, work("a", 3), "Overwrite"), cluster: cluster(signer), want: api.ConflictOverwrite},
		{name: "an unknown resolution is Abort", work: signed(signer, work("a", 3), "Adopt"), cluster: cluster(signer), want: api.ConflictAbort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := verifiedByHub(tt.work, tt.cluster)
			if tt.pending {
				if !errors.Is(err, shared.ErrPending) || errors.Is(err, errUnsigned) != tt.unsigned {
					t.Fatalf("got %v, %v; want errPending (unsigned %t)", got, err, tt.unsigned)
				}
				return
			}
			if err != nil || got.Conflict != tt.want {
				t.Fatalf("got %+v, %v; want conflict %s", got, err, tt.want)
			}
		})
	}
}

// TestOwnerSignature: the agent removes a deleted Work's objects only when
// the control plane signed that very Work (namespace, name and UID), at
// any generation; a copied owner signature or a missing key leaves them.
func TestOwnerSignature(t *testing.T) {
	signer := &workSigner{key: ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))}
	cl := &clusterv1.Cluster{}
	cl.Annotations = map[string]string{AnnotationSigningKey: base64.StdEncoding.EncodeToString(signer.key.Public().(ed25519.PublicKey))}
	e := &workExecution{agent: true}
	w := &workv1.Work{}
	w.Namespace, w.Name, w.UID, w.Generation = "flotilla-es-west", "a", "uid-a", 1
	a, _, err := signer.sign(t.Context(), w, "Abort")
	if err != nil {
		t.Fatal(err)
	}
	w.Annotations = a
	w.Generation = 5 // changed since, never verified again
	if owned, _ := e.owned(t.Context(), w, cl); !owned {
		t.Error("a Work the control plane once signed is not owned; want its objects removed on deletion")
	}
	copied := w.DeepCopy()
	copied.UID = "uid-b" // same name, re-created by someone else
	if owned, _ := e.owned(t.Context(), copied, cl); owned {
		t.Error("a re-created Work with a copied owner signature is owned; want its objects left alone")
	}
	if owned, _ := e.owned(t.Context(), w, &clusterv1.Cluster{}); owned {
		t.Error("a Work is owned without a published key")
	}
}

func TestAgentTrigger(t *testing.T) {
	base := &workv1.Work{}
	base.Generation, base.Finalizers = 1, []string{shared.FinalizerExecution}
	stamped := base.DeepCopy()
	stamped.Annotations = map[string]string{AnnotationVerifiedGeneration: "1", AnnotationWorkSignature: "c2ln"}
	if executionTrigger(base, stamped) {
		t.Error("the control plane's execution controller acts on its own verification stamp; want it left to the agent")
	}
	if !agentTrigger(base, stamped) {
		t.Error("the agent ignores the control plane's verification; want it to apply the Work at once")
	}
	if agentTrigger(stamped, stamped.DeepCopy()) {
		t.Error("the agent acts on an update that changes nothing it reads")
	}
}
