package shared

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

var errNoCredentials = errors.New("spec.secretRef is not set")

// ErrCredentialsRefused is wrapped by every refusal of a Cluster's
// credentials that is decided before any connection is tried: a
// spec.secretRef outside the control plane's namespace, or a kubeconfig that
// would run a command or read a local file (see member.Connection's
// InlineOnly).
var ErrCredentialsRefused = errors.New("credentials refused")

// CheckSecretRef refuses a Cluster whose spec.secretRef names a Secret
// outside CredentialsNamespace (flotilla-system, or karmada-cluster in
// Karmada's groups): the control plane reads it with its own
// identity, so naming a tenant's namespace would let whoever writes
// Clusters read (and have the control plane act with) any Secret, and let
// a tenant who writes Secrets in their own namespace supply credentials.
func CheckSecretRef(cl *clusterv1.Cluster) error {
	if ref := cl.Spec.SecretRef; ref != nil && ref.Namespace != CredentialsNamespace() {
		return fmt.Errorf("%w: cluster %s: spec.secretRef.namespace %q: the credentials Secret must be in the control plane's credentials namespace %s",
			ErrCredentialsRefused, cl.Name, ref.Namespace, CredentialsNamespace())
	}
	return nil
}

// ClusterConnection is the connection of a Cluster whose credentials Secret
// is s: its kubeconfig key, or else its token and CA bundle used with
// spec.apiEndpoint. The connection is InlineOnly unless allowExecAndFiles:
// only the operator's --allow-kubeconfig-exec-and-files lets a kubeconfig in
// CredentialsNamespace run exec plugins or read files. It is validated; a
// connection that is invalid or refused wraps ErrCredentialsRefused.
func ClusterConnection(cl *clusterv1.Cluster, s *corev1.Secret, allowExecAndFiles bool) (member.Connection, error) {
	if err := CheckSecretRef(cl); err != nil {
		return member.Connection{}, err
	}
	conn := member.Connection{Insecure: cl.Spec.InsecureSkipTLSVerification, ProxyURL: cl.Spec.ProxyURL, InlineOnly: !allowExecAndFiles}
	if kc := s.Data[clusterv1.SecretKeyKubeconfig]; len(kc) > 0 {
		conn.Kubeconfig = kc
	} else {
		conn.Host = cl.Spec.APIEndpoint
		conn.Token = string(s.Data[clusterv1.SecretKeyToken])
		if !conn.Insecure {
			conn.ClusterCACertificate = s.Data[clusterv1.SecretKeyCA]
		}
	}
	if err := conn.Validate(); err != nil {
		return member.Connection{}, fmt.Errorf("%w: secret %s/%s: %w", ErrCredentialsRefused, s.Namespace, s.Name, err)
	}
	return conn, nil
}

// connectionFor reads the credentials Secret of a Cluster and returns its
// connection (ClusterConnection).
func connectionFor(ctx context.Context, c client.Reader, cl *clusterv1.Cluster, allowExecAndFiles bool) (member.Connection, error) {
	ref := cl.Spec.SecretRef
	if ref == nil {
		return member.Connection{}, errNoCredentials
	}
	// Refused before the read, so a Secret elsewhere is never read.
	if err := CheckSecretRef(cl); err != nil {
		return member.Connection{}, err
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &s); err != nil {
		return member.Connection{}, fmt.Errorf("read credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return ClusterConnection(cl, &s, allowExecAndFiles)
}

// notReadyReason is the Ready condition's reason for a member that cannot
// be used: its credentials were refused, it carries another registration's
// membership marker, or it could not be reached.
func notReadyReason(err error) string {
	switch {
	case errors.Is(err, ErrCredentialsRefused):
		return api.ReasonCredentialsRefused
	case errors.Is(err, member.ErrAlreadyRegistered):
		return api.ReasonMembershipConflict
	}
	return api.ReasonClusterNotReachable
}

// Members reaches member clusters through the shared member.Cache, with the
// credentials of their Cluster objects. It is execution's Connector.
type Members struct {
	reader client.Reader
	Cache  *member.Cache
	// allowExecAndFiles is Options.AllowKubeconfigExecAndFiles.
	allowExecAndFiles bool
	// claims is the membership of each member: nothing is applied to a
	// member that carries another Cluster's, fleet's or control plane's
	// marker.
	claims *claims
}

// client returns the cached client of a Cluster.
func (m *Members) client(ctx context.Context, cl *clusterv1.Cluster) (*member.Client, error) {
	conn, err := connectionFor(ctx, m.reader, cl, m.allowExecAndFiles)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	return m.Cache.Get(ctx, cl.Name, conn)
}

// Connect returns the execution target of the named cluster, once the
// member is claimed for it: a member registered elsewhere is never written
// to, nor pruned.
func (m *Members) Connect(ctx context.Context, name string) (execution.Target, error) {
	c, err := m.Member(ctx, name)
	if err != nil {
		return execution.Target{}, err
	}
	return execution.Target{Dynamic: c.Dynamic, Mapper: Resettable{c.Mapper}, Watched: c}, nil
}

// Member returns the cached client of the named cluster, once the member
// is claimed for it (Connect), for readers that need more than an
// execution target (the watched EndpointSlices of multi-cluster services).
func (m *Members) Member(ctx context.Context, name string) (*member.Client, error) {
	var cl clusterv1.Cluster
	if err := m.reader.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	c, err := m.client(ctx, &cl)
	if err != nil {
		return nil, err
	}
	if err := m.claims.ensure(ctx, &cl, c); err != nil {
		return nil, err
	}
	return c, nil
}

// AppliedWatcher watches the objects flotilla applied to members
// (member.Client.WatchApplied): the control plane's Members, or a
// pull-mode agent's own member.
type AppliedWatcher interface {
	// WatchApplied makes sure the objects of resource gvr in cluster that
	// match selector are watched, telling notify of their changes, and
	// reports whether that watch is synced and healthy, or still syncing.
	WatchApplied(cluster string, gvr schema.GroupVersionResource, selector string, notify member.AppliedHandler) (synced, syncing bool)
}

// AppliedSelector selects the objects the fleet applied to a member by
// their ownership labels.
func AppliedSelector(fleet string) string {
	return labels.Set{render.LabelManagedBy: render.ManagedByFlotilla, render.LabelFleet: fleet}.AsSelector().String()
}

// WatchApplied is AppliedWatcher's, through the client the cache holds
// for cluster: a member with no client yet (none was connected) is not
// watched.
func (m *Members) WatchApplied(cluster string, gvr schema.GroupVersionResource, selector string, notify member.AppliedHandler) (synced, syncing bool) {
	c, ok := m.Cache.Peek(cluster)
	if !ok {
		return false, false
	}
	return c.WatchApplied(gvr, selector, notify)
}

// Resettable adapts the member's mapper, which already asks the member again
// on a miss, to execution's reset hook.
type Resettable struct{ apimeta.RESTMapper }

// Reset is a no-op: the member's mapper refreshes a group on a miss by itself.
func (Resettable) Reset() {}
