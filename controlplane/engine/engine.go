package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// DefaultStatusTTL is how long a member's collected status is reused. One
// Terraform run plans every manifest within it, so each member is probed
// once per run, not once per manifest.
const DefaultStatusTTL = time.Minute

// DefaultStatusTimeout bounds the collection of one member's status: a
// member that has not answered by then is planned as unreachable, so a
// stalled member cannot hold a Terraform run.
const DefaultStatusTimeout = 20 * time.Second

// Member is one member cluster as a front end declares it.
type Member struct {
	// Cluster holds the member's name and declared facts: labels, provider,
	// region, zones and taints. Its status is filled in by the engine.
	Cluster api.Cluster
	// Connection reaches the member. Nil means it is not known yet (a
	// cluster created in the same Terraform apply): the member is then
	// planned from its declared facts alone.
	Connection *member.Connection
	// Recorded, when set, is the member's status as an earlier Snapshot
	// saw it. Snapshot then uses it instead of probing the member, so a
	// plan made again from the same inputs comes out the same even if the
	// member has changed meanwhile (see RecordedStatus).
	Recorded *RecordedStatus
}

// Fleet is what a plan is made against: members and policies.
type Fleet struct {
	// Members are the member clusters.
	Members []Member
	// PropagationPolicies are the namespaced propagation policies.
	PropagationPolicies []api.PropagationPolicy
	// ClusterPropagationPolicies are the cluster-wide propagation policies.
	ClusterPropagationPolicies []api.ClusterPropagationPolicy
	// OverridePolicies are the namespaced override policies.
	OverridePolicies []api.OverridePolicy
	// ClusterOverridePolicies are the cluster-wide override policies.
	ClusterOverridePolicies []api.ClusterOverridePolicy
	// Interpreter is the built-in table extended by the fleet's resource
	// interpreter customizations; nil interprets the built-in kinds only.
	Interpreter *interpret.Interpreter
	// Quotas are the FederatedResourceQuotas the plan respects
	// (plan.Fleet.Quotas).
	Quotas []api.FederatedResourceQuota
	// PerNode asks Plan for the per-node estimate (see Plan): from the
	// nodes read with a member's live status, or from the room its
	// recorded status holds for the template's requirements
	// (RecordedStatus.Fits). Apply re-plans live with the same kind of
	// figures.
	PerNode bool
}

// Options configures an Engine.
type Options struct {
	// Fleet names the fleet in ownership labels; required.
	Fleet string
	// FieldManager is the server-side apply field manager; default "flotilla".
	FieldManager string
	// Parallelism bounds how many members are written to at once; default 8.
	Parallelism int
	// StatusTTL is how long collected member status, and the lists Observe
	// reads objects from, are reused; default DefaultStatusTTL.
	StatusTTL time.Duration
	// StatusTimeout bounds the collection of one member's status; default
	// DefaultStatusTimeout.
	StatusTimeout time.Duration
	// RequestTimeout bounds each request to a member; default
	// member.DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ProbeTimeout bounds each probe of a member; default
	// member.DefaultProbeTimeout. A member that does not answer within it
	// is skipped by every call for StatusTTL (see reach.go).
	ProbeTimeout time.Duration
	// ConnectTimeout, when set below ProbeTimeout, bounds the part of a
	// probe spent getting a connection (member.CacheOptions.ConnectTimeout).
	ConnectTimeout time.Duration
}

// Engine is the synchronous driver. It is safe for concurrent use.
type Engine struct {
	opts  Options
	cache *member.Cache
	// reads serves Observe from one LIST per member, kind and namespace;
	// every write through the engine resets it.
	reads *execution.ReadCache

	mu      sync.Mutex
	status  map[string]statusEntry
	collect singleflight.Group
	// reach remembers, per member, whether it answers (see reach.go).
	reach  map[string]reachEntry
	probes singleflight.Group
}

type statusEntry struct {
	fingerprint string
	at          time.Time
	status      api.ClusterStatus
	err         error
	// nodes is the member's per-node index read with status; nil when the
	// nodes or pods could not be listed.
	nodes *estimator.Nodes
}

// New returns an Engine.
func New(opts Options) (*Engine, error) {
	if opts.Fleet == "" {
		return nil, errors.New("engine: fleet name is required")
	}
	if opts.FieldManager == "" {
		opts.FieldManager = "flotilla"
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = execution.DefaultConcurrency
	}
	if opts.StatusTTL <= 0 {
		opts.StatusTTL = DefaultStatusTTL
	}
	if opts.StatusTimeout <= 0 {
		opts.StatusTimeout = DefaultStatusTimeout
	}
	return &Engine{
		opts: opts, cache: member.NewCache(member.CacheOptions{RequestTimeout: opts.RequestTimeout, ProbeTimeout: opts.ProbeTimeout, ConnectTimeout: opts.ConnectTimeout}), status: map[string]statusEntry{},
		reach: map[string]reachEntry{}, reads: execution.NewReadCache(opts.StatusTTL),
	}, nil
}

// Members returns the cache that owns every member connection, for front
// ends that reach members directly (registering a cluster, reading its status).
func (e *Engine) Members() *member.Cache { return e.cache }

// Fleet returns the fleet name the engine writes into ownership labels.
func (e *Engine) Fleet() string { return e.opts.Fleet }

// Snapshot returns the members as the scheduler sees them: declared facts
// plus live status for every member with a known connection. A member that
// does not answer gets Ready=False and the unreachable NoExecute taint; the
// returned map says why, per member. Members without a connection are
// returned as declared.
func (e *Engine) Snapshot(ctx context.Context, members []Member) ([]api.Cluster, map[string]error) {
	out := make([]api.Cluster, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i := range members {
		out[i] = members[i].Cluster
		if r := members[i].Recorded; r != nil {
			out[i].Status, errs[i] = r.Status, r.err()
			out[i].Spec.Taints = taintedIfUnreachable(out[i].Spec.Taints, r.Status, errs[i])
			continue
		}
		if members[i].Connection == nil {
			continue
		}
		wg.Go(func() {
			status, err := e.clusterStatus(ctx, members[i])
			out[i].Status = status
			out[i].Spec.Taints = taintedIfUnreachable(out[i].Spec.Taints, status, err)
			errs[i] = err
		})
	}
	wg.Wait()
	reasons := map[string]error{}
	for i, err := range errs {
		if err != nil {
			reasons[members[i].Cluster.Name] = err
		}
	}
	return out, reasons
}

// taintedIfUnreachable adds the unreachable NoExecute taint to a member
// whose status could not be read and that is not Ready, as Karmada's taint
// manager would; the taints slice is copied, never changed in place.
func taintedIfUnreachable(taints []corev1.Taint, status api.ClusterStatus, err error) []corev1.Taint {
	if err == nil || apimeta.IsStatusConditionTrue(status.Conditions, api.ClusterConditionReady) {
		return taints
	}
	return append(append([]corev1.Taint(nil), taints...), corev1.Taint{Key: api.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute})
}

// clusterStatus collects a member's status, reusing a recent one.
func (e *Engine) clusterStatus(ctx context.Context, m Member) (api.ClusterStatus, error) {
	name := m.Cluster.Name
	client, err := e.cache.Get(ctx, name, *m.Connection)
	if err != nil {
		return notReachable(err), fmt.Errorf("cluster %s: %w", name, err)
	}
	fresh := func() (statusEntry, bool) {
		e.mu.Lock()
		defer e.mu.Unlock()
		entry, ok := e.status[name]
		return entry, ok && entry.fingerprint == client.Fingerprint() && time.Since(entry.at) < e.opts.StatusTTL
	}
	if entry, ok := fresh(); ok {
		return entry.status, entry.err
	}
	// Many manifests plan at once; only one of them collects a member's
	// status. The collection runs under its own deadline, apart from the
	// caller that happened to start it: one caller giving up must neither
	// fail the others nor leave a context error cached as the member's
	// status.
	ch := e.collect.DoChan(name+"\x00"+client.Fingerprint(), func() (any, error) {
		if entry, ok := fresh(); ok {
			return entry, nil
		}
		var status api.ClusterStatus
		var err error
		if entry, ok := e.recentReach(name, client.Fingerprint()); ok && entry.down != nil {
			err = e.remembered(entry)
			status = notReachable(err)
		} else {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.opts.StatusTimeout)
			defer cancel()
			status, err = member.CollectStatus(cctx, client)
			e.noteReach(name, client.Fingerprint(), err)
		}
		if err != nil {
			err = fmt.Errorf("cluster %s: %w", name, err)
		}
		entry := statusEntry{fingerprint: client.Fingerprint(), at: time.Now(), status: status, err: err}
		if err == nil {
			entry.nodes = client.Nodes()
		}
		e.mu.Lock()
		e.status[name] = entry
		e.mu.Unlock()
		return entry, nil
	})
	select {
	case res := <-ch:
		entry := res.Val.(statusEntry)
		return entry.status, entry.err
	case <-ctx.Done():
		err := fmt.Errorf("cluster %s: collect status: %w", name, ctx.Err())
		return notReachable(err), err
	}
}

// notReachable is the status of a member whose status could not be read.
func notReachable(err error) api.ClusterStatus {
	return api.NotReadyStatus(api.ReasonClusterNotReachable, err, metav1.Now())
}

// ForgetStatus drops cached member status, so the next call probes again.
func (e *Engine) ForgetStatus() {
	e.mu.Lock()
	e.status = map[string]statusEntry{}
	e.mu.Unlock()
}

// Plan schedules and renders templates against the fleet. previous[i] is
// what was recorded of templates[i]'s last scheduling result (see
// Previous); previous may be shorter than templates, or nil. The second
// return value says, per member, why its live status could not be read;
// such members are planned as unreachable.
//
// With fleet.PerNode, a member is also estimated node by node (Karmada's
// accurate estimator): its room for a template is the smaller of the
// general estimate and what its nodes can start, as recorded with its
// status (RecordedStatus.Fits) or, for a requirement not recorded there or
// a member read live, as its nodes and pods stand now (see nodeEstimates).
// A member whose nodes could not be read has the general estimate.
func (e *Engine) Plan(ctx context.Context, fleet Fleet, templates []*unstructured.Unstructured, previous []Previous) ([]plan.Result, map[string]error) {
	clusters, reasons := e.Snapshot(ctx, fleet.Members)
	pf := planFleet(e.opts.Fleet, fleet, clusters, bindings(templates, previous))
	if fleet.PerNode {
		pf.NodeEstimates = e.nodeEstimates(ctx, fleet, templates)
	}
	return plan.Plan(pf, templates), reasons
}

func planFleet(name string, fleet Fleet, clusters []api.Cluster, previous []api.ResourceBinding) plan.Fleet {
	return plan.Fleet{
		Name:                       name,
		Clusters:                   clusters,
		PropagationPolicies:        fleet.PropagationPolicies,
		ClusterPropagationPolicies: fleet.ClusterPropagationPolicies,
		OverridePolicies:           fleet.OverridePolicies,
		ClusterOverridePolicies:    fleet.ClusterOverridePolicies,
		Interpreter:                fleet.Interpreter,
		Quotas:                     fleet.Quotas,
		Bindings:                   previous,
	}
}

// connector indexes members; it is the execution Connector. A member the
// engine knows does not answer fails at once (see reach.go).
type connector struct {
	engine  *Engine
	members map[string]Member

	mu           sync.Mutex
	fingerprints map[string]string
}

func (e *Engine) connector(members []Member) *connector {
	c := &connector{engine: e, members: make(map[string]Member, len(members)), fingerprints: map[string]string{}}
	for _, m := range members {
		c.members[m.Cluster.Name] = m
	}
	return c
}

// Connect returns the execution target of a member.
func (c *connector) Connect(ctx context.Context, cluster string) (execution.Target, error) {
	m, ok := c.members[cluster]
	if !ok {
		return execution.Target{}, fmt.Errorf("cluster %s is not a member of this fleet", cluster)
	}
	if m.Connection == nil {
		return execution.Target{}, fmt.Errorf("cluster %s: its connection is not known yet", cluster)
	}
	client, err := c.engine.cache.Get(ctx, cluster, *m.Connection)
	if err != nil {
		return execution.Target{}, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	if err := c.engine.reachable(ctx, cluster, client); err != nil {
		return execution.Target{}, err
	}
	c.mu.Lock()
	c.fingerprints[cluster] = client.Fingerprint()
	c.mu.Unlock()
	return execution.Target{Dynamic: client.Dynamic, Mapper: resettable{client.Mapper}}, nil
}

// unreachable remembers a member a call found it cannot reach.
func (c *connector) unreachable(cluster string, err error) {
	c.mu.Lock()
	fingerprint, ok := c.fingerprints[cluster]
	c.mu.Unlock()
	if ok {
		c.engine.markDown(cluster, fingerprint, err)
	}
}

// resettable adapts the member's mapper, which already asks the member
// again on a miss, to execution's reset hook.
type resettable struct{ apimeta.RESTMapper }

// Reset is a no-op: the dynamic mapper refreshes the group on a miss by itself.
func (resettable) Reset() {}

func (e *Engine) executor(members []Member) *execution.Executor {
	clusters := e.connector(members)
	return &execution.Executor{
		Clusters:     clusters,
		Fleet:        e.opts.Fleet,
		FieldManager: e.opts.FieldManager,
		Concurrency:  e.opts.Parallelism,
		Reads:        e.reads,
		Unreachable:  clusters.unreachable,
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
