package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// Agent runs a pull-mode agent beside its member cluster: it registers the
// member as a Pull Cluster in the hub named by --hub-kubeconfig, renews its
// Lease, reports its status and applies the Works of its execution
// namespace to the member, until SIGINT or SIGTERM.
func Agent(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c agentConfig
	fs.StringVar(&c.hubKubeconfig, "hub-kubeconfig", "", "kubeconfig `file` of the hub (the control plane's host apiserver), with the agent's own identity, such as the one `register` writes (required)")
	fs.StringVar(&c.hubContext, "hub-context", "", "context of --hub-kubeconfig; default its current-context")
	fs.StringVar(&c.options.Cluster, "cluster-name", "", "`name` of this member's Cluster in the hub (required)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig `file` of the member; empty uses the in-cluster service account")
	fs.StringVar(&c.context, "context", "", "context of --kubeconfig; default its current-context")
	fs.StringVar(&c.options.Options.Fleet, "fleet", shared.DefaultFleet, "fleet name written into the ownership labels of member objects; the control plane's --fleet")
	fs.DurationVar(&c.options.LeaseDuration, "cluster-lease-duration", 0, "how long the control plane waits after the last Lease renewal before the cluster is Ready Unknown (and tainted unreachable); 0 means the default (40s)")
	fs.DurationVar(&c.options.RenewInterval, "cluster-lease-renew-interval", 0, "how often the Lease is renewed; 0 means a quarter of --cluster-lease-duration")
	fs.DurationVar(&c.options.StatusInterval, "cluster-status-update-frequency", 0, "how often the member's status is reported to the hub; 0 means the default (10s)")
	fs.DurationVar(&c.options.Options.FailureThreshold, "cluster-failure-threshold", 0, "how long the member must fail its health check before it is reported NotReady; 0 means the default")
	fs.DurationVar(&c.options.Options.SuccessThreshold, "cluster-success-threshold", 0, "how long the member must pass its health check before it is reported Ready again; 0 means the default")
	fs.DurationVar(&c.options.Options.ProbeTimeout, "cluster-probe-timeout", 0, "how long one status collection from the member may take; 0 means the default (5s)")
	fs.DurationVar(&c.options.Options.Resync, "resync", 0, "how often each Work is applied again and its member status read again; 0 means the default (30s)")
	fs.DurationVar(&c.options.Options.StatusResync, "status-resync", 0, "how often a Work's member status is read again although the agent's watch of the member tells of every change to its objects (a backstop for a lost event); 0 means --resync")
	fs.DurationVar(&c.options.Options.WorkTimeout, "work-timeout", 0, "how long applying, reading back or removing one Work may take; 0 means the default (2m)")
	fs.DurationVar(&c.options.Options.WorkRequestTimeout, "work-request-timeout", 0, "how long any one request of a Work to the member may take before the Work is reported failed; at most --work-timeout; 0 means the default (10s)")
	fs.IntVar(&c.options.Options.WorkWorkers, "work-workers", 0, "how many Works are applied at once; 0 means the default (8)")
	fs.IntVar(&c.options.Options.WorkStatusWorkers, "work-status-workers", 0, "how many Works' status are read back at once; 0 means the default (32)")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 turns them off")
	logLevel := fs.String("log-level", "info", "trace, debug, info, warn or error")
	apiGroups := apiGroupsFlag(fs, "the hub's control plane serves (its --api-groups), in which the agent reads its Cluster and Works and reports their status", "")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: terraform-provider-flotilla agent --hub-kubeconfig HUB --cluster-name NAME [--kubeconfig MEMBER] [flags]\n\n"+
			"Runs a pull-mode agent for a member the control plane cannot reach: registers the member as a\n"+
			"Cluster with syncMode Pull, renews its Lease, reports its status, and applies the Works of its\n"+
			"execution namespace (flotilla-es-NAME, or karmada-es-NAME with --api-groups=karmada) to the member.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, 2)
	}
	if c.hubKubeconfig == "" || c.options.Cluster == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	// Before anything builds a scheme or a client.
	if !useAPIGroups(*apiGroups, stderr) {
		return 2
	}
	if err := c.options.Validate(); err != nil {
		fmt.Fprintf(stderr, "agent: %v\n", err)
		return 2
	}
	logger := processLogger("flotilla-agent", *logLevel, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := runAgent(ctx, c); err != nil {
		logger.Error("agent stopped", "error", err)
		return 1
	}
	return 0
}

type agentConfig struct {
	hubKubeconfig, hubContext string
	kubeconfig, context       string
	probeAddr                 string
	options                   agent.AgentOptions
	// inProcess is set by tests that run several agents in one process.
	inProcess bool
}

// inClusterToken and inClusterCA are where a pod's service account
// credentials are mounted.
const (
	inClusterToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	inClusterCA    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
)

// memberConnection is how the agent reaches its member: --kubeconfig, or
// the pod's service account (its token file is read again as it rotates).
func (c agentConfig) memberConnection() (member.Connection, error) {
	if c.kubeconfig != "" {
		return member.Connection{KubeconfigPath: c.kubeconfig, Context: c.context}, nil
	}
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return member.Connection{}, errors.New("--kubeconfig is not set and the agent is not in a pod (KUBERNETES_SERVICE_HOST is unset)")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["member"] = &clientcmdapi.Cluster{Server: "https://" + host + ":" + port, CertificateAuthority: inClusterCA}
	kc.AuthInfos["agent"] = &clientcmdapi.AuthInfo{TokenFile: inClusterToken}
	kc.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "agent"}
	kc.CurrentContext = "member"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return member.Connection{}, fmt.Errorf("in-cluster kubeconfig: %w", err)
	}
	return member.Connection{Kubeconfig: data}, nil
}

func runAgent(ctx context.Context, c agentConfig) error {
	hub, err := loadKubeconfig(c.hubKubeconfig, c.hubContext)
	if err != nil {
		return fmt.Errorf("load hub kubeconfig %s: %w", c.hubKubeconfig, err)
	}
	return runAgentWith(ctx, hub, c)
}

// runAgentWith runs the agent against the hub config hub.
func runAgentWith(ctx context.Context, hub *rest.Config, c agentConfig) error {
	conn, err := c.memberConnection()
	if err != nil {
		return err
	}
	if err := conn.Validate(); err != nil {
		return fmt.Errorf("member connection: %w", err)
	}
	members := member.NewCache(member.CacheOptions{ProbeTimeout: c.options.Options.ProbeTimeout, Watch: true})
	// The member's informers end with the agent.
	defer members.Invalidate(c.options.Cluster)
	mc, err := members.Get(ctx, c.options.Cluster, conn)
	if err != nil {
		return err
	}
	scheme, err := shared.NewScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(hub, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  agent.AgentCacheOptions(c.options.Cluster),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: c.probeAddr,
		Controller:             config.Controller{SkipNameValidation: &c.inProcess},
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	// A change to a member slice the agent reports is reported at once.
	c.options.MemberCache = members
	if err := agent.SetupAgent(mgr, mc, c.options); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("run agent: %w", err)
	}
	return nil
}
