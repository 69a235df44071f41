package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/package/crds"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane"
)

// Crossplane runs flotilla's Crossplane provider: the managed resource
// reconcilers against the management apiserver (--kubeconfig, or the
// in-cluster identity when it is empty, as when Crossplane runs the
// provider), until SIGINT or SIGTERM.
func Crossplane(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("crossplane", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file` of the management apiserver; empty means the in-cluster identity")
	kubeContext := fs.String("context", "", "kubeconfig context; default its current-context")
	leaderElect := fs.Bool("leader-elect", false, "elect one active process among replicas (a Lease in --leader-election-namespace)")
	leaderNamespace := fs.String("leader-election-namespace", "crossplane-system", "namespace of the leader election Lease")
	poll := fs.Duration("poll", crossplane.DefaultPollInterval, "how often a Ready managed resource is observed again")
	pendingPoll := fs.Duration("pending-poll", crossplane.DefaultPendingPollInterval, "how often a managed resource that is not Ready is observed again")
	maxRate := fs.Int("max-reconcile-rate", crossplane.DefaultMaxReconcileRate, "global reconciles per second")
	installCRDs := fs.Bool("install-crds", false, "install the provider's CRDs (package/crds) first; Crossplane's package manager does it in a real deployment")
	var metrics metricsConfig
	metricsAddr := metrics.register(fs)
	probeAddr := fs.String("health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 turns them off")
	logLevel := fs.String("log-level", "info", "trace, debug, info, warn or error")
	apiGroups := apiGroupsFlag(fs, "the hosts' control plane serves (its --api-groups), in which the managed resources' host Clusters, policies and bindings are written and read, and the Cluster credentials Secrets kept (flotilla-system, or karmada-cluster)", "")
	allowExec := fs.Bool("allow-kubeconfig-exec-and-files", false, "let the host kubeconfig of a ClusterProviderConfig run exec plugins and auth providers and read local files (tokenFile, certificate paths) with this process' identity; namespaced ProviderConfigs and Cluster managed resources never may")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: terraform-provider-flotilla crossplane [--kubeconfig MGMT] [flags]\n\n"+
			"Runs flotilla's Crossplane provider: reconciles the fleet.m.flotilla.io managed resources\n"+
			"(Cluster, PropagationPolicy, OverridePolicy, Manifest) of the management apiserver into the\n"+
			"flotilla host that their ProviderConfig names.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, 2)
	}
	// Before the scheme is built: the host kinds' groups follow it.
	if !useAPIGroups(*apiGroups, stderr) {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	logger := processLogger("flotilla-crossplane", *logLevel, stderr)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := runCrossplane(ctx, crossplaneConfig{
		kubeconfig: *kubeconfig, context: *kubeContext,
		leaderElect: *leaderElect, leaderNamespace: *leaderNamespace,
		installCRDs: *installCRDs, metricsAddr: *metricsAddr, metrics: metrics, probeAddr: *probeAddr,
		options: crossplane.Options{PollInterval: *poll, PendingPollInterval: *pendingPoll, MaxReconcileRate: *maxRate, AllowKubeconfigExecAndFiles: *allowExec},
	})
	if err != nil {
		logger.Error("crossplane provider stopped", "error", err)
		return 1
	}
	return 0
}

type crossplaneConfig struct {
	kubeconfig, context    string
	leaderElect            bool
	leaderNamespace        string
	installCRDs            bool
	metricsAddr, probeAddr string
	metrics                metricsConfig
	options                crossplane.Options
}

func runCrossplane(ctx context.Context, c crossplaneConfig) error {
	var cfg *rest.Config
	var err error
	if c.kubeconfig == "" {
		if cfg, err = rest.InClusterConfig(); err != nil {
			return fmt.Errorf("no --kubeconfig and no in-cluster identity: %w", err)
		}
	} else {
		if cfg, err = loadKubeconfig(c.kubeconfig, c.context); err != nil {
			return fmt.Errorf("load management kubeconfig %s: %w", c.kubeconfig, err)
		}
	}
	scheme, err := crossplane.NewScheme()
	if err != nil {
		return err
	}
	if c.installCRDs {
		direct, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return fmt.Errorf("connect to the management apiserver: %w", err)
		}
		if err := crds.Install(ctx, direct, time.Minute); err != nil {
			return fmt.Errorf("install crds: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		LeaderElection:                c.leaderElect,
		LeaderElectionID:              "crossplane-leader-election-provider-flotilla",
		LeaderElectionNamespace:       c.leaderNamespace,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       c.metrics.options(c.metricsAddr),
		HealthProbeBindAddress:        c.probeAddr,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	opts := c.options
	opts.InjectedIdentity = cfg
	if err := crossplane.Setup(mgr, opts); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}
