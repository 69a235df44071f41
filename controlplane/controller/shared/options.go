package shared

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// Defaults of Options, Karmada's where Karmada has one.
const (
	DefaultFleet            = "flotilla"
	DefaultProbeInterval    = 10 * time.Second
	DefaultFailureThreshold = 30 * time.Second
	DefaultSuccessThreshold = 30 * time.Second
	DefaultNoExecuteAfter   = 5 * time.Minute
	DefaultResync           = 30 * time.Second
	DefaultProbeTimeout     = 5 * time.Second
	// DefaultGracefulEvictionTimeout is Karmada's --graceful-eviction-timeout.
	DefaultGracefulEvictionTimeout = 10 * time.Minute
	// DefaultMemberRequestTimeout bounds each request to a member.
	DefaultMemberRequestTimeout = member.DefaultRequestTimeout
	// DefaultWorkRequestTimeout bounds each request of a Work's apply,
	// observation or removal to its member: well below DefaultWorkTimeout,
	// so a member that stops answering frees its worker within it.
	DefaultWorkRequestTimeout = 10 * time.Second
	// DefaultWorkTimeout bounds the member part of one Work's apply,
	// observation or removal.
	DefaultWorkTimeout = 2 * time.Minute
	// DefaultClusterStatusWorkers is how many Clusters are probed at once.
	DefaultClusterStatusWorkers = 8
	// DefaultWorkWorkers is how many Works the execution and the work status
	// controllers each handle at once.
	DefaultWorkWorkers = 8
	// DefaultWorkStatusWorkers is how many Works the work status controller
	// observes at once. An observation is at most one host status write,
	// and one member read unless the member's watch delivered the change
	// (its copy is read then), and costs about a millisecond and a half of
	// CPU (measured in BenchmarkMemberStatusLatency): its time is waiting
	// on the apiservers, so a burst of member changes drains about this
	// many times faster than one at a time, where eight workers drained
	// 1,000 changes at 40 a second.
	DefaultWorkStatusWorkers = 32
	// DefaultTemplateWorkers is how many templates each detector handles at
	// once (Karmada's --concurrent-resource-template-syncs).
	DefaultTemplateWorkers = 5
	// DefaultBindingWorkers is how many bindings the binding controller
	// handles at once (Karmada's --concurrent-resourcebinding-syncs).
	DefaultBindingWorkers = 5
	// DefaultSchedulerWorkers is how many bindings the continuous scheduler
	// schedules at once (Karmada's scheduler has one worker).
	DefaultSchedulerWorkers = 5
	// DefaultMCSWorkers is how many Services the multi-cluster services
	// controller collects or imports at once. A key's time is waiting on
	// the members' and the host's apiservers (a Service's and an export's
	// read per provider, a write per changed slice or Work), so one worker
	// left a full sync of 20 Services x 4 members with its worker busy for
	// the whole sync (BenchmarkMCSSync).
	DefaultMCSWorkers = 8
	// DefaultDeschedulingInterval is Karmada's --descheduling-interval.
	DefaultDeschedulingInterval = 2 * time.Minute
	// DefaultFederatedHPASyncPeriod is Karmada's and Kubernetes'
	// --horizontal-pod-autoscaler-sync-period.
	DefaultFederatedHPASyncPeriod = 15 * time.Second
	// DefaultUnschedulableThreshold is Karmada's --unschedulable-threshold.
	DefaultUnschedulableThreshold = 5 * time.Minute
)

// DefaultReservedNamespaces are the host namespaces whose objects are never
// templates when Options names none: Kubernetes' own (kube-system,
// kube-public, kube-node-lease and any other kube-*), flotilla's system
// namespace and the agents' Lease namespace, as Karmada skips kube-* and
// karmada-*; karmada-cluster, the credentials and Lease namespace of
// Karmada's groups, whichever groups this process serves (the list is a
// flag default, fixed before the groups are chosen). The execution
// namespaces (flotilla-es-* and karmada-es-*) are always reserved,
// whatever the list says.
var DefaultReservedNamespaces = []string{"kube-*", SystemNamespace, apis.FlotillaGroups.ClusterLeaseNamespace(), apis.KarmadaGroups.CredentialsNamespace()}

// ParseReservedNamespaces reads a comma-separated list of namespace names,
// each optionally ending in "*" to reserve every namespace with that prefix,
// such as "kube-*,flotilla-system,istio-system".
func ParseReservedNamespaces(list string) ([]string, error) {
	var out []string
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name := strings.TrimSuffix(item, "*")
		if name == "" || strings.Contains(name, "*") {
			return nil, fmt.Errorf("reserved namespace %q: want a namespace name, or a prefix followed by a single trailing *", item)
		}
		out = append(out, item)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("reserved namespaces %q: name at least one namespace", list)
	}
	return out, nil
}

// DefaultTemplateKinds are the common namespaced workload, network and
// config kinds, the detected kinds before discovery; kept as a ready-made
// filter (Options.TemplateKinds).
var DefaultTemplateKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
}

// ParseTemplateKinds reads a comma-separated list of kinds written as
// "group/version/Kind", or "version/Kind" for the core group, such as
// "apps/v1/Deployment,v1/ConfigMap,example.com/v1/Widget".
func ParseTemplateKinds(list string) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.Split(item, "/")
		var gvk schema.GroupVersionKind
		switch len(parts) {
		case 2:
			gvk = schema.GroupVersionKind{Version: parts[0], Kind: parts[1]}
		case 3:
			gvk = schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}
		default:
			return nil, fmt.Errorf("template kind %q: want group/version/Kind, or version/Kind for the core group", item)
		}
		if gvk.Version == "" || gvk.Kind == "" || (len(parts) == 3 && gvk.Group == "") {
			return nil, fmt.Errorf("template kind %q: want group/version/Kind, or version/Kind for the core group", item)
		}
		out = append(out, gvk)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("template kinds %q: name at least one kind", list)
	}
	return out, nil
}

// Options configures the reconcilers. Zero fields take the defaults above.
type Options struct {
	// Fleet is stamped into the ownership labels of every member object.
	Fleet string
	// KarmadaAdoptions are the templates whose member objects a stopped
	// Karmada applied and the execution takes over without a write
	// (ReadKarmadaAdoptions, read once at start in Karmada's groups).
	KarmadaAdoptions KarmadaAdoptions
	// TemplateKinds filters the kinds the detector watches on the host:
	// only these, namespaced or cluster-scoped, each from when the host
	// serves it (a CRD installed later is picked up without a restart).
	// Empty: every kind the host serves (preferred version) that can be
	// listed and watched, except events, leases, nodes and flotilla's own.
	TemplateKinds []schema.GroupVersionKind
	// ProbeInterval is how often each Cluster is probed.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe and status collection.
	ProbeTimeout time.Duration
	// FailureThreshold is how long probes must keep failing before a Ready
	// cluster is reported not Ready (Karmada's --cluster-failure-threshold).
	FailureThreshold time.Duration
	// SuccessThreshold is how long probes must keep succeeding before a not
	// Ready cluster is reported Ready (--cluster-success-threshold).
	SuccessThreshold time.Duration
	// NoExecuteAfter is how long a cluster stays not Ready before its taint
	// gets the NoExecute effect and its replicas are moved elsewhere
	// (Karmada's --failover-eviction-timeout).
	NoExecuteAfter time.Duration
	// Resync is how often each Work is applied again and its member status
	// read again, and how long an unready member waits before a retry. An
	// object the member's watch shows as flotilla's last apply left it
	// (execution.AppliedWatch) is neither read nor sent again: drift
	// correction costs the member nothing while there is no drift.
	Resync time.Duration
	// StatusResync is how often the member status of a Work is read again
	// when its objects are watched in the member (the watch tells of each
	// change as it happens): a backstop for a change the watch missed.
	// Default: Resync. A Work whose objects are not watched (a member
	// that refuses the watch, or one not synced yet) is read every Resync.
	StatusResync time.Duration
	// GracefulEvictionTimeout is how long the copy on a cluster the template
	// failed over from is kept while the new clusters are not yet healthy
	// (Karmada's --graceful-eviction-timeout). A task's gracePeriodSeconds
	// overrides it.
	GracefulEvictionTimeout time.Duration
	// AllowKubeconfigExecAndFiles lets the kubeconfigs of Cluster
	// credentials Secrets (all in CredentialsNamespace) run exec plugins and
	// auth providers and read files of the control plane's machine
	// (tokenFile, certificate paths). Off, only inline credentials are
	// accepted: an exec plugin would run with the control plane's identity,
	// and a tokenFile pointing at its service account token would send that
	// token to the kubeconfig's server.
	AllowKubeconfigExecAndFiles bool
	// MemberRequestTimeout bounds each request to a member (the member
	// clients' rest.Config.Timeout).
	MemberRequestTimeout time.Duration
	// WorkTimeout bounds the member part of one Work's apply, observation or
	// removal; a Work that takes longer is reported failed and tried again
	// after Resync.
	WorkTimeout time.Duration
	// WorkRequestTimeout bounds each request of that member part (a read,
	// an apply, a removal); a request that takes longer fails the Work at
	// once, naming the cluster and the timeout, so a member that stalls
	// holds a worker for about this long rather than for WorkTimeout.
	// WorkTimeout bounds it in any case.
	WorkRequestTimeout time.Duration
	// ClusterStatusWorkers is how many Clusters are probed at once, so one
	// member that is slow to answer delays no other member's status.
	ClusterStatusWorkers int
	// WorkWorkers is how many Works the execution controller, and
	// separately the work status controller, handle at once.
	WorkWorkers int
	// MemberWorkers is how many of those workers may work on one member at
	// once; it must be below WorkWorkers, so a member that stalls leaves
	// workers for the others. A Work whose member is at the limit waits
	// and is tried again shortly. Default: half of WorkWorkers.
	MemberWorkers int
	// WorkStatusWorkers is how many Works the work status controller
	// observes at once; of them, the same share as MemberWorkers of
	// WorkWorkers may work on one member (StatusMemberWorkers).
	WorkStatusWorkers int
	// TemplateWorkers and BindingWorkers are how many templates each
	// detector, and bindings the binding controller, handle at once.
	TemplateWorkers, BindingWorkers int
	// SchedulerWorkers is how many bindings the continuous scheduler
	// schedules at once, taken from its priority queue in priority order.
	SchedulerWorkers int
	// ScheduleBacklogHold is how many templates and bindings may wait for
	// the detectors and the scheduler before the binding controller holds
	// back its writes (Works, binding and template status) and the
	// scheduler its Events, until the queues are that short again (issue
	// 40): on a cold start they took the host apiserver from the schedule.
	// 0 means DefaultScheduleBacklogHold; negative holds nothing.
	ScheduleBacklogHold int
	// MCSWorkers is how many Services (a collection, a ServiceImport or a
	// MultiClusterService) the multi-cluster services controller handles
	// at once.
	MCSWorkers int
	// ReservedNamespaces are the host namespaces whose objects are never
	// templates, so they never reach a member: a name, or a prefix ending
	// in "*". The execution namespaces are reserved in any case.
	ReservedNamespaces []string
	// AllowNamespacedOverwrite lets a namespaced PropagationPolicy's
	// conflictResolution: Overwrite adopt existing member objects. Off by
	// default: a namespaced policy is a tenant's, and adoption takes over
	// (and a later prune releases) objects someone else put in the
	// member. A ClusterPropagationPolicy, which only an administrator
	// writes, may always overwrite.
	AllowNamespacedOverwrite bool
	// DisableNamespaceSync turns off the namespace sync (Karmada's
	// namespace controller, on by default there too): host namespaces are
	// then created in members only as the namespace of an object
	// propagated into them. Works it wrote before stay.
	DisableNamespaceSync bool
	// DisableMultiClusterServices turns off the multi-cluster services
	// controller (ServiceExport, ServiceImport), so the control plane's
	// host identity needs no EndpointSlice rights. Collected slices and
	// import Works it made before stay until it runs again.
	DisableMultiClusterServices bool
	// Descheduler runs the descheduler (Karmada's karmada-descheduler, off
	// by default there too): every DeschedulingInterval it takes the
	// replicas kube-scheduler has found unschedulable in a member for
	// longer than UnschedulableThreshold off that member's share of a
	// dynamically divided binding, so the scheduler places them where they
	// fit.
	Descheduler bool
	// DeschedulingInterval is how often the descheduler looks.
	DeschedulingInterval time.Duration
	// UnschedulableThreshold is how long a pod must have been
	// unschedulable before the descheduler moves its replica.
	UnschedulableThreshold time.Duration
	// CredentialSecretsOnly keeps the control plane's reads of Secrets to
	// CredentialsNamespace, where the Clusters' credentials live: Secrets are
	// then neither template kinds nor propagated as dependencies
	// (propagateDeps leaves them out), so the host may grant the control
	// plane Secrets in that one namespace (the Helm chart does). The
	// caller restricts its cache the same way (SecretCacheNamespaces).
	CredentialSecretsOnly bool
	// CronClock is the clock CronFederatedHPA rules are scheduled on: when
	// a rule is due and the timer that wakes the controller for it. Nil is
	// the real clock; tests pass a fake one, so a rule "every minute" runs
	// when the test steps the clock, not after a minute of waiting.
	// ClusterProxy configures the cluster proxy (an aggregated API) and its
	// impersonation RBAC in members; both are off unless its BindAddress
	// or Listener is set.
	ClusterProxy fleetview.Options
	CronClock    clock.WithDelayedExecution
	// FederatedHPASyncPeriod is how often each FederatedHPA reads its
	// target's pod metrics from the members and decides again
	// (Kubernetes' --horizontal-pod-autoscaler-sync-period).
	FederatedHPASyncPeriod time.Duration
	// Probes is where the cluster status controller records each Push
	// cluster's last successful probe, for the dashboard the same process
	// serves; nil records nothing.
	Probes *ProbeTimes

	// kinds are the template kinds the detectors run for, from discovery;
	// Setup sets it (WithKinds), and the controllers' binding checks use
	// it.
	kinds ServedKinds
	// backlog holds downstream writes while the schedule's queues are
	// long; nil holds nothing.
	backlog *Backlog
	// interpreters is the one interpreter cache of every controller;
	// Setup and SetupAgent set it (WithInterpreters; nil loads afresh per
	// call).
	interpreters *hoststore.Interpreters
}

// Validate refuses options that cannot work together.
func (o Options) Validate() error {
	o = o.WithDefaults()
	if o.WorkWorkers > 1 && o.MemberWorkers >= o.WorkWorkers {
		return fmt.Errorf("member workers (%d) must be below work workers (%d), or a stalled member can take every worker", o.MemberWorkers, o.WorkWorkers)
	}
	return nil
}

// StatusMemberWorkers is how many of the work status controller's workers
// may work on one member at once: MemberWorkers' share of WorkWorkers,
// applied to WorkStatusWorkers, so a stalled member holds the same share
// of either controller (16 of 32 by default) and leaves the rest to the
// others.
func (o Options) StatusMemberWorkers() int {
	o = o.WithDefaults()
	if o.WorkWorkers <= 1 {
		return max(1, o.WorkStatusWorkers/2)
	}
	return max(1, o.WorkStatusWorkers*o.MemberWorkers/o.WorkWorkers)
}

// secretKind is the core Secret kind, never a template kind when
// CredentialSecretsOnly.
var secretKind = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// DependencyKinds are the v1 kinds propagateDeps follows: those
// interpret.GetDependencies names, less Secrets when CredentialSecretsOnly.
func (o Options) DependencyKinds() []string {
	if !o.CredentialSecretsOnly {
		return dependencyKinds
	}
	return slices.DeleteFunc(slices.Clone(dependencyKinds), func(k string) bool { return k == secretKind.Kind })
}

// SecretCacheNamespaces are the namespaces whose Secrets the manager's
// cache may hold: only CredentialsNamespace when CredentialSecretsOnly,
// else nil (every namespace).
func (o Options) SecretCacheNamespaces() []string {
	if o.CredentialSecretsOnly {
		return []string{CredentialsNamespace()}
	}
	return nil
}

// Reserved reports whether the host namespace ns is reserved: its objects
// are never templates and no ResourceBinding in it is rendered.
func (o Options) Reserved(ns string) bool {
	if anyExecutionNamespace(ns) {
		return true
	}
	if _, ok := ClusterOfReportNamespace(ns); ok {
		return true
	}
	reserved := o.ReservedNamespaces
	if len(reserved) == 0 {
		reserved = DefaultReservedNamespaces
	}
	for _, r := range reserved {
		if prefix, ok := strings.CutSuffix(r, "*"); ok {
			if strings.HasPrefix(ns, prefix) {
				return true
			}
		} else if ns == r {
			return true
		}
	}
	return false
}

// WithDefaults returns o with every unset option at its default.
func (o Options) WithDefaults() Options {
	if o.Fleet == "" {
		o.Fleet = DefaultFleet
	}
	if len(o.ReservedNamespaces) == 0 {
		o.ReservedNamespaces = DefaultReservedNamespaces
	}
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.ProbeInterval, DefaultProbeInterval)
	set(&o.ProbeTimeout, DefaultProbeTimeout)
	set(&o.FailureThreshold, DefaultFailureThreshold)
	set(&o.SuccessThreshold, DefaultSuccessThreshold)
	set(&o.NoExecuteAfter, DefaultNoExecuteAfter)
	set(&o.Resync, DefaultResync)
	set(&o.StatusResync, o.Resync)
	set(&o.GracefulEvictionTimeout, DefaultGracefulEvictionTimeout)
	set(&o.MemberRequestTimeout, DefaultMemberRequestTimeout)
	set(&o.WorkTimeout, DefaultWorkTimeout)
	set(&o.WorkRequestTimeout, DefaultWorkRequestTimeout)
	set(&o.DeschedulingInterval, DefaultDeschedulingInterval)
	set(&o.FederatedHPASyncPeriod, DefaultFederatedHPASyncPeriod)
	set(&o.UnschedulableThreshold, DefaultUnschedulableThreshold)
	o.WorkRequestTimeout = min(o.WorkRequestTimeout, o.WorkTimeout)
	count := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	if o.CronClock == nil {
		o.CronClock = clock.RealClock{}
	}
	count(&o.ClusterStatusWorkers, DefaultClusterStatusWorkers)
	count(&o.WorkWorkers, DefaultWorkWorkers)
	count(&o.MemberWorkers, max(1, o.WorkWorkers/2))
	count(&o.WorkStatusWorkers, DefaultWorkStatusWorkers)
	count(&o.TemplateWorkers, DefaultTemplateWorkers)
	count(&o.BindingWorkers, DefaultBindingWorkers)
	count(&o.SchedulerWorkers, DefaultSchedulerWorkers)
	count(&o.MCSWorkers, DefaultMCSWorkers)
	return o
}

// MemberNamespaceTTL is how long the execution trusts that a member
// namespace it found or created still exists, instead of reading it before
// each Work's apply; an apply that finds it gone makes it again at once.
const MemberNamespaceTTL = 10 * time.Minute

// HostWriteMargin is what a reconcile that talks to a member gets beyond
// the work timeout, for its reads and status writes on the host: the
// controller-runtime ReconciliationTimeout guardrail is the sum.
const HostWriteMargin = 30 * time.Second
