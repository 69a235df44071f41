package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/dashboard"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
)

// Controlplane runs the continuous control plane against the host apiserver
// named by --kubeconfig: it installs flotilla's CRDs, then runs the
// reconcilers under leader election until SIGINT or SIGTERM.
func Controlplane(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file` of the host apiserver that stores flotilla's objects; required outside a pod, where the pod's ServiceAccount is used")
	kubeContext := fs.String("context", "", "kubeconfig context; default its current-context")
	fleet := fs.String("fleet", shared.DefaultFleet, "fleet name written into the ownership labels of member objects")
	leaderElect := fs.Bool("leader-elect", true, "elect one active process among replicas (a Lease in --leader-election-namespace)")
	leaderNamespace := fs.String("leader-election-namespace", "kube-system", "namespace of the leader election Lease")
	var leases leaseTiming
	fs.DurationVar(&leases.duration, "leader-election-lease-duration", 15*time.Second, "how long a standby waits after the last renewal before it takes the lease over")
	fs.DurationVar(&leases.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader keeps retrying to renew before it steps down")
	fs.DurationVar(&leases.retryPeriod, "leader-election-retry-period", 2*time.Second, "how often candidates try to acquire or renew the lease")
	var metrics metricsConfig
	metricsAddr := metrics.register(fs)
	probeAddr := fs.String("health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 turns them off")
	var board dashboard.Options
	fs.StringVar(&board.BindAddress, "dashboard-bind-address", "0", "host:port of the read-only fleet dashboard (HTTPS; each request's bearer token is checked by the host with TokenReview and SubjectAccessReview, as for metrics); 0 turns it off")
	fs.StringVar(&board.CertDir, "dashboard-cert-dir", "", "`directory` with tls.crt and tls.key for the dashboard (a cert-manager Certificate's Secret), reloaded on change; empty uses a self-signed certificate")
	pprofAddr := fs.String("pprof-bind-address", "", "loopback host:port serving Go's /debug/pprof/ profiles (e.g. 127.0.0.1:6060), for finding where time goes; empty turns it off, and only a loopback address is accepted")
	logLevel := fs.String("log-level", "info", "trace, debug, info, warn or error")
	var limits apiLimits
	fs.Float64Var(&limits.qps, "kube-api-qps", defaultKubeAPIQPS, "client-side limit of queries per second to the host apiserver, for each resource kind and each of the two controller families (the scheduler; everything else), as Karmada's scheduler and controller manager each have one; the default fits a host apiserver dedicated to flotilla, which queues beyond it by API Priority and Fairness; Karmada's 40 suits a host shared with other clients")
	fs.IntVar(&limits.burst, "kube-api-burst", defaultKubeAPIBurst, "burst of queries to the host apiserver above --kube-api-qps, counted like it")
	var hook webhookConfig
	fs.StringVar(&hook.url, "webhook-url", "", "https `URL` at which the host apiserver reaches this process' validating webhook; empty turns the webhook off")
	fs.StringVar(&hook.bindAddress, "webhook-bind-address", ":9443", "host:port the validating webhook listens on")
	fs.StringVar(&hook.failurePolicy, "webhook-failure-policy", "Fail", "what the host does when the webhook cannot be reached: Fail or Ignore")
	webhookInstall := fs.Bool("webhook-install", true, "apply the ValidatingWebhookConfiguration pointing at --webhook-url (the leader does); false when something else installs it, such as the Helm chart with a Service reference, and needs --webhook-cert-dir")
	fs.StringVar(&hook.certDir, "webhook-cert-dir", "", "`directory` with tls.crt, tls.key and ca.crt (a cert-manager Certificate's Secret) shared by every replica and reloaded on change; empty makes a self-signed certificate per process, fit for one replica")
	fs.BoolVar(&hook.client.enabled, "webhook-client-auth", true, "require and verify the host apiserver's client certificate on every webhook connection (the host presents one when its --admission-control-config-file gives a WebhookAdmissionConfiguration kubeconfig with a client certificate for the webhook's host); false accepts any TLS client, only for a host that cannot present one or a loopback test")
	fs.StringVar(&hook.client.caFile, "webhook-client-ca", "", "PEM `file` of the CA that signs the host apiserver's webhook client certificate, reloaded on change; required while --webhook-client-auth is true")
	webhookClientNames := fs.String("webhook-client-names", "", "comma-separated common `names` of the host's client certificate the webhook accepts; empty accepts any certificate --webhook-client-ca signed")
	fs.IntVar(&hook.maxInFlight, "webhook-max-in-flight", webhook.DefaultMaxInFlight, "how many admission reviews the webhook works on at once; one more is refused at once with 429 Too Many Requests")
	var opts shared.Options
	templateKinds := fs.String("template-kinds", "", "comma-separated `kinds` the detector watches (a filter), as group/version/Kind or version/Kind, namespaced or cluster-scoped, CRD instances too, each from when the host serves it; default: every kind the host serves, learnt from discovery, except events, leases, nodes and flotilla's own")
	fs.DurationVar(&opts.ProbeInterval, "cluster-probe-interval", 0, "how often each member is probed; 0 means the default")
	fs.DurationVar(&opts.FailureThreshold, "cluster-failure-threshold", 0, "how long a member must fail its probe before it is NotReady; 0 means the default")
	fs.DurationVar(&opts.SuccessThreshold, "cluster-success-threshold", 0, "how long a member must pass its probe before it is Ready again; 0 means the default")
	fs.DurationVar(&opts.NoExecuteAfter, "no-execute-after", 0, "how long a member stays NotReady before its NoExecute taint evicts replicas; 0 means the default")
	fs.DurationVar(&opts.GracefulEvictionTimeout, "graceful-eviction-timeout", 0, "how long an evicted copy is kept while its replacement becomes healthy; 0 means the default")
	fs.BoolVar(&opts.AllowKubeconfigExecAndFiles, "allow-kubeconfig-exec-and-files", false, "let the kubeconfigs of Cluster credentials Secrets (in flotilla-system, or karmada-cluster with --api-groups=karmada) run exec plugins and auth providers and read local files (tokenFile, certificate paths) with this process' identity; off, only inline credentials are accepted")
	fs.DurationVar(&opts.ProbeTimeout, "cluster-probe-timeout", 0, "how long one member's probe and status collection may take before it counts as failed; 0 means the default (5s)")
	fs.IntVar(&opts.ClusterStatusWorkers, "cluster-status-workers", 0, "how many members are probed at once; 0 means the default (8)")
	fs.DurationVar(&opts.MemberRequestTimeout, "member-request-timeout", 0, "how long any one request to a member may take; 0 means the default (30s)")
	fs.DurationVar(&opts.WorkTimeout, "work-timeout", 0, "how long applying, reading back or removing one Work on its member may take before it is reported failed and retried; 0 means the default (2m)")
	fs.DurationVar(&opts.WorkRequestTimeout, "work-request-timeout", 0, "how long any one request of a Work to its member (a read, an apply, a removal) may take before the Work is reported failed, naming the cluster, and its worker freed; at most --work-timeout; 0 means the default (10s)")
	fs.DurationVar(&opts.StatusResync, "status-resync", 0, "how often a Work's member status is read again although the member's watch tells of every change to its objects (a backstop for a lost event); a Work whose member refuses the watch is read every 30s; 0 means 30s")
	fs.IntVar(&opts.WorkWorkers, "work-workers", 0, "how many Works the execution controller handles at once; 0 means the default (8)")
	fs.IntVar(&opts.WorkStatusWorkers, "work-status-workers", 0, "how many Works the work status controller reads back from their members at once (each is at most one host write, and one member read unless the member's watch delivered the change); of them, --member-workers' share of --work-workers may work on one member; 0 means the default (32)")
	fs.IntVar(&opts.TemplateWorkers, "template-workers", 0, "how many templates each kind's detector handles at once (Karmada's --concurrent-resource-template-syncs); 0 means the default (5)")
	fs.IntVar(&opts.BindingWorkers, "binding-workers", 0, "how many bindings the binding controller handles at once (Karmada's --concurrent-resourcebinding-syncs); 0 means the default (5)")
	fs.IntVar(&opts.SchedulerWorkers, "scheduler-workers", 0, "how many bindings the scheduler schedules at once, in schedule-priority order (Karmada's scheduler has one worker); 0 means the default (5)")
	fs.IntVar(&opts.ScheduleBacklogHold, "schedule-backlog-hold", 0, "while more than this many templates and bindings wait for the detectors and the scheduler (a cold start, a policy that claims thousands of templates), hold back the binding controller's writes (Works, binding and template status) and the scheduler's Events, and write them once the queues are this short again or after 30 s of holding at most, so the host apiserver serves the schedule first; the settled state is the same; 0 means the default (100), a negative value holds nothing")
	fs.IntVar(&opts.MCSWorkers, "mcs-workers", 0, "how many Services the multi-cluster services controller collects or imports at once; 0 means the default (8)")
	fs.IntVar(&opts.MemberWorkers, "member-workers", 0, "how many of --work-workers may work on one member at once, below --work-workers; 0 means half of them")
	reserved := fs.String("reserved-namespaces", strings.Join(shared.DefaultReservedNamespaces, ","), "comma-separated host `namespaces` whose objects are never propagated; a trailing * reserves a prefix (flotilla-es-* and karmada-es-* are always reserved)")
	namespaceSync := fs.Bool("namespace-sync", true, "create every host namespace (except --reserved-namespaces, default, Karmada's reserved ones and those labelled namespace.karmada.io/skip-auto-propagation=true) in every member, as Karmada's namespace controller does")
	multiClusterServices := fs.Bool("multi-cluster-services", true, "run the multi-cluster services controller: collect the EndpointSlices of ServiceExports and MultiClusterService providers from their members onto the host, give ServiceImport consumers a derived Service and the exported endpoints and MultiClusterService consumers the providers' endpoints; installs the MultiClusterService CRD (needs EndpointSlice rights on the host)")
	propagateSecrets := fs.Bool("propagate-secrets", true, "detect Secrets as templates and propagate them as dependencies (propagateDeps), which reads every namespace's Secrets; false reads Secrets only in the credentials namespace, where Cluster credentials live ("+shared.SystemNamespace+", or karmada-cluster with --api-groups=karmada; the Helm chart's setting)")
	fs.BoolVar(&opts.Descheduler, "descheduler", false, "run the descheduler (Karmada's karmada-descheduler): take replicas whose pods a member's kube-scheduler has found unschedulable for longer than --unschedulable-threshold off that member, for dynamically divided (dynamic weights or Aggregated) Deployments and StatefulSets only, so the scheduler places them where they fit")
	fs.DurationVar(&opts.DeschedulingInterval, "descheduling-interval", shared.DefaultDeschedulingInterval, "how often the descheduler looks for unschedulable replicas")
	fs.DurationVar(&opts.UnschedulableThreshold, "unschedulable-threshold", shared.DefaultUnschedulableThreshold, "how long a pod must have been unschedulable before the descheduler moves its replica")
	fs.DurationVar(&opts.FederatedHPASyncPeriod, "horizontal-pod-autoscaler-sync-period", shared.DefaultFederatedHPASyncPeriod, "how often each FederatedHPA reads its target's pod metrics from the members and decides again (Karmada's and Kubernetes' flag)")
	fs.StringVar(&opts.ClusterProxy.BindAddress, "cluster-proxy-bind-address", "", "host:port the cluster proxy (the clusterproxy.flotilla.io aggregated API, registered on the host by an APIService) listens on; empty turns it off")
	proxyCertDir := fs.String("cluster-proxy-cert-dir", "", "`directory` with tls.crt and tls.key serving the cluster proxy, reloaded on change; the APIService's caBundle must trust it for <service>.<namespace>.svc; required with --cluster-proxy-bind-address")
	fs.DurationVar(&opts.ClusterProxy.RequestTimeout, "cluster-proxy-request-timeout", 0, "how long the cluster proxy waits for a member's response headers (and for a whole request that is not a watch or a follow) before answering 504; 0 means the default (30s)")
	apiGroups := apiGroupsFlag(fs, "the control plane installs and reconciles", "; karmada refuses to start on a host whose Karmada CRDs were installed by Karmada")
	fs.BoolVar(&opts.AllowNamespacedOverwrite, "allow-namespaced-overwrite", false, "let a namespaced PropagationPolicy's conflictResolution: Overwrite adopt existing member objects (a ClusterPropagationPolicy always may)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: terraform-provider-flotilla controlplane --kubeconfig HOST [flags]\n\n"+
			"Runs flotilla's continuous control plane: installs its CRDs into the host apiserver and\n"+
			"reconciles Clusters, policies and resource templates stored there onto the member clusters.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, 2)
	}
	if (*kubeconfig == "" && !inPod()) || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	// Before anything builds a scheme or reads an API group.
	if !useAPIGroups(*apiGroups, stderr) {
		return 2
	}
	if err := checkLoopback(*pprofAddr); err != nil {
		fmt.Fprintf(stderr, "--pprof-bind-address: %v\n", err)
		return 2
	}
	if opts.ClusterProxy.BindAddress != "" {
		if *proxyCertDir == "" {
			fmt.Fprintln(stderr, "--cluster-proxy-bind-address needs --cluster-proxy-cert-dir: the host's APIService must trust the proxy's serving certificate")
			return 2
		}
		serving, err := dynamiccertificates.NewDynamicServingContentFromFiles("cluster-proxy", filepath.Join(*proxyCertDir, "tls.crt"), filepath.Join(*proxyCertDir, "tls.key"))
		if err != nil {
			fmt.Fprintf(stderr, "--cluster-proxy-cert-dir: %v\n", err)
			return 2
		}
		opts.ClusterProxy.Certificate = serving
	}
	if *templateKinds != "" {
		kinds, err := shared.ParseTemplateKinds(*templateKinds)
		if err != nil {
			fmt.Fprintf(stderr, "--template-kinds: %v\n", err)
			return 2
		}
		opts.TemplateKinds = kinds
	}
	hook.external = !*webhookInstall
	hook.client.names = splitList(*webhookClientNames)
	if hook.url != "" {
		if err := hook.client.check(); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	opts.CredentialSecretsOnly = !*propagateSecrets
	if opts.CredentialSecretsOnly && slices.Contains(opts.TemplateKinds, schema.GroupVersionKind{Version: "v1", Kind: "Secret"}) {
		fmt.Fprintf(stderr, "--template-kinds: v1/Secret needs --propagate-secrets: with it false, Secrets are read only in %s\n", shared.CredentialsNamespace())
		return 2
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(stderr, "--member-workers: %v\n", err)
		return 2
	}
	reservedList, err := shared.ParseReservedNamespaces(*reserved)
	if err != nil {
		fmt.Fprintf(stderr, "--reserved-namespaces: %v\n", err)
		return 2
	}
	opts.ReservedNamespaces = reservedList
	opts.DisableNamespaceSync = !*namespaceSync
	opts.DisableMultiClusterServices = !*multiClusterServices
	logger := processLogger("flotilla", *logLevel, stderr)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := runControlplane(ctx, controlplaneConfig{
		kubeconfig: *kubeconfig, context: *kubeContext, fleet: *fleet,
		leaderElect: *leaderElect, leaderNamespace: *leaderNamespace, leases: leases,
		metricsAddr: *metricsAddr, metrics: metrics, probeAddr: *probeAddr, pprofAddr: *pprofAddr, options: opts, webhook: hook, api: limits,
		dashboard: board,
	}); err != nil {
		logger.Error("controlplane stopped", "error", err)
		return 1
	}
	return 0
}

// inPod reports whether the process runs in a Kubernetes pod, where an
// empty --kubeconfig means the pod's ServiceAccount (client-go's in-cluster
// configuration).
func inPod() bool {
	return os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != ""
}

// cacheOptions are the host cache's options: managedFields are dropped
// from every cached object (nothing in the control plane reads them from
// the host: the fields a member owns are read from the member), which at
// 10,000 templates held as unstructured maps was a large share of the
// heap (issue 20); and the manager's Secrets are kept to the namespaces
// the options allow, so that the informer behind a credentials read lists
// only flotilla-system when Secrets are not propagated.
func cacheOptions(o shared.Options) cache.Options {
	opts := cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	namespaces := o.SecretCacheNamespaces()
	if len(namespaces) == 0 {
		return opts
	}
	only := map[string]cache.Config{}
	for _, ns := range namespaces {
		only[ns] = cache.Config{}
	}
	opts.ByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: {Namespaces: only}}
	return opts
}

type controlplaneConfig struct {
	kubeconfig, context, fleet string
	leaderElect                bool
	leaderNamespace            string
	leases                     leaseTiming
	metricsAddr, probeAddr     string
	pprofAddr                  string
	metrics                    metricsConfig
	options                    shared.Options
	webhook                    webhookConfig
	api                        apiLimits
	dashboard                  dashboard.Options
	// inProcess is set by tests that run several control planes in one
	// process: controller names are then allowed to repeat.
	inProcess bool
}

// Defaults of --kube-api-qps and --kube-api-burst. Karmada's 40/60 held a
// cold start of 10,000 templates to about 20 scheduled bindings a second,
// far below what the host apiserver takes (issue 20,
// bench/results-coldstart.md).
const (
	defaultKubeAPIQPS   = 400
	defaultKubeAPIBurst = 600
)

// apiLimits is the client-side rate limit towards the host apiserver.
// client-go's own default (5 QPS, burst 10) throttles a control plane with
// thousands of objects to about one binding a second. controller-runtime
// gives each resource kind of a client a limiter of its own.
type apiLimits struct {
	qps   float64
	burst int
}

// leaseTiming is the leader election timing; Kubernetes' defaults are
// 15 s, 10 s and 2 s.
type leaseTiming struct {
	duration, renewDeadline, retryPeriod time.Duration
}

// selfUser asks the host who this process is (a SelfSubjectReview), so
// the webhook knows the one identity that may write Works.
func selfUser(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("ask the host for the control plane's own user name (SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", errors.New("the host returned no user name for the control plane (SelfSubjectReview)")
	}
	return review.Status.UserInfo.Username, nil
}

func runControlplane(ctx context.Context, c controlplaneConfig) error {
	cfg, err := loadKubeconfig(c.kubeconfig, c.context)
	if err != nil {
		return fmt.Errorf("load host kubeconfig %s: %w", c.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = float32(c.api.qps), c.api.burst
	scheme, err := shared.NewScheme()
	if err != nil {
		return err
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("connect to host: %w", err)
	}
	if err := crd.Install(ctx, direct, time.Minute); err != nil {
		return fmt.Errorf("install crds: %w", err)
	}
	hookServer, ca, err := c.webhook.webhookServer()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Client:                  shared.ClientOptions(),
		Cache:                   cacheOptions(c.options),
		WebhookServer:           hookServer,
		Scheme:                  scheme,
		LeaderElection:          c.leaderElect,
		LeaderElectionID:        "flotilla-controlplane",
		LeaderElectionNamespace: c.leaderNamespace,
		LeaseDuration:           &c.leases.duration,
		RenewDeadline:           &c.leases.renewDeadline,
		RetryPeriod:             &c.leases.retryPeriod,
		// Step down at once on shutdown, so a standby takes over without waiting for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       c.metrics.options(c.metricsAddr),
		HealthProbeBindAddress:        c.probeAddr,
		PprofBindAddress:              c.pprofAddr,
		Controller:                    config.Controller{SkipNameValidation: &c.inProcess},
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	if hookServer != nil {
		// Works reach members with this process' credentials: the webhook
		// lets only this identity write them.
		user, err := selfUser(ctx, direct)
		if err != nil {
			return err
		}
		c.webhook.rules = webhook.Options{Controller: c.options, ControlPlaneUsers: []string{user}, MaxInFlight: c.webhook.maxInFlight}
		if !c.webhook.client.enabled {
			ctrl.Log.WithName("webhook").Info("client authentication is off (--webhook-client-auth=false): any TLS client that reaches the webhook port is served; restrict the port to the host apiserver by network policy")
		}
		if err := c.webhook.addWebhook(mgr, direct, ca); err != nil {
			return err
		}
	}
	opts := c.options
	opts.Fleet = c.fleet
	if apis.Current() == apis.KarmadaGroups {
		// adopt-karmada runs before the control plane starts: the record
		// is read once.
		if opts.KarmadaAdoptions, err = shared.ReadKarmadaAdoptions(ctx, direct); err != nil {
			return err
		}
	}
	// The cluster status controller keeps each Push cluster's last
	// successful probe in memory; the dashboard of this process shows it.
	probes := shared.NewProbeTimes()
	opts.Probes = probes
	if err := controller.Setup(mgr, opts); err != nil {
		return err
	}
	board := c.dashboard
	board.Probes = probes
	if err := dashboard.Add(mgr, board); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}
