package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// The membership marker: a ConfigMap in the member recording the fleet and
// the name it was registered under.
const (
	// MembershipNamespace holds the marker; Register creates it if missing
	// and Unregister leaves it.
	MembershipNamespace = "flotilla-system"
	// MembershipName is the marker ConfigMap's name.
	MembershipName = "flotilla-membership"
	// MembershipFleetKey is the data key holding the fleet.
	MembershipFleetKey = "fleet"
	// MembershipMemberKey is the data key holding the member name.
	MembershipMemberKey = "member"
	// MembershipOwnerKey is the data key holding who in the fleet manages
	// the member, when it is not Terraform: a continuous control plane
	// writes "controlplane/<its host's ID>", so two control planes with the
	// same fleet name never both claim a member. Terraform writes no owner.
	MembershipOwnerKey = "owner"
	// MembershipFactsAnnotation holds the member's declared Facts as JSON.
	// It is an annotation because a ConfigMap's annotations stay mutable
	// when its data is immutable: facts change in place, membership never.
	MembershipFactsAnnotation = "flotilla.io/facts"
)

// Facts are what a front end declares about a member besides its name and
// connection: the parts of Karmada's ClusterSpec (and the cluster's labels)
// the scheduler filters on. RegisterWithFacts records them in the marker so
// that a front end can rebuild its declaration from the member alone
// (terraform import does).
type Facts struct {
	// Labels are the cluster's labels (metadata.labels).
	Labels map[string]string `json:"labels,omitempty"`
	// Provider is the cloud provider (spec.provider).
	Provider string `json:"provider,omitempty"`
	// Region is the region (spec.region).
	Region string `json:"region,omitempty"`
	// Zones are the zones (spec.zones).
	Zones []string `json:"zones,omitempty"`
	// Taints are the cluster's taints (spec.taints).
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// Registration is what a marker records.
type Registration struct {
	// Fleet and Member are the fleet and the name the member joined it under.
	Fleet, Member string
	// Facts are the facts recorded by RegisterWithFacts; nil when the
	// marker carries none (it was written by Register).
	Facts *Facts
}

// fieldManager is flotilla's server-side apply field manager.
const fieldManager = "flotilla"

// registerAttempts bounds Register and Unregister when the marker changes
// under them.
const registerAttempts = 3

// ErrAlreadyRegistered is wrapped by Register's refusal to take over a
// cluster registered under another fleet or name.
var ErrAlreadyRegistered = errors.New("already registered")

// AlreadyRegisteredError is Register's refusal; it wraps ErrAlreadyRegistered.
type AlreadyRegisteredError struct {
	// Host is the apiserver URL of the member.
	Host string
	// Fleet and Member are what the marker records.
	Fleet, Member string
	// WantFleet and WantMember are what Register was asked for.
	WantFleet, WantMember string
	// Owner and WantOwner are the marker's owner and the one asked for
	// (RegisterOwned); empty is Terraform.
	Owner, WantOwner string
}

// Error reads `cluster at https://… is already registered as "east" in fleet
// "prod"; refusing to register it as "west" in fleet "dev"`.
func (e *AlreadyRegisteredError) Error() string {
	if e.Fleet == e.WantFleet && e.Member == e.WantMember {
		return fmt.Sprintf("cluster at %s is already registered as %q in fleet %q by %s; refusing to register it for %s",
			e.Host, e.Member, e.Fleet, ownerName(e.Owner), ownerName(e.WantOwner))
	}
	return fmt.Sprintf("cluster at %s is already registered as %q in fleet %q; refusing to register it as %q in fleet %q",
		e.Host, e.Member, e.Fleet, e.WantMember, e.WantFleet)
}

// ownerName describes a marker's owner for a message.
func ownerName(owner string) string {
	if owner == "" {
		return "Terraform"
	}
	return owner
}

// Unwrap returns ErrAlreadyRegistered.
func (e *AlreadyRegisteredError) Unwrap() error { return ErrAlreadyRegistered }

// Register records in the member that it belongs to fleet under the name
// member, by server-side applying the marker ConfigMap (field manager
// "flotilla", label app.kubernetes.io/managed-by=flotilla). The marker is
// immutable, so two fleets registering the same cluster at once cannot both
// win: the loser's apply is rejected and it reports the winner. Registering
// again under the same fleet and name is a no-op; under another fleet or
// name it fails with an *AlreadyRegisteredError, which is how one physical
// cluster is kept from joining a fleet twice or two fleets at once.
//
// Register leaves the facts of an existing marker alone; RegisterWithFacts
// records them.
func Register(ctx context.Context, c *Client, fleet, member string) error {
	return register(ctx, c, fleet, member, "", nil)
}

// RegisterOwned is Register for a front end that is not Terraform: the
// marker also records owner (MembershipOwnerKey), and a marker with the same
// fleet and member but another owner (or none) is refused like one of
// another fleet. The continuous control plane registers with its own
// identity, so that two control planes of the same fleet name, or Terraform
// and a control plane, never prune each other's objects in one member.
func RegisterOwned(ctx context.Context, c *Client, fleet, member, owner string) error {
	return register(ctx, c, fleet, member, owner, nil)
}

// RegisterWithFacts is Register that also records facts in the marker's
// MembershipFactsAnnotation. Registering again under the same fleet and
// name rewrites the annotation when the facts differ, and only then; the
// write is conditional on the marker read just before, so it never lands on
// a marker another fleet wrote in between.
func RegisterWithFacts(ctx context.Context, c *Client, fleet, member string, facts Facts) error {
	data, err := json.Marshal(facts)
	if err != nil {
		return fmt.Errorf("register cluster %s: encode facts: %w", c.Name, err)
	}
	encoded := string(data)
	return register(ctx, c, fleet, member, "", &encoded)
}

// register applies the marker, with the owner when not empty and the facts
// annotation when facts is not nil.
func register(ctx context.Context, c *Client, fleet, member, owner string, facts *string) error {
	if fleet == "" || member == "" {
		return fmt.Errorf("register cluster %s: fleet and member name must not be empty", c.Name)
	}
	for attempt := 1; ; attempt++ {
		cm, err := c.readMarker(ctx)
		if err != nil {
			return fmt.Errorf("register cluster %s: %w", c.Name, err)
		}
		resourceVersion := ""
		switch {
		case cm == nil:
			if err := c.ensureNamespace(ctx); err != nil {
				return fmt.Errorf("register cluster %s: %w", c.Name, err)
			}
		case !recordsExactly(cm.Data, fleet, member, owner):
			return refusal(c.Host, cm.Data, fleet, member, owner)
		case facts == nil:
			return nil
		default:
			if current, ok := cm.Annotations[MembershipFactsAnnotation]; ok && current == *facts {
				return nil
			}
			// Only the annotation changes; the resourceVersion makes the
			// apply fail rather than rewrite a marker replaced since.
			resourceVersion = cm.ResourceVersion
		}
		err = c.applyMarker(ctx, fleet, member, owner, facts, resourceVersion)
		if err == nil {
			return nil
		}
		// Invalid: someone else's immutable marker appeared since the read.
		// Conflict: the marker changed since the read. NotFound: it was
		// removed since the read, so the conditional write found nothing.
		if attempt < registerAttempts && (apierrors.IsInvalid(err) || apierrors.IsConflict(err) || apierrors.IsNotFound(err)) {
			continue
		}
		return fmt.Errorf("register cluster %s: apply ConfigMap %s/%s: %w", c.Name, MembershipNamespace, MembershipName, c.secrets.scrub(err))
	}
}

// Unregister removes the marker if it records fleet and member and no
// owner (Terraform's), with preconditions so that a marker rewritten in
// between is left alone. A missing marker, or one that records anything else
// (it belongs to whoever registered the cluster since), is left as it is and
// is not an error.
func Unregister(ctx context.Context, c *Client, fleet, member string) error {
	for attempt := 1; ; attempt++ {
		cm, err := c.readMarker(ctx)
		if err != nil {
			return fmt.Errorf("unregister cluster %s: %w", c.Name, err)
		}
		if cm == nil || !recordsExactly(cm.Data, fleet, member, "") {
			return nil
		}
		err = c.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Delete(ctx, MembershipName, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion},
		})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && attempt < registerAttempts:
			continue
		}
		return fmt.Errorf("unregister cluster %s: delete ConfigMap %s/%s: %w", c.Name, MembershipNamespace, MembershipName, c.secrets.scrub(err))
	}
}

// ReadMembership returns the fleet and member name the marker records, and
// found=false when the cluster carries no marker. It does not look at the
// facts, so a hand-edited facts annotation does not stand in its way.
func ReadMembership(ctx context.Context, c *Client) (fleet, member string, found bool, err error) {
	cm, err := c.readMarker(ctx)
	if err != nil {
		return "", "", false, fmt.Errorf("read membership of cluster %s: %w", c.Name, err)
	}
	if cm == nil {
		return "", "", false, nil
	}
	return cm.Data[MembershipFleetKey], cm.Data[MembershipMemberKey], true, nil
}

// ReadRegistration returns what the marker records, facts included, and
// found=false when the cluster carries no marker. A facts annotation that
// is not valid JSON of Facts (edited by hand) is an error.
func ReadRegistration(ctx context.Context, c *Client) (Registration, bool, error) {
	cm, err := c.readMarker(ctx)
	if err != nil {
		return Registration{}, false, fmt.Errorf("read membership of cluster %s: %w", c.Name, err)
	}
	if cm == nil {
		return Registration{}, false, nil
	}
	r := Registration{Fleet: cm.Data[MembershipFleetKey], Member: cm.Data[MembershipMemberKey]}
	if data, ok := cm.Annotations[MembershipFactsAnnotation]; ok {
		var facts Facts
		if err := json.Unmarshal([]byte(data), &facts); err != nil {
			return Registration{}, false, fmt.Errorf("read membership of cluster %s: annotation %s of ConfigMap %s/%s: %w",
				c.Name, MembershipFactsAnnotation, MembershipNamespace, MembershipName, err)
		}
		r.Facts = &facts
	}
	return r, true, nil
}

// ClusterID returns the UID of the member's kube-system namespace, which
// Karmada uses as a cluster's ID (spec.id): it tells two connections to the
// same physical cluster from connections to two clusters, whatever the
// URLs, CAs or credentials say.
func ClusterID(ctx context.Context, c *Client) (string, error) {
	ns, err := c.Kubernetes.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read ID of cluster %s: get namespace %s: %w", c.Name, metav1.NamespaceSystem, c.secrets.scrub(err))
	}
	return string(ns.UID), nil
}

// recordsExactly reports whether a marker's data records fleet, member and
// owner ("" for Terraform), and nothing else: the one test of "one physical
// cluster, one name" that every front end's registration goes through.
func recordsExactly(data map[string]string, fleet, member, owner string) bool {
	return data[MembershipFleetKey] == fleet && data[MembershipMemberKey] == member && data[MembershipOwnerKey] == owner
}

// refusal is the error for registering fleet, member and owner in the
// member at host whose marker records data.
func refusal(host string, data map[string]string, fleet, member, owner string) *AlreadyRegisteredError {
	return &AlreadyRegisteredError{
		Host: host, Fleet: data[MembershipFleetKey], Member: data[MembershipMemberKey], Owner: data[MembershipOwnerKey],
		WantFleet: fleet, WantMember: member, WantOwner: owner,
	}
}

// readMarker returns the marker, or nil when there is none.
func (c *Client) readMarker(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := c.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Get(ctx, MembershipName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get ConfigMap %s/%s: %w", MembershipNamespace, MembershipName, c.secrets.scrub(err))
	}
	return cm, nil
}

// ensureNamespace creates MembershipNamespace unless it exists. It reads
// first so that credentials allowed to write in the namespace but not to
// create namespaces still work.
func (c *Client) ensureNamespace(ctx context.Context) error {
	namespaces := c.Kubernetes.CoreV1().Namespaces()
	_, err := namespaces.Get(ctx, MembershipNamespace, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get namespace %s: %w", MembershipNamespace, c.secrets.scrub(err))
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   MembershipNamespace,
		Labels: map[string]string{render.LabelManagedBy: render.ManagedByFlotilla},
	}}
	_, err = namespaces.Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", MembershipNamespace, c.secrets.scrub(err))
	}
	return nil
}

// applyMarker server-side applies the marker. facts, when not nil, is the
// annotation's value; resourceVersion, when set, makes the apply
// conditional on the marker being unchanged since it was read.
func (c *Client) applyMarker(ctx context.Context, fleet, member, owner string, facts *string, resourceVersion string) error {
	data := map[string]string{MembershipFleetKey: fleet, MembershipMemberKey: member}
	if owner != "" {
		data[MembershipOwnerKey] = owner
	}
	cm := corev1ac.ConfigMap(MembershipName, MembershipNamespace).
		WithLabels(map[string]string{render.LabelManagedBy: render.ManagedByFlotilla}).
		WithData(data).
		WithImmutable(true)
	if facts != nil {
		cm.WithAnnotations(map[string]string{MembershipFactsAnnotation: *facts})
	}
	if resourceVersion != "" {
		cm.WithResourceVersion(resourceVersion)
	}
	_, err := c.Kubernetes.CoreV1().ConfigMaps(MembershipNamespace).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	return err
}
