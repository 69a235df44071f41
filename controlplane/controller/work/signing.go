package work

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// The control plane signs its verdict on a Pull cluster's Work, so the
// cluster's agent applies only what the control plane checked, even where
// someone other than the control plane may write Works in the execution
// namespace (a host without the admission webhook, or a role granted by
// mistake): an annotation alone can be copied or typed, a signature over
// the Work's identity, generation and content cannot be made without the
// control plane's key.
const (
	// AnnotationWorkSignature holds the control plane's ed25519 signature
	// (base64) over workPayload: the Work's namespace, name, UID, the
	// verified generation, the conflict resolution and the SHA-256 of its
	// spec (which holds preserveResourcesOnDeletion too).
	AnnotationWorkSignature = "work.flotilla.io/signature"
	// AnnotationOwnerSignature holds the signature over ownerPayload (the
	// Work's namespace, name and UID): the control plane once verified
	// this very Work, so the agent may remove its objects when it is
	// deleted, even after a later generation was never verified.
	AnnotationOwnerSignature = "work.flotilla.io/owner-signature"
	// AnnotationSigningKey is set by the control plane on a Pull Cluster:
	// the public half (base64) of the key its Works are signed with. The
	// agent may read its Cluster but not write its metadata (its rights
	// stop at clusters/status), so only a Cluster writer can change it.
	AnnotationSigningKey = "cluster.flotilla.io/work-signing-key"
	// SigningKeySecret is the Secret in flotilla-system holding the
	// control plane's private key (data key "ed25519"). Every replica reads
	// the same one; the first to start creates it.
	SigningKeySecret = "flotilla-work-signing-key"
	signingKeyData   = "ed25519"
)

// workPayload is what AnnotationWorkSignature signs.
func workPayload(w *workv1.Work, generation int64, conflict string) ([]byte, error) {
	spec, err := json.Marshal(w.Spec)
	if err != nil {
		return nil, fmt.Errorf("encode the spec of work %s/%s: %w", w.Namespace, w.Name, err)
	}
	sum := sha256.Sum256(spec)
	return fmt.Appendf(nil, "flotilla-work/v1\n%s\n%s\n%s\n%d\n%s\n%x", w.Namespace, w.Name, w.UID, generation, conflict, sum), nil
}

// ownerPayload is what AnnotationOwnerSignature signs.
func ownerPayload(w *workv1.Work) []byte {
	return fmt.Appendf(nil, "flotilla-work-owner/v1\n%s\n%s\n%s", w.Namespace, w.Name, w.UID)
}

// workSigner holds the control plane's signing key, read (or created) on
// first use from the host.
type workSigner struct {
	reader client.Reader
	writer client.Client
	mu     sync.Mutex
	key    ed25519.PrivateKey
}

// signingKey returns the key, reading or creating SigningKeySecret the
// first time. A failure is not remembered: the next Work tries again.
func (s *workSigner) signingKey(ctx context.Context) (ed25519.PrivateKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	key := client.ObjectKey{Namespace: shared.CredentialsNamespace(), Name: SigningKeySecret}
	var sec corev1.Secret
	err := s.reader.Get(ctx, key, &sec)
	if shared.IsNotFound(err) {
		_, priv, gerr := ed25519.GenerateKey(rand.Reader)
		if gerr != nil {
			return nil, fmt.Errorf("generate the work signing key: %w", gerr)
		}
		sec = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{"app.kubernetes.io/managed-by": "flotilla"}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{signingKeyData: priv.Seed()},
		}
		err = s.writer.Create(ctx, &sec)
		if apierrors.IsAlreadyExists(err) {
			// Another replica was first: use its key.
			err = s.reader.Get(ctx, key, &sec)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read the work signing key, Secret %s: %w", key, err)
	}
	seed := sec.Data[signingKeyData]
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("secret %s: data key %q holds %d bytes, want an ed25519 seed of %d", key, signingKeyData, len(seed), ed25519.SeedSize)
	}
	s.key = ed25519.NewKeyFromSeed(seed)
	return s.key, nil
}

// sign returns the annotations that record the control plane's verdict on
// w: the verified generation, the conflict resolution and both signatures.
func (s *workSigner) sign(ctx context.Context, w *workv1.Work, conflict string) (map[string]string, string, error) {
	key, err := s.signingKey(ctx)
	if err != nil {
		return nil, "", err
	}
	payload, err := workPayload(w, w.Generation, conflict)
	if err != nil {
		return nil, "", err
	}
	enc := base64.StdEncoding.EncodeToString
	return map[string]string{
		AnnotationVerifiedGeneration:        strconv.FormatInt(w.Generation, 10),
		shared.AnnotationConflictResolution: conflict,
		AnnotationWorkSignature:             enc(ed25519.Sign(key, payload)),
		AnnotationOwnerSignature:            enc(ed25519.Sign(key, ownerPayload(w))),
	}, enc(key.Public().(ed25519.PublicKey)), nil
}

// publishKey records the public key on a Pull Cluster, before the first
// Work signed with it, so the agent can check them.
func (s *workSigner) publishKey(ctx context.Context, cl *clusterv1.Cluster, public string) error {
	if cl.Annotations[AnnotationSigningKey] == public {
		return nil
	}
	orig := cl.DeepCopy()
	if cl.Annotations == nil {
		cl.Annotations = map[string]string{}
	}
	cl.Annotations[AnnotationSigningKey] = public
	if err := s.writer.Patch(ctx, cl, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("publish the work signing key on cluster %s: %w", cl.Name, err)
	}
	return nil
}

// errUnsigned says why the agent does not take a Work as verified.
var errUnsigned = errors.New("not signed by the control plane")

// clusterKey is the public key the control plane published on cl.
func clusterKey(cl *clusterv1.Cluster) (ed25519.PublicKey, error) {
	raw := cl.Annotations[AnnotationSigningKey]
	if raw == "" {
		return nil, fmt.Errorf("cluster %s has no %s annotation yet: %w", cl.Name, AnnotationSigningKey, errUnsigned)
	}
	pub, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("cluster %s: annotation %s is not a base64 ed25519 public key: %w", cl.Name, AnnotationSigningKey, errUnsigned)
	}
	return pub, nil
}

// verifySignature checks the signature in annotation over payload.
func verifySignature(pub ed25519.PublicKey, w *workv1.Work, annotation string, payload []byte) error {
	sig, err := base64.StdEncoding.DecodeString(w.Annotations[annotation])
	if err != nil || !ed25519.Verify(pub, payload, sig) {
		return fmt.Errorf("work %s/%s: %s: %w", w.Namespace, w.Name, annotation, errUnsigned)
	}
	return nil
}
