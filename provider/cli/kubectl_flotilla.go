package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

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

// KubectlFlotilla runs the kubectl plugin: `get` across members through
// the host's cluster proxy, as the user of the kubeconfig.
func KubectlFlotilla(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, "Usage: kubectl flotilla get RESOURCE [NAME] [-n NAMESPACE | -A] [-C member1,member2] [-o wide|yaml|json]")
		return 0
	}
	switch args[0] {
	case "get":
		return pluginGet(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "kubectl flotilla: unknown command %q (known: get)\n", args[0])
		return 2
	}
}

type getOptions struct {
	kubeconfig, context, as, namespace, output, clusters string
	allNamespaces                                        bool
	timeout                                              time.Duration
	stderr                                               io.Writer
}

func pluginGet(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubectl flotilla get", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := getOptions{stderr: stderr}
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `file` of the host")
	fs.StringVar(&o.context, "context", "", "kubeconfig context")
	fs.StringVar(&o.as, "as", "", "user to act as on the host (kubectl's --as)")
	for _, n := range []string{"n", "namespace"} {
		fs.StringVar(&o.namespace, n, "", "namespace; default: the context's")
	}
	for _, n := range []string{"A", "all-namespaces"} {
		fs.BoolVar(&o.allNamespaces, n, false, "list across all namespaces")
	}
	for _, n := range []string{"C", "clusters"} {
		fs.StringVar(&o.clusters, n, "", "comma-separated member `names`; default: every Cluster")
	}
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&o.output, n, "", "output: wide, yaml or json; default a table")
	}
	fs.DurationVar(&o.timeout, "request-timeout", defaultPluginTimeout, "bound on each member's requests")
	if err := fs.Parse(reorderFlags(args)); err != nil {
		return 2
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "kubectl flotilla get: name a resource, and at most one object")
		return 2
	}
	switch o.output {
	case "", "wide", "yaml", "json":
	default:
		fmt.Fprintf(stderr, "kubectl flotilla get: -o %q: must be wide, yaml or json\n", o.output)
		return 2
	}
	resource, name := fs.Arg(0), fs.Arg(1)
	if err := o.run(resource, name, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// reorderFlags moves flags after positional arguments to the front, as
// kubectl accepts `get pods -A`.
func reorderFlags(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue(a) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func takesValue(flagArg string) bool {
	switch strings.TrimLeft(flagArg, "-") {
	case "A", "all-namespaces":
		return false
	}
	return true
}

// memberResult is one member's answer.
type memberResult struct {
	cluster string
	table   *metav1.Table
	objects []unstructured.Unstructured
	err     error
}

func (o getOptions) run(resource, name string, stdout, stderr io.Writer) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.context}
	overrides.AuthInfo.Impersonate = o.as
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	host, err := loader.ClientConfig()
	if err != nil {
		return fmt.Errorf("host kubeconfig: %w", err)
	}
	if o.namespace == "" {
		if o.namespace, _, err = loader.Namespace(); err != nil {
			return fmt.Errorf("host kubeconfig: %w", err)
		}
	}
	if o.allNamespaces {
		o.namespace = ""
	}
	clusters, err := o.clusterNames(host)
	if err != nil {
		return err
	}
	results := make([]memberResult, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { results[i] = o.getMember(host, c, resource, name) })
	}
	wg.Wait()
	var failed []string
	for _, r := range results {
		if r.err != nil {
			failed = append(failed, r.cluster)
			fmt.Fprintf(stderr, "error: cluster %s: %v\n", r.cluster, r.err)
		}
	}
	if err := o.print(results, stdout); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("no answer from cluster(s) %s; the others are printed", strings.Join(failed, ", "))
	}
	return nil
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
// serves: flotilla's, else Karmada's (a control plane started with
// --api-groups=karmada serves cluster.karmada.io only). The plugin chooses
// no groups for its process, so it names each family's group itself.
func listClusters(ctx context.Context, dc dynamic.Interface) (*unstructured.UnstructuredList, error) {
	var tried []string
	for _, g := range []apis.Groups{apis.FlotillaGroups, apis.KarmadaGroups} {
		gvr := schema.GroupVersionResource{Group: g.Group("cluster"), Version: g.KindVersion("cluster", "Cluster"), Resource: "clusters"}
		list, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err == nil {
			return list, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("list %s on the host: %w", gvr.GroupResource(), err)
		}
		tried = append(tried, gvr.GroupResource().String())
	}
	return nil, fmt.Errorf("list Clusters on the host: it serves neither %s; is a flotilla control plane running there?", strings.Join(tried, " nor "))
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

func (o getOptions) getMember(host *rest.Config, cluster, resource, name string) memberResult {
	res := memberResult{cluster: cluster}
	cfg := memberConfig(host, cluster, o.timeout)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		res.err = err
		return res
	}
	// Discovery's errors drop the server's reason; /version, which every
	// user may read, reports it (a refused Pull member, a timeout) first.
	if _, err := getRaw(hc, cfg.Host+"/version", "application/json"); err != nil {
		res.err = err
		return res
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		res.err = err
		return res
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: resource})
	if err != nil {
		res.err = fmt.Errorf("resource %q: %w", resource, err)
		return res
	}
	kind, err := mapper.KindFor(gvr)
	if err != nil {
		res.err = err
		return res
	}
	mapping, err := mapper.RESTMapping(kind.GroupKind(), kind.Version)
	if err != nil {
		res.err = err
		return res
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if mapping.Scope.Name() == "namespace" && o.namespace != "" {
		p = path.Join(p, "namespaces", o.namespace)
	}
	p = path.Join(p, gvr.Resource)
	if name != "" {
		p = path.Join(p, name)
	}
	accept := "application/json"
	if o.output == "" || o.output == "wide" {
		accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	}
	body, err := getRaw(hc, cfg.Host+p, accept)
	if err != nil {
		res.err = err
		return res
	}
	if accept != "application/json" {
		var t metav1.Table
		if err := json.Unmarshal(body, &t); err != nil {
			res.err = fmt.Errorf("decode table: %w", err)
			return res
		}
		res.table = &t
		return res
	}
	var obj unstructured.Unstructured
	if err := obj.UnmarshalJSON(body); err != nil {
		res.err = fmt.Errorf("decode: %w", err)
		return res
	}
	if obj.IsList() {
		list, err := obj.ToList()
		if err != nil {
			res.err = err
			return res
		}
		res.objects = list.Items
	} else {
		res.objects = []unstructured.Unstructured{obj}
	}
	for i := range res.objects {
		a := res.objects[i].GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[ClusterAnnotation] = cluster
		res.objects[i].SetAnnotations(a)
	}
	return res
}

// getRaw GETs url and returns the body, or the Status message as an error.
func getRaw(hc *http.Client, u, accept string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return nil, fmt.Errorf("%s (%d)", st.Message, resp.StatusCode)
		}
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

func (o getOptions) print(results []memberResult, w io.Writer) error {
	switch o.output {
	case "yaml", "json":
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
		for _, r := range results {
			list.Items = append(list.Items, r.objects...)
		}
		data, err := list.MarshalJSON()
		if err != nil {
			return err
		}
		if o.output == "yaml" {
			if data, err = yaml.JSONToYAML(data); err != nil {
				return err
			}
		}
		_, err = w.Write(data)
		return err
	}
	return o.printTable(results, w)
}

func (o getOptions) printTable(results []memberResult, w io.Writer) error {
	var cols []metav1.TableColumnDefinition
	var keep []int
	for _, r := range results {
		if r.table != nil {
			for i, c := range r.table.ColumnDefinitions {
				if c.Priority == 0 || o.output == "wide" {
					cols = append(cols, c)
					keep = append(keep, i)
				}
			}
			break
		}
	}
	if cols == nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := []string{"CLUSTER"}
	if o.namespace == "" {
		header = append(header, "NAMESPACE")
	}
	for _, c := range cols {
		header = append(header, strings.ToUpper(c.Name))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range results {
		if r.table == nil {
			continue
		}
		for _, row := range r.table.Rows {
			line := []string{r.cluster}
			if o.namespace == "" {
				line = append(line, rowNamespace(row))
			}
			for _, i := range keep {
				line = append(line, cell(row.Cells, i))
			}
			fmt.Fprintln(tw, strings.Join(line, "\t"))
		}
	}
	return tw.Flush()
}

// rowNamespace reads the namespace from the row's partial object metadata
// (the server sends it by default), or prints none for cluster-scoped kinds.
func rowNamespace(row metav1.TableRow) string {
	var m struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if len(row.Object.Raw) > 0 && json.Unmarshal(row.Object.Raw, &m) == nil {
		return m.Metadata.Namespace
	}
	return ""
}

func cell(cells []any, i int) string {
	if i >= len(cells) || cells[i] == nil {
		return "<none>"
	}
	return fmt.Sprint(cells[i])
}
