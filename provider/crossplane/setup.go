package crossplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// Defaults of Options.
const (
	DefaultPollInterval = time.Minute
	// DefaultPendingPollInterval is the poll interval of a managed resource
	// that is not Ready yet, so a rollout shows up without waiting a minute.
	DefaultPendingPollInterval = 10 * time.Second
	DefaultMaxReconcileRate    = 10
	DefaultConcurrency         = 2
)

// Options configures the provider's reconcilers. Zero fields take the defaults.
type Options struct {
	// PollInterval is how often a Ready managed resource is observed again.
	PollInterval time.Duration
	// PendingPollInterval is how often a managed resource that is not Ready
	// is observed again; it never exceeds PollInterval.
	PendingPollInterval time.Duration
	// MaxReconcileRate is the global rate of reconciles per second.
	MaxReconcileRate int
	// Concurrency is how many resources of one kind reconcile at once.
	Concurrency int
	// InjectedIdentity is the host for provider configs whose credentials
	// source is InjectedIdentity: the apiserver the provider itself runs
	// against. Nil refuses that source. Only ClusterProviderConfigs may use
	// it.
	InjectedIdentity *rest.Config
	// AllowKubeconfigExecAndFiles lets the host kubeconfig of a
	// ClusterProviderConfig run exec plugins and auth providers and read
	// local files (tokenFile, certificate paths). Namespaced
	// ProviderConfigs and Cluster managed resources never may: their
	// writers are tenants, and the provider would run their commands with
	// its own identity.
	AllowKubeconfigExecAndFiles bool
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.PendingPollInterval <= 0 {
		o.PendingPollInterval = DefaultPendingPollInterval
	}
	o.PendingPollInterval = min(o.PendingPollInterval, o.PollInterval)
	if o.MaxReconcileRate <= 0 {
		o.MaxReconcileRate = DefaultMaxReconcileRate
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return o
}

// NewScheme returns a scheme with the built-in kinds, CRDs, flotilla's host
// kinds and the provider's kinds. It starts from the control plane's scheme,
// so a kind the control plane learns is one the provider knows too (the
// control plane runs beside the provider in one manager).
func NewScheme() (*runtime.Scheme, error) {
	s, err := shared.NewScheme()
	if err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// Setup registers the provider config reconcilers and one managed resource
// reconciler per kind with the manager, whose scheme must come from
// NewScheme.
func Setup(mgr ctrl.Manager, o Options) error {
	o = o.withDefaults()
	global := ratelimiter.NewGlobal(o.MaxReconcileRate)
	hosts := newHostConnector(mgr.GetClient(), mgr.GetScheme(), o.InjectedIdentity, o.AllowKubeconfigExecAndFiles)
	for _, pc := range []struct {
		gvk schema.GroupVersionKind
		obj client.Object
	}{
		{v1alpha1.ProviderConfigGroupVersionKind, &v1alpha1.ProviderConfig{}},
		{v1alpha1.ClusterProviderConfigGroupVersionKind, &v1alpha1.ClusterProviderConfig{}},
	} {
		name := providerconfig.ControllerName(pc.gvk.GroupKind().String())
		r := providerconfig.NewReconciler(mgr, resource.ProviderConfigKinds{
			Config:    pc.gvk,
			Usage:     v1alpha1.ProviderConfigUsageGroupVersionKind,
			UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind,
		},
			providerconfig.WithLogger(logging.NewLogrLogger(mgr.GetLogger().WithName(name))),
			providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))), //nolint:staticcheck // crossplane-runtime's recorder takes the legacy events API
		)
		err := ctrl.NewControllerManagedBy(mgr).Named(name).
			WithOptions(controllerOptions(o)).
			For(pc.obj).
			Watches(&v1alpha1.ProviderConfigUsage{}, &resource.EnqueueRequestForProviderConfig{}).
			Complete(ratelimiter.NewReconciler(name, forgetHosts(mgr.GetClient(), hosts, pc.gvk.Kind, r), global))
		if err != nil {
			return fmt.Errorf("set up %s controller: %w", pc.gvk.Kind, err)
		}
	}
	kube := mgr.GetClient()
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.ClusterGroupVersionKind, &v1alpha1.Cluster{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.Cluster] {
			return &clusterClient{kube: kube, host: h}
		}); err != nil {
		return err
	}
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.PropagationPolicyGroupVersionKind, &v1alpha1.PropagationPolicy{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.PropagationPolicy] {
			return &specClient[*v1alpha1.PropagationPolicy, *policyv1.PropagationPolicy]{specObject: propagationPolicyKind, host: h}
		}); err != nil {
		return err
	}
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.OverridePolicyGroupVersionKind, &v1alpha1.OverridePolicy{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.OverridePolicy] {
			return &specClient[*v1alpha1.OverridePolicy, *policyv1.OverridePolicy]{specObject: overridePolicyKind, host: h}
		}); err != nil {
		return err
	}
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.FederatedResourceQuotaGroupVersionKind, &v1alpha1.FederatedResourceQuota{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.FederatedResourceQuota] {
			return &specClient[*v1alpha1.FederatedResourceQuota, *policyv1.FederatedResourceQuota]{specObject: federatedResourceQuotaKind, host: h}
		}); err != nil {
		return err
	}
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.FederatedHPAGroupVersionKind, &v1alpha1.FederatedHPA{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.FederatedHPA] {
			return &specClient[*v1alpha1.FederatedHPA, *autoscalingv1.FederatedHPA]{specObject: federatedHPAKind, host: h}
		}); err != nil {
		return err
	}
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.CronFederatedHPAGroupVersionKind, &v1alpha1.CronFederatedHPA{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.CronFederatedHPA] {
			return &specClient[*v1alpha1.CronFederatedHPA, *autoscalingv1.CronFederatedHPA]{specObject: cronFederatedHPAKind, host: h}
		}); err != nil {
		return err
	}
	if err := setupManaged(mgr, o, global, hosts, v1alpha1.MultiClusterServiceGroupVersionKind, &v1alpha1.MultiClusterService{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.MultiClusterService] {
			return &specClient[*v1alpha1.MultiClusterService, *networkingv1.MultiClusterService]{specObject: multiClusterServiceKind, host: h}
		}); err != nil {
		return err
	}
	return setupManaged(mgr, o, global, hosts, v1alpha1.ManifestGroupVersionKind, &v1alpha1.Manifest{},
		func(h *host) managed.TypedExternalClient[*v1alpha1.Manifest] { return &manifestClient{host: h} })
}

// forgetHosts runs before a provider config's reconciler: it drops the
// config's host client when the config is gone, being deleted or changed
// (hostConnector.forgetChanged), then runs next.
func forgetHosts(kube client.Reader, hosts *hostConnector, kind string, next reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var pc client.Object = &v1alpha1.ClusterProviderConfig{}
		if kind == v1alpha1.ProviderConfigKind {
			pc = &v1alpha1.ProviderConfig{}
		}
		err := kube.Get(ctx, req.NamespacedName, pc)
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("read %s %s: %w", kind, req.NamespacedName, err)
		}
		gone := err != nil || !pc.GetDeletionTimestamp().IsZero()
		hosts.forgetChanged(providerConfigKey{Kind: kind, Namespace: req.Namespace, Name: req.Name}, pc.GetGeneration(), !gone)
		return next.Reconcile(ctx, req)
	})
}

// setupManaged registers the managed resource reconciler of one kind.
func setupManaged[M resource.ModernManaged](mgr ctrl.Manager, o Options, global ratelimiter.RateLimiter, hosts *hostConnector,
	gvk schema.GroupVersionKind, obj M, external func(*host) managed.TypedExternalClient[M],
) error {
	name := managed.ControllerName(strings.ToLower(gvk.Kind) + "." + gvk.Group)
	connector := managed.TypedExternalConnectorFn[M](func(ctx context.Context, mg M) (managed.TypedExternalClient[M], error) {
		h, err := hosts.connect(ctx, mg)
		if err != nil {
			return nil, err
		}
		return external(h), nil
	})
	r := managed.NewReconciler(mgr, resource.ManagedKind(gvk),
		managed.WithTypedExternalConnector[M](connector),
		managed.WithManagementPolicies(),
		// Host object names are the external names: a create that was cut
		// short is safe to retry.
		managed.WithDeterministicExternalName(true),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollIntervalHook(func(mg resource.Managed, poll time.Duration) time.Duration {
			if mg.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
				return min(poll, o.PendingPollInterval)
			}
			return poll
		}),
		managed.WithLogger(logging.NewLogrLogger(mgr.GetLogger().WithName(name))),
		managed.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))), //nolint:staticcheck // crossplane-runtime's recorder takes the legacy events API
	)
	err := ctrl.NewControllerManagedBy(mgr).Named(name).
		WithOptions(controllerOptions(o)).
		WithEventFilter(resource.DesiredStateChanged()).
		For(obj).
		Complete(ratelimiter.NewReconciler(name, r, global))
	if err != nil {
		return fmt.Errorf("set up %s controller: %w", gvk.Kind, err)
	}
	return nil
}

func controllerOptions(o Options) controller.Options {
	recoverPanic := true
	return controller.Options{
		MaxConcurrentReconciles: o.Concurrency,
		RateLimiter:             ratelimiter.NewController(),
		RecoverPanic:            &recoverPanic,
	}
}
