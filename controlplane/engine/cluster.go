package engine

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// The calls below are the engine's side of registering a member cluster
// (Terraform's flotilla_cluster) and reading its live status (the cluster
// status data source): front ends reach members through them, never
// through member directly, so connections, probes and the membership
// marker are handled in one place.

// Connect returns the member's client from the engine's cache and probes
// it. The error names the cluster ("cluster east is not connected: …",
// wrapping api.ErrNotConnected and the other probe sentinels) and never
// holds a credential.
func (e *Engine) Connect(ctx context.Context, name string, conn member.Connection) (*member.Client, error) {
	client, err := e.cache.Get(ctx, name, conn)
	if err != nil {
		return nil, err
	}
	err = client.Probe(ctx)
	if ctx.Err() == nil {
		// What the cluster's own read learnt spares the run's other calls
		// their timeouts (see reach.go).
		e.noteReach(name, client.Fingerprint(), err)
	}
	if err != nil {
		return nil, err
	}
	return client, nil
}

// Forget drops the engine's client of a member, so its credentials leave
// memory and the next call connects again.
func (e *Engine) Forget(name string) { e.cache.Invalidate(name) }

// Register records in the member that it belongs to the engine's fleet
// under name, with its declared facts (member.RegisterWithFacts). A member
// registered under another fleet, name or owner is refused with an error
// wrapping member.ErrAlreadyRegistered that names the other registration.
func (e *Engine) Register(ctx context.Context, c *member.Client, name string, facts member.Facts) error {
	return member.RegisterWithFacts(ctx, c, e.opts.Fleet, name, facts)
}

// Registration reads what the member's membership marker records; found
// is false when it carries none. The facts are read only when withFacts is
// set, so a hand-edited facts annotation does not stand in the way of a
// plain membership check.
func (e *Engine) Registration(ctx context.Context, c *member.Client, withFacts bool) (reg member.Registration, found bool, err error) {
	if withFacts {
		return member.ReadRegistration(ctx, c)
	}
	reg.Fleet, reg.Member, found, err = member.ReadMembership(ctx, c)
	return reg, found, err
}

// Unregister removes the membership marker the engine's fleet wrote for
// name; a marker recording anything else is left alone (member.Unregister).
func (e *Engine) Unregister(ctx context.Context, c *member.Client, name string) error {
	return member.Unregister(ctx, c, e.opts.Fleet, name)
}

// ReleasePrevious unregisters name from the cluster the previous
// connection reaches, unless that is the physical cluster current reaches
// (compared by Karmada's cluster ID, the kube-system namespace's UID).
// released says whether a marker was removed. The previous connection gets
// a client of its own: the engine's cache holds current under name.
func (e *Engine) ReleasePrevious(ctx context.Context, name string, previous member.Connection, current *member.Client) (released bool, err error) {
	old, err := member.NewCache(member.CacheOptions{}).Get(ctx, name, previous)
	if err == nil {
		err = old.Probe(ctx)
	}
	if err != nil {
		return false, err
	}
	oldID, err := member.ClusterID(ctx, old)
	if err != nil {
		return false, err
	}
	currentID, err := member.ClusterID(ctx, current)
	if err != nil {
		return false, err
	}
	if oldID == currentID {
		return false, nil
	}
	if err := member.Unregister(ctx, old, e.opts.Fleet, name); err != nil {
		return false, err
	}
	return true, nil
}

// MemberStatus collects a member's live status now, bounded by the
// engine's status timeout: a member that stalls reads as unreachable, as in
// a plan. connected is false when no client could even be built (a
// kubeconfig file that is gone, say); the status is then Ready=False,
// ClusterNotReachable. The error says what could not be collected; a Ready
// status with an error is incomplete.
func (e *Engine) MemberStatus(ctx context.Context, name string, conn member.Connection) (status api.ClusterStatus, connected bool, err error) {
	client, err := e.cache.Get(ctx, name, conn)
	if err != nil {
		return api.NotReadyStatus(api.ReasonClusterNotReachable, err, metav1.Time{}), false, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.StatusTimeout)
	defer cancel()
	status, err = member.CollectStatus(ctx, client)
	return status, true, err
}
