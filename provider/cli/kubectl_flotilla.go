package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

// PluginName is the program name under which the binary acts as a kubectl
// plugin (kubectl runs kubectl-flotilla for `kubectl flotilla`).
const PluginName = "kubectl-flotilla"

// ClusterAnnotation names, on each object printed with -o yaml|json, the
// member it came from.
const ClusterAnnotation = "flotilla.io/cluster"

// defaultPluginTimeout bounds each member's requests: a stalled member is
// named and the others printed.
const defaultPluginTimeout = 10 * time.Second

// pluginVerbs are the plugin's commands, each with its one-line usage; the
// usage text and shell completion read them.
var pluginVerbs = []struct{ name, usage string }{
	{"get", "get RESOURCE [NAME] [-n NAMESPACE | -A] [-C member1,member2] [-o wide|yaml|json] [--source auto|cache|proxy] [-v]"},
	{"describe", "describe RESOURCE NAME [-C member1,member2] [-n NAMESPACE]"},
	{"logs", "logs POD [-C CLUSTER] [-n NAMESPACE] [-c CONTAINER] [--tail N] [-f]"},
	{"exec", "exec POD [-C CLUSTER] [-n NAMESPACE] [-c CONTAINER] [-i] [-t] -- COMMAND [ARG...]"},
	{"top", "top pods|nodes [-n NAMESPACE | -A] [-C member1,member2]"},
	{"cordon", "cordon CLUSTER"},
	{"uncordon", "uncordon CLUSTER"},
	{"taint", "taint CLUSTER KEY[=VALUE]:EFFECT | KEY[:EFFECT]- ..."},
	{"promote", "promote RESOURCE NAME -C CLUSTER [-n NAMESPACE]"},
	{"completion", "completion bash|zsh"},
}

// KubectlFlotilla runs the kubectl plugin: commands across members through
// the host's cluster proxy and search cache, as the user of the kubeconfig,
// and commands on the host's Clusters.
func KubectlFlotilla(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, "Usage:")
		for _, v := range pluginVerbs {
			fmt.Fprintln(stdout, "  kubectl flotilla "+v.usage)
		}
		fmt.Fprintln(stdout, "Every command takes --kubeconfig, --context, --as and --request-timeout for the host.")
		return 0
	}
	run := map[string]func([]string, io.Writer, io.Writer) int{
		"get": pluginGet, "describe": pluginDescribe, "logs": pluginLogs, "exec": pluginExec, "top": pluginTop,
		"cordon": pluginCordon, "uncordon": pluginUncordon, "taint": pluginTaint, "promote": pluginPromote, "completion": pluginCompletion,
	}[args[0]]
	if run == nil {
		names := make([]string, len(pluginVerbs))
		for i, v := range pluginVerbs {
			names[i] = v.name
		}
		fmt.Fprintf(stderr, "kubectl flotilla: unknown command %q (known: %s)\n", args[0], strings.Join(names, ", "))
		return 2
	}
	return run(args[1:], stdout, stderr)
}

// getOptions are the options every command shares: how to reach the host,
// as whom, and which members.
type getOptions struct {
	kubeconfig, context, as, namespace, output, clusters string
	allNamespaces                                        bool
	timeout                                              time.Duration
	stderr                                               io.Writer
}

// hostFlags registers the flags that say how to reach the host.
func (o *getOptions) hostFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `file` of the host")
	fs.StringVar(&o.context, "context", "", "kubeconfig context")
	fs.StringVar(&o.as, "as", "", "user to act as on the host (kubectl's --as)")
	fs.DurationVar(&o.timeout, "request-timeout", defaultPluginTimeout, "bound on each member's requests")
}

// memberFlags registers -n and -C.
func (o *getOptions) memberFlags(fs *flag.FlagSet, clustersUsage string) {
	for _, n := range []string{"n", "namespace"} {
		fs.StringVar(&o.namespace, n, "", "namespace; default: the context's")
	}
	for _, n := range []string{"C", "clusters"} {
		fs.StringVar(&o.clusters, n, "", clustersUsage)
	}
}

// newFlagSet is a flag set for the command name writing its errors to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kubectl flotilla "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// hostConfig is the host's client config from the kubeconfig, acting as
// --as when set; the namespace defaults to the context's.
func (o *getOptions) hostConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.context}
	overrides.AuthInfo.Impersonate = o.as
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	host, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("host kubeconfig: %w", err)
	}
	if o.namespace == "" {
		if o.namespace, _, err = loader.Namespace(); err != nil {
			return nil, fmt.Errorf("host kubeconfig: %w", err)
		}
	}
	if o.allNamespaces {
		o.namespace = ""
	}
	return host, nil
}

// reorderFlags moves flags after positional arguments to the front, as
// kubectl accepts `get pods -A`; everything after `--` stays positional
// (exec's command), and kubectl's combined `-it` becomes `-i -t`.
func reorderFlags(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i:]...)
			break
		}
		if a == "-it" || a == "-ti" {
			flags = append(flags, "-i", "-t")
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue(fs, a) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

// takesValue says whether the flag reads the next argument: every flag but
// the boolean ones of fs.
func takesValue(fs *flag.FlagSet, flagArg string) bool {
	f := fs.Lookup(strings.TrimLeft(flagArg, "-"))
	if f == nil {
		return true
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// parseArgs parses args with fs, kubectl's way (flags anywhere, `--`
// ending them); a positional "--" is dropped and everything after it
// returned as the command.
func parseArgs(fs *flag.FlagSet, args []string) (positional, command []string, err error) {
	if err := fs.Parse(reorderFlags(fs, args)); err != nil {
		return nil, nil, err
	}
	rest := fs.Args()
	for i, a := range rest {
		if a == "--" {
			return rest[:i], rest[i+1:], nil
		}
	}
	return rest, nil, nil
}

// clusterNames is -C, or every Cluster on the host in name order.
func (o getOptions) clusterNames(host *rest.Config) ([]string, error) {
	if o.clusters != "" {
		return splitList(o.clusters), nil
	}
	dc, err := dynamic.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	list, err := listClusters(ctx, dc)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, c := range list.Items {
		if mode, _, _ := unstructured.NestedString(c.Object, "spec", "syncMode"); mode == "Pull" {
			// The proxy refuses Pull members (no route from the control
			// plane); they are named, not counted as failures.
			fmt.Fprintf(o.stderr, "cluster %s skipped: Pull mode, not reachable through the cluster proxy\n", c.GetName())
			continue
		}
		names = append(names, c.GetName())
	}
	return names, nil
}

// listClusters lists the host's Clusters in the family of API groups it
// serves (hostGroups).
func listClusters(ctx context.Context, dc dynamic.Interface) (*unstructured.UnstructuredList, error) {
	g, err := hostGroups(ctx, dc)
	if err != nil {
		return nil, err
	}
	gvr := hostResource(g, "cluster", "Cluster", "clusters")
	list, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s on the host: %w", gvr.GroupResource(), err)
	}
	return list, nil
}

// hostGroups is the family of API groups the host's control plane serves:
// flotilla's, else Karmada's (a control plane started with
// --api-groups=karmada serves cluster.karmada.io only). The plugin chooses
// no groups for its process, so it asks the host which family's Clusters
// it serves, and names each family's group itself.
func hostGroups(ctx context.Context, dc dynamic.Interface) (apis.Groups, error) {
	var tried []string
	for _, g := range []apis.Groups{apis.FlotillaGroups, apis.KarmadaGroups} {
		gvr := hostResource(g, "cluster", "Cluster", "clusters")
		_, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return g, nil
		}
		if !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("list %s on the host: %w", gvr.GroupResource(), err)
		}
		tried = append(tried, gvr.GroupResource().String())
	}
	return "", fmt.Errorf("list Clusters on the host: it serves neither %s; is a flotilla control plane running there?", strings.Join(tried, " nor "))
}

// hostResource is resource (of kind, in the API group named group) in the
// family g, at the version that family serves it.
func hostResource(g apis.Groups, group, kind, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: g.Group(group), Version: g.KindVersion(group, kind), Resource: resource}
}

// memberConfig is the host's config aimed at the cluster proxy of
// cluster: every request it makes reaches the member as the host user.
func memberConfig(host *rest.Config, cluster string, timeout time.Duration) *rest.Config {
	cfg := rest.CopyConfig(host)
	cfg.Host = strings.TrimSuffix(host.Host, "/") + "/apis/" + fleetview.Group + "/" + fleetview.Version + "/" +
		fleetview.Resource + "/" + url.PathEscape(cluster) + "/" + fleetview.Subresource
	cfg.Timeout = timeout
	return cfg
}

// getRaw GETs url and returns the body, or the Status message as an error.
func getRaw(hc *http.Client, u, accept string) ([]byte, error) {
	body, err := getStream(hc, u, accept)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(body)
}

// getStream GETs url and returns the body to read as it arrives (the
// caller closes it), or the Status message as an error.
func getStream(hc *http.Client, u, accept string) (io.ReadCloser, error) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return nil, &responseError{code: resp.StatusCode, msg: fmt.Sprintf("%s (%d)", st.Message, resp.StatusCode)}
	}
	return nil, &responseError{code: resp.StatusCode, msg: fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))}
}

// responseError is a server's answer other than 2xx: its message, and the
// status code that callers tell "not there" (404) by.
type responseError struct {
	code int
	msg  string
}

func (e *responseError) Error() string { return e.msg }

// isNotFound reports whether err is a 404 answer.
func isNotFound(err error) bool {
	var re *responseError
	return errors.As(err, &re) && re.code == http.StatusNotFound
}
