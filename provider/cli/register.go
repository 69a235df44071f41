package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Register prepares the hub for a pull-mode member, run by the hub's
// administrator (`karmadactl register` in spirit): it makes the Pull
// Cluster, the agent's ServiceAccount and least-privilege RBAC
// (agent.RegisterAgent), and writes a kubeconfig with a token for that
// identity, to hand to the agent as --hub-kubeconfig.
func Register(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("register", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("hub-kubeconfig", "", "administrator's kubeconfig `file` of the hub (the control plane's host apiserver) (required)")
	kubeContext := fs.String("hub-context", "", "context of --hub-kubeconfig; default its current-context")
	cluster := fs.String("cluster-name", "", "`name` of the member's Cluster (required)")
	out := fs.String("out", "", "`file` to write the agent's hub kubeconfig to, mode 0600 (required)")
	server := fs.String("hub-server", "", "hub apiserver `URL` as the agent reaches it; default the server of --hub-kubeconfig")
	ttl := fs.Duration("token-ttl", 365*24*time.Hour, "lifetime of the agent's token; run register again to issue a new one")
	apiGroups := apiGroupsFlag(fs, "the hub's control plane serves (its --api-groups), in which the Cluster, the execution namespace and the agent's rights are made", "")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: terraform-provider-flotilla register --hub-kubeconfig ADMIN --cluster-name NAME --out FILE [flags]\n\n"+
			"Registers a pull-mode member: creates its Cluster (syncMode Pull), its execution namespace and Lease,\n"+
			"and a ServiceAccount that may touch only those, then writes a kubeconfig for it that the member's\n"+
			"`agent --hub-kubeconfig FILE` uses.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, 2)
	}
	if *kubeconfig == "" || *cluster == "" || *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	// Before anything builds a scheme or a client.
	if !useAPIGroups(*apiGroups, stderr) {
		return 2
	}
	cfg, err := loadKubeconfig(*kubeconfig, *kubeContext)
	if err != nil {
		fmt.Fprintf(stderr, "register: load hub kubeconfig %s: %v\n", *kubeconfig, err)
		return 1
	}
	reg, err := register(context.Background(), cfg, *cluster, *ttl)
	if err == nil {
		err = writeAgentKubeconfig(*out, cfg, *server, *cluster, reg.Token)
	}
	if err != nil {
		fmt.Fprintf(stderr, "register: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "cluster %s registered for a pull-mode agent as %s (token valid until %s); its hub kubeconfig is %s\n",
		*cluster, reg.ServiceAccount, reg.ExpiresAt.UTC().Format(time.RFC3339), *out)
	return 0
}

// register installs flotilla's CRDs when missing and registers the agent.
func register(ctx context.Context, cfg *rest.Config, cluster string, ttl time.Duration) (agent.AgentRegistration, error) {
	scheme, err := shared.NewScheme()
	if err != nil {
		return agent.AgentRegistration{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return agent.AgentRegistration{}, fmt.Errorf("connect to hub: %w", err)
	}
	if err := crd.Install(ctx, c, time.Minute); err != nil {
		return agent.AgentRegistration{}, fmt.Errorf("install crds: %w", err)
	}
	return agent.RegisterAgent(ctx, c, cluster, ttl)
}

// writeAgentKubeconfig writes the agent's hub kubeconfig: the hub's server
// (or server) and CA from the administrator's config, and the agent's
// token.
func writeAgentKubeconfig(path string, admin *rest.Config, server, cluster, token string) error {
	if server == "" {
		server = admin.Host
	}
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		data, err := os.ReadFile(admin.CAFile)
		if err != nil {
			return fmt.Errorf("read the hub's CA %s: %w", admin.CAFile, err)
		}
		ca = data
	}
	name := "flotilla-hub"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca, InsecureSkipTLSVerify: admin.Insecure}
	kc.AuthInfos[agent.AgentServiceAccount(cluster)] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: agent.AgentServiceAccount(cluster)}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encode the agent's kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write the agent's kubeconfig: %w", err)
	}
	return nil
}
