package shared

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// claims records which member clients carry this control plane's marker
// for their Cluster, so that execution registers (one request) only once per
// client; the cluster status controller checks again on every probe.
type claims struct {
	// host reads the host's kube-system namespace, whose UID identifies
	// this control plane: replicas share it, another host differs.
	host  client.Reader
	fleet string

	mu      sync.Mutex
	owner   string
	claimed map[string]*member.Client
}

// ownerID is "controlplane/<UID of the host's kube-system namespace>",
// read once.
func (m *claims) ownerID(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owner != "" {
		return m.owner, nil
	}
	var ns corev1.Namespace
	if err := m.host.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &ns); err != nil {
		return "", fmt.Errorf("read the host's identity (namespace %s): %w", metav1.NamespaceSystem, err)
	}
	m.owner = "controlplane/" + string(ns.UID)
	return m.owner, nil
}

// claim registers the member in the fleet under the Cluster's name for
// this control plane (member.RegisterOwned), as Terraform registers a
// flotilla_cluster. A member registered otherwise is refused with an error
// wrapping member.ErrAlreadyRegistered. Errors name the Cluster.
func (m *claims) claim(ctx context.Context, cl *clusterv1.Cluster, c *member.Client) error {
	owner, err := m.ownerID(ctx)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	if err := member.RegisterOwned(ctx, c, m.fleet, cl.Name, owner); err != nil {
		m.mu.Lock()
		delete(m.claimed, cl.Name)
		m.mu.Unlock()
		if errors.Is(err, member.ErrAlreadyRegistered) {
			return fmt.Errorf("cluster %s: %w; remove ConfigMap %s/%s from the member if it no longer belongs there",
				cl.Name, err, member.MembershipNamespace, member.MembershipName)
		}
		return fmt.Errorf("cluster %s: %w", cl.Name, err)
	}
	m.mu.Lock()
	m.claimed[cl.Name] = c
	m.mu.Unlock()
	return nil
}

// ensure claims the member unless its current client already has been.
func (m *claims) ensure(ctx context.Context, cl *clusterv1.Cluster, c *member.Client) error {
	m.mu.Lock()
	done := m.claimed[cl.Name] == c
	m.mu.Unlock()
	if done {
		return nil
	}
	return m.claim(ctx, cl, c)
}

// Probe is the cluster status controller's view of a member: its collected
// status, Ready only once the member is claimed for this Cluster. A refused
// connection, an unreachable member and a membership conflict each give
// Ready=False with their own reason and a message naming the cluster.
func (m *Members) Probe(ctx context.Context, cl *clusterv1.Cluster) (api.ClusterStatus, error) {
	c, err := m.client(ctx, cl)
	if err != nil {
		return notReady(notReadyReason(err), err), err
	}
	status, err := member.CollectStatus(ctx, c)
	if !apimeta.IsStatusConditionTrue(status.Conditions, api.ClusterConditionReady) {
		return status, err
	}
	if cerr := m.claims.claim(ctx, cl, c); cerr != nil {
		return notReady(notReadyReason(cerr), cerr), cerr
	}
	return status, err
}

// notReady is the probed status of a member that must not be used.
func notReady(reason string, err error) api.ClusterStatus {
	return api.NotReadyStatus(reason, err, metav1.Now())
}

// Nodes is the per-node index of the member called name (member.Client's
// Nodes), from the client the cluster status controller connected; nil
// when there is none yet, the member is not watched (a Pull cluster), or
// its informers are syncing or failing.
func (m *Members) Nodes(name string) *estimator.Nodes {
	c, ok := m.Cache.Peek(name)
	if !ok {
		return nil
	}
	return c.Nodes()
}
