package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/work"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// Defaults of AgentOptions, Karmada's karmada-agent's.
const (
	// DefaultAgentLeaseDuration is --cluster-lease-duration.
	DefaultAgentLeaseDuration = 40 * time.Second
	// DefaultAgentStatusInterval is --cluster-status-update-frequency.
	DefaultAgentStatusInterval = 10 * time.Second
)

// AgentMembershipOwner is the owner an agent records in its member's
// membership marker (member.RegisterOwned): a member an agent serves is
// refused to a control plane pushing to it, and the other way round.
const AgentMembershipOwner = "flotilla-agent"

// AgentOptions configures a pull-mode agent (SetupAgent).
type AgentOptions struct {
	// Cluster is the agent's Cluster in the hub (required).
	Cluster string
	// LeaseDuration is written into the agent's Lease: the control plane
	// reports the cluster's Ready Unknown once that long has passed since
	// the last renewal. Default DefaultAgentLeaseDuration.
	LeaseDuration time.Duration
	// RenewInterval is how often the Lease is renewed; default a quarter of
	// LeaseDuration (Karmada's renew interval fraction).
	RenewInterval time.Duration
	// StatusInterval is how often the cluster's status is collected from
	// the member and written to the hub; default DefaultAgentStatusInterval.
	StatusInterval time.Duration
	// MemberCache, when set, is the cache mc came from: a change to one of
	// the member's EndpointSlices the agent reports is then reported at
	// once, not at the next StatusInterval.
	MemberCache *member.Cache
	// Options are the execution settings shared with the control plane:
	// Fleet (it must be the control plane's), ProbeTimeout, the success
	// and failure thresholds of Ready, Resync, WorkTimeout and the workers.
	Options shared.Options
}

func (o AgentOptions) withDefaults() AgentOptions {
	o.Options = o.Options.WithDefaults()
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = DefaultAgentLeaseDuration
	}
	if o.RenewInterval <= 0 {
		o.RenewInterval = o.LeaseDuration / 4
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = DefaultAgentStatusInterval
	}
	return o
}

// Validate refuses options an agent cannot run with.
func (o AgentOptions) Validate() error {
	o = o.withDefaults()
	if msgs := api.ValidateClusterName(o.Cluster); len(msgs) > 0 {
		return fmt.Errorf("cluster name %q: %s", o.Cluster, strings.Join(msgs, "; "))
	}
	if o.LeaseDuration < time.Second {
		return fmt.Errorf("lease duration %s: a Lease counts whole seconds; want at least 1s", o.LeaseDuration)
	}
	if o.RenewInterval >= o.LeaseDuration {
		return fmt.Errorf("lease renew interval %s must be below the lease duration %s, or the cluster turns Unknown between renewals", o.RenewInterval, o.LeaseDuration)
	}
	return o.Options.Validate()
}

// AgentCacheOptions are the manager cache options of an agent's hub
// connection: Works of its execution namespace, and its own Cluster only,
// so its least-privilege identity (RegisterAgent) never lists anything
// else.
func AgentCacheOptions(cluster string) cache.Options {
	return cache.Options{
		DefaultNamespaces: map[string]cache.Config{shared.ExecutionNamespace(cluster): {}},
		ByObject: map[client.Object]cache.ByObject{
			&clusterv1.Cluster{}: {Field: fields.OneTermEqualSelector("metadata.name", cluster)},
		},
	}
}

// SetupAgent registers a pull-mode agent with mgr, a manager of the hub
// with AgentCacheOptions: the agent registers its Cluster (creating it with
// syncMode Pull when it may, else adopting the one RegisterAgent made),
// renews its Lease, reports the member's status (member.CollectStatus, as
// the control plane's probe does) and runs the execution and work status
// controllers for the Works of its execution namespace against mc, its own
// member. Hub outages only delay it: the member keeps what it runs, and
// the Lease and status are written again once the hub answers.
func SetupAgent(mgr ctrl.Manager, mc *member.Client, opts AgentOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()
	o := opts.Options
	// The agent's execution and status controllers share one interpreter
	// cache, as the control plane's do; it reports nothing on the
	// customizations, which the agent may only read.
	o = o.WithInterpreters(hoststore.NewInterpreters())
	c, now := mgr.GetClient(), time.Now
	a := &agent{hub: c, reader: mgr.GetAPIReader(), member: mc, opts: opts, now: now, log: mgr.GetLogger().WithName("agent").WithValues("cluster", opts.Cluster)}
	a.reports = &reporter{hub: c, reader: mgr.GetAPIReader(), member: mc, cluster: opts.Cluster, log: a.log, kick: make(chan struct{}, 1)}
	if opts.MemberCache != nil {
		opts.MemberCache.OnEndpointSlices(func(cluster string, s *discoveryv1.EndpointSlice) {
			if cluster == opts.Cluster && !multicluster.Ours(s) {
				a.reports.notify()
			}
		})
	}
	if err := mgr.Add(a); err != nil {
		return fmt.Errorf("set up agent: %w", err)
	}
	local := &agentMember{client: mc, cluster: opts.Cluster, fleet: o.Fleet}
	exec := &execution.Executor{Clusters: local, Fleet: o.Fleet, RequestTimeout: o.WorkRequestTimeout, Namespaces: execution.NewNamespaceCache(shared.MemberNamespaceTTL), Applied: execution.NewApplyCache()}
	if err := work.SetupExecution(mgr, exec, o, now, shared.Recorder{}, true); err != nil {
		return fmt.Errorf("set up agent execution controller: %w", err)
	}
	if err := work.SetupStatus(mgr, exec, local, local, o, now, true); err != nil {
		return fmt.Errorf("set up agent work status controller: %w", err)
	}
	return nil
}

// agentMember is the agent's execution.Connector: its own member, once the
// member carries the agent's membership marker.
type agentMember struct {
	client         *member.Client
	cluster, fleet string

	mu         sync.Mutex
	registered bool
}

// Connect returns the member's target; any other cluster is not connected.
func (m *agentMember) Connect(ctx context.Context, cluster string) (execution.Target, error) {
	if cluster != m.cluster {
		return execution.Target{}, fmt.Errorf("cluster %s: %w: the agent of cluster %s serves no other", cluster, api.ErrNotConnected, m.cluster)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.registered {
		if err := member.RegisterOwned(ctx, m.client, m.fleet, m.cluster, AgentMembershipOwner); err != nil {
			return execution.Target{}, err
		}
		m.registered = true
	}
	return execution.Target{Dynamic: m.client.Dynamic, Mapper: shared.Resettable{RESTMapper: m.client.Mapper}, Watched: m.client}, nil
}

// WatchApplied watches the applied objects of the agent's own member.
func (m *agentMember) WatchApplied(cluster string, gvr schema.GroupVersionResource, selector string, notify member.AppliedHandler) (synced, syncing bool) {
	if cluster != m.cluster {
		return false, false
	}
	return m.client.WatchApplied(gvr, selector, notify)
}

// agent registers the Cluster, renews the Lease and reports status.
type agent struct {
	hub    client.Client
	reader client.Reader
	member *member.Client
	opts   AgentOptions
	now    func() time.Time
	log    logr.Logger

	// streak is the run of equal Ready results of the member.
	streak shared.ProbeStreak
	// started is whether streak holds a result yet.
	started bool
	// reports reports the member's exported endpoints.
	reports *reporter
}

// syncModeOf is a Cluster's sync mode, Push when it names none (Karmada's
// default).
func syncModeOf(cl *clusterv1.Cluster) api.ClusterSyncMode {
	if cl.Spec.SyncMode == "" {
		return api.Push
	}
	return cl.Spec.SyncMode
}

// refusedError is a registration the agent must not retry: the hub's
// Cluster is not one this agent may serve.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// NeedLeaderElection is false: an agent is one process per member.
func (a *agent) NeedLeaderElection() bool { return false }

// Start registers the Cluster, retrying through hub and member outages (a
// refusal ends the agent), then renews the Lease, reports status and
// reports the endpoints of its member's Services (reporter) until ctx
// ends.
func (a *agent) Start(ctx context.Context) error {
	for {
		err := a.register(ctx)
		if err == nil {
			break
		}
		if refused := (*refusedError)(nil); errors.As(err, &refused) {
			return err
		}
		a.log.Info("cluster not registered yet; retrying", "reason", err.Error())
		if !sleep(ctx, a.opts.RenewInterval) {
			return nil
		}
	}
	a.log.Info("cluster registered", "syncMode", api.Pull)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); a.every(ctx, a.opts.RenewInterval, "renew lease", a.renew) }()
	go func() { defer wg.Done(); a.every(ctx, a.opts.StatusInterval, "report cluster status", a.report) }()
	go func() {
		defer wg.Done()
		a.reports.run(ctx, a.opts.StatusInterval, a.opts.StatusInterval+a.opts.Options.ProbeTimeout)
	}()
	wg.Wait()
	return nil
}

// every runs step now and then every interval until ctx ends; a failing
// step (the hub or the member not answering) is logged and tried again at
// the next tick.
func (a *agent) every(ctx context.Context, interval time.Duration, what string, step func(context.Context) error) {
	for {
		sctx, cancel := context.WithTimeout(ctx, interval+a.opts.Options.ProbeTimeout)
		err := step(sctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			a.log.Info(what+" failed; retrying", "reason", err.Error())
		}
		if !sleep(ctx, interval) {
			return
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// register makes sure the hub has this member's Cluster with syncMode
// Pull: it creates it when missing (an identity from RegisterAgent may
// not, and finds the one RegisterAgent made), and adopts an existing Pull
// Cluster, recording the member's ID when the Cluster has none. A Push
// Cluster, or one recorded for another member, is refused.
func (a *agent) register(ctx context.Context) error {
	name := a.opts.Cluster
	id, err := member.ClusterID(ctx, a.member)
	if err != nil {
		return fmt.Errorf("read the ID of the member of cluster %s: %w", name, err)
	}
	var cl clusterv1.Cluster
	err = a.reader.Get(ctx, client.ObjectKey{Name: name}, &cl)
	switch {
	case shared.IsNotFound(err):
		cl = clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: api.ClusterSpec{SyncMode: api.Pull, ID: id}}
		err := a.hub.Create(ctx, &cl)
		if apierrors.IsForbidden(err) {
			return &refusedError{fmt.Sprintf("cluster %s does not exist in the hub and this agent may not create it; run `terraform-provider-flotilla register --cluster-name %s` with the hub administrator's kubeconfig first: %v", name, name, err)}
		}
		if err != nil {
			return fmt.Errorf("create cluster %s in the hub: %w", name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read cluster %s from the hub: %w", name, err)
	}
	if cl.Spec.SyncMode != api.Pull {
		return &refusedError{fmt.Sprintf("cluster %s exists in the hub with spec.syncMode %s: the control plane pushes to it; set spec.syncMode: Pull for an agent to serve it", name, syncModeOf(&cl))}
	}
	if cl.Spec.ID != "" && cl.Spec.ID != id {
		return &refusedError{fmt.Sprintf("cluster %s in the hub is the member with spec.id %s; this member's ID (its kube-system namespace's UID) is %s", name, cl.Spec.ID, id)}
	}
	if cl.Spec.ID == "" {
		orig := cl.DeepCopy()
		cl.Spec.ID = id
		err := a.hub.Patch(ctx, &cl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsForbidden(err):
			// The identity RegisterAgent issues may not write its
			// Cluster's spec (agentRules); the membership marker in the
			// member still keeps it from serving two names.
			a.log.Info("the agent's identity may not record the member's ID in its Cluster; set spec.id as the hub's administrator to pin it", "cluster", name, "id", id)
		case err != nil:
			return fmt.Errorf("record the member's ID in cluster %s: %w", name, err)
		}
	}
	return nil
}

// renew renews the agent's Lease, creating it (and its namespace, when
// the identity may) when missing.
func (a *agent) renew(ctx context.Context) error {
	name := a.opts.Cluster
	now := metav1.NewMicroTime(a.now())
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(name),
		LeaseDurationSeconds: ptr.To(int32(a.opts.LeaseDuration / time.Second)),
		RenewTime:            &now,
	}
	var l coordinationv1.Lease
	err := a.reader.Get(ctx, client.ObjectKey{Namespace: shared.ClusterLeaseNamespace(), Name: name}, &l)
	switch {
	case shared.IsNotFound(err):
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.ClusterLeaseNamespace()}}
		if err := a.hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("create namespace %s: %w", shared.ClusterLeaseNamespace(), err)
		}
		l = coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: shared.ClusterLeaseNamespace(), Name: name}, Spec: spec}
		if err := a.hub.Create(ctx, &l); err != nil {
			return fmt.Errorf("create lease %s/%s: %w", shared.ClusterLeaseNamespace(), name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read lease %s/%s: %w", shared.ClusterLeaseNamespace(), name, err)
	}
	l.Spec = spec
	if err := a.hub.Update(ctx, &l); err != nil {
		return fmt.Errorf("renew lease %s/%s: %w", shared.ClusterLeaseNamespace(), name, err)
	}
	return nil
}

// report collects the member's status as the control plane's probe does
// and writes it to the Cluster, its Ready condition following the member
// after the success or failure threshold (nextStatus). The taints are the
// control plane's to keep.
func (a *agent) report(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, a.opts.Options.ProbeTimeout)
	probed, probeErr := member.CollectStatus(pctx, a.member)
	cancel()
	if probeErr != nil {
		a.log.V(1).Info("member status incomplete", "reason", probeErr.Error())
	}
	now := a.now()
	ready := apimeta.IsStatusConditionTrue(probed.Conditions, api.ClusterConditionReady)
	switch {
	case !a.started && ready:
		// The agent's first report of a member that answers is taken
		// as it is, as Karmada takes a just-joined cluster's: the
		// Unknown it replaces is the control plane's word that no agent
		// ran, not a member that failed its probes, so waiting out the
		// success threshold would only keep a working member from its
		// Works. A failing first probe waits out the failure threshold
		// as any other.
		a.streak, a.started = shared.ProbeStreak{Ready: ready}, true
	case !a.started || a.streak.Ready != ready:
		a.streak, a.started = shared.ProbeStreak{Ready: ready, Since: now}, true
	}
	var cl clusterv1.Cluster
	if err := a.reader.Get(ctx, client.ObjectKey{Name: a.opts.Cluster}, &cl); err != nil {
		return fmt.Errorf("read cluster %s: %w", a.opts.Cluster, err)
	}
	status := shared.NextStatus(cl.Status, probed, ready, a.streak.Since, now, a.opts.Options)
	if equality.Semantic.DeepEqual(status, cl.Status) {
		return nil
	}
	orig := cl.DeepCopy()
	cl.Status = status
	if err := a.hub.Status().Patch(ctx, &cl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write status of cluster %s: %w", a.opts.Cluster, err)
	}
	return nil
}
