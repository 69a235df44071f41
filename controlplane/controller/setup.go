package controller

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/binding"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/clusterstatus"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/cronfederatedhpa"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/customization"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/dependencies"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/descheduler"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/detector"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/failover"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/federatedhpa"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/federatedquota"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/mcs"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/namespacesync"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/policyvalidation"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/schedule"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/work"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// templateEventBuffer is how many template events wait for the binding
// controller before the detectors' informers wait for it.
const templateEventBuffer = 1024

// Setup registers every reconciler with the manager. They share one
// member.Cache, the single owner of member connections.
func Setup(mgr ctrl.Manager, opts shared.Options) error {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	kinds, err := detector.NewKindRegistry(mgr, opts)
	if err != nil {
		return err
	}
	opts = opts.WithKinds(kinds)
	// One interpreter cache for every controller: a customization's
	// scripts load once per generation, not once per reconcile.
	opts = opts.WithInterpreters(hoststore.NewInterpreters())
	// One backlog over the detectors' and the scheduler's queues holds the
	// downstream writes while they are long (issue 40).
	backlog := shared.NewBacklog(opts.ScheduleBacklogHold)
	opts = opts.WithBacklog(backlog)
	if err := mgr.Add(backlog); err != nil {
		return fmt.Errorf("add schedule backlog: %w", err)
	}
	c := mgr.GetClient()
	ms := shared.NewMembers(mgr, opts)
	now := time.Now
	// Each reconciler reports its events as its own controller.
	rec := func(name string) shared.Recorder { return shared.NewRecorder(mgr, name) }
	metrics.SetBindingCounter(shared.BindingCounter(c, mgr.Elected()))
	if err := clusterstatus.Setup(mgr, ms, opts, now, rec("cluster-status")); err != nil {
		return fmt.Errorf("set up cluster status controller: %w", err)
	}
	templates := make(chan event.GenericEvent, templateEventBuffer)
	if err := binding.Setup(mgr, opts, now, rec("binding"), templates); err != nil {
		return fmt.Errorf("set up binding controller: %w", err)
	}
	if err := detector.Setup(mgr, opts, kinds, templates, now); err != nil {
		return fmt.Errorf("set up detectors: %w", err)
	}
	if err := dependencies.Setup(mgr, opts); err != nil {
		return fmt.Errorf("set up dependencies distributor: %w", err)
	}
	if err := schedule.Setup(mgr, ms, opts, now, rec("scheduler").HeldBy(backlog)); err != nil {
		return fmt.Errorf("set up scheduler: %w", err)
	}
	if opts.Descheduler {
		if err := descheduler.Setup(mgr, ms, opts, now, rec("descheduler")); err != nil {
			return fmt.Errorf("set up descheduler: %w", err)
		}
	}
	if err := policyvalidation.Setup(mgr, rec("policy-validation")); err != nil {
		return err
	}
	if err := failover.Setup(mgr, now, rec("application-failover")); err != nil {
		return fmt.Errorf("set up application failover controller: %w", err)
	}
	if !opts.DisableNamespaceSync {
		if err := namespacesync.Setup(mgr, opts); err != nil {
			return fmt.Errorf("set up namespace sync controller: %w", err)
		}
	}
	if err := federatedquota.Setup(mgr, opts, rec("federated-resource-quota")); err != nil {
		return fmt.Errorf("set up federated resource quota controller: %w", err)
	}
	if err := cronfederatedhpa.Setup(mgr, opts, rec("cron-federated-hpa")); err != nil {
		return fmt.Errorf("set up cron federated hpa controller: %w", err)
	}
	if err := federatedhpa.Setup(mgr, ms, opts, now, rec("federated-hpa")); err != nil {
		return fmt.Errorf("set up federated hpa controller: %w", err)
	}
	exec := &execution.Executor{Clusters: ms, Fleet: opts.Fleet, RequestTimeout: opts.WorkRequestTimeout, Namespaces: execution.NewNamespaceCache(shared.MemberNamespaceTTL), Applied: execution.NewApplyCache()}
	if err := work.SetupExecution(mgr, exec, opts, now, rec("execution"), false); err != nil {
		return fmt.Errorf("set up execution controller: %w", err)
	}
	if err := work.SetupStatus(mgr, exec, ms, ms, opts, now, false); err != nil {
		return fmt.Errorf("set up work status controller: %w", err)
	}
	if !opts.DisableMultiClusterServices {
		// The controller watches MultiClusterServices, so their CRD comes
		// with it, and only with it: a host with multi-cluster services off
		// serves no kind that nothing acts on.
		if err := installMultiClusterService(mgr); err != nil {
			return err
		}
		if err := mcs.Setup(mgr, ms, opts, rec("mcs")); err != nil {
			return fmt.Errorf("set up multi-cluster services controller: %w", err)
		}
	}
	if opts.ClusterProxy.BindAddress != "" || opts.ClusterProxy.Listener != nil {
		if err := fleetview.Setup(mgr, ms, opts.ClusterProxy); err != nil {
			return err
		}
	}
	if err := customization.Setup(mgr, opts.Interpreters(), rec("customization-status")); err != nil {
		return fmt.Errorf("set up customization status controller: %w", err)
	}
	return nil
}

// installMultiClusterService installs MultiClusterService's CRD on the
// host before the manager starts, so the mcs controller's informer finds
// the kind at once.
func installMultiClusterService(mgr ctrl.Manager) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return fmt.Errorf("connect to host for the MultiClusterService crd: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crd.InstallMultiClusterService(ctx, c, time.Minute); err != nil {
		return fmt.Errorf("install MultiClusterService crd: %w", err)
	}
	return nil
}
