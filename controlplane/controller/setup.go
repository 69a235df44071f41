package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// templateEventBuffer is how many template events wait for the binding
// controller before the detectors' informers wait for it.
const templateEventBuffer = 1024

// Setup registers every reconciler with the manager. They share one
// member.Cache, the single owner of member connections.
func Setup(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("discovery client for the host: %w", err)
	}
	log := mgr.GetLogger().WithName("template-kinds")
	kinds := &kindRegistry{
		discovery: dc, filter: opts.TemplateKinds, active: map[schema.GroupKind]servedKind{}, noSecrets: opts.CredentialSecretsOnly,
		mayList: listProbe(mgr.GetAPIReader()), denied: map[schema.GroupKind]bool{},
		log: func(gvk schema.GroupVersionKind, err error) {
			log.Info("template kind left out: the control plane may not list it", "kind", gvk.String(), "reason", err.Error())
		},
	}
	opts.kinds = kinds
	c := mgr.GetClient()
	ms := &members{
		reader:            c,
		cache:             member.NewCache(member.CacheOptions{ProbeTimeout: opts.ProbeTimeout, RequestTimeout: opts.MemberRequestTimeout, Watch: true}),
		allowExecAndFiles: opts.AllowKubeconfigExecAndFiles,
		// The host's kube-system is read once, directly: a cached read
		// would watch every namespace.
		claims: &claims{host: mgr.GetAPIReader(), fleet: opts.Fleet, claimed: map[string]*member.Client{}},
	}
	now := time.Now
	// Each reconciler reports its events as its own controller.
	rec := func(name string) recorder { return recorder{events: mgr.GetEventRecorder("flotilla-" + name)} }
	metrics.SetBindingCounter(bindingCounter(c, mgr.Elected()))
	if err := (&clusterReconciler{client: c, members: ms, leases: mgr.GetAPIReader(), opts: opts, now: now, streaks: map[string]probeStreak{}, renewals: map[string]agentLease{}, events: rec("cluster-status")}).setup(mgr); err != nil {
		return fmt.Errorf("set up cluster status controller: %w", err)
	}
	templates := make(chan event.GenericEvent, templateEventBuffer)
	if err := (&bindingReconciler{client: c, reader: mgr.GetAPIReader(), opts: opts, now: now, events: rec("binding")}).setup(mgr, templates); err != nil {
		return fmt.Errorf("set up binding controller: %w", err)
	}
	// The kinds the host serves now are known before the manager starts;
	// their detectors start with the leader, later ones as discovery
	// finds them, and each stops when its kind is no longer served.
	kinds.build = func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
		kc := kindCache{Cache: mgr.GetCache(), ctx: ctx, gk: gvk.GroupKind()}
		return (&detector{client: c, gvk: gvk, namespaced: namespaced, opts: opts}).controller(mgr, kc, templates)
	}
	kinds.forget = forgetInformer(mgr.GetCache())
	kinds.logger = log
	if err := kinds.refresh(); err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(kinds.run(opts.Resync))); err != nil {
		return fmt.Errorf("set up template kind discovery: %w", err)
	}
	if err := (&crdWatch{kinds: kinds, reader: c, now: now}).setup(mgr); err != nil {
		return fmt.Errorf("set up template kind discovery: %w", err)
	}
	orphans := &orphanCollector{client: c, reader: mgr.GetAPIReader(), kinds: kinds}
	kinds.retired = orphans.collectKind
	if err := orphans.setup(mgr); err != nil {
		return fmt.Errorf("set up binding orphan collector: %w", err)
	}
	if err := (&dependenciesDistributor{client: c, opts: opts}).setup(mgr); err != nil {
		return fmt.Errorf("set up dependencies distributor: %w", err)
	}
	if err := (&schedulerReconciler{client: c, opts: opts, now: now, events: rec("scheduler")}).setup(mgr); err != nil {
		return fmt.Errorf("set up scheduler: %w", err)
	}
	if err := (&applicationFailoverReconciler{client: c, now: now, events: rec("application-failover")}).setup(mgr); err != nil {
		return fmt.Errorf("set up application failover controller: %w", err)
	}
	if !opts.DisableNamespaceSync {
		if err := (&namespaceSync{client: c, opts: opts}).setup(mgr); err != nil {
			return fmt.Errorf("set up namespace sync controller: %w", err)
		}
	}
	exec := &execution.Executor{Clusters: ms, Fleet: opts.Fleet, RequestTimeout: opts.WorkRequestTimeout, Namespaces: execution.NewNamespaceCache(memberNamespaceTTL), Applied: execution.NewApplyCache()}
	if err := (&workExecution{client: c, executor: exec, opts: opts, now: now, slots: newMemberSlots(opts.MemberWorkers), events: rec("execution")}).setup(mgr); err != nil {
		return fmt.Errorf("set up execution controller: %w", err)
	}
	if err := (&workStatus{client: c, executor: exec, members: ms, opts: opts, now: now, slots: newMemberSlots(opts.MemberWorkers)}).setup(mgr); err != nil {
		return fmt.Errorf("set up work status controller: %w", err)
	}
	return nil
}
