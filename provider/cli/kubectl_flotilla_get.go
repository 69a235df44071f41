package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
)

// Where `get` reads from: the search cache when a ResourceRegistry covers
// the kind (auto), only the cache, or only the cluster proxy.
const (
	sourceAuto  = "auto"
	sourceCache = "cache"
	sourceProxy = "proxy"
)

// getCommand is `get`: the shared options, where to read, and -v.
type getCommand struct {
	getOptions
	source    string
	verbosity int
}

func pluginGet(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("get", stderr)
	o := getCommand{getOptions: getOptions{stderr: stderr}}
	o.hostFlags(fs)
	o.memberFlags(fs, "comma-separated member `names`; default: every Cluster")
	for _, n := range []string{"A", "all-namespaces"} {
		fs.BoolVar(&o.allNamespaces, n, false, "list across all namespaces")
	}
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&o.output, n, "", "output: wide, yaml or json; default a table")
	}
	fs.StringVar(&o.source, "source", sourceAuto, "where to read: auto (the search cache when it caches the kind, else the cluster proxy), cache or proxy")
	fs.IntVar(&o.verbosity, "v", 0, "verbosity; 1 or more says on stderr which source answered and why")
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprintln(stderr, "kubectl flotilla get: name a resource, and at most one object")
		return 2
	}
	switch o.output {
	case "", "wide", "yaml", "json":
	default:
		fmt.Fprintf(stderr, "kubectl flotilla get: -o %q: must be wide, yaml or json\n", o.output)
		return 2
	}
	switch o.source {
	case sourceAuto, sourceCache, sourceProxy:
	default:
		fmt.Fprintf(stderr, "kubectl flotilla get: --source %q: must be auto, cache or proxy\n", o.source)
		return 2
	}
	resource, name := pos[0], ""
	if len(pos) == 2 {
		name = pos[1]
	}
	if err := o.run(resource, name, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// memberResult is one member's answer.
type memberResult struct {
	cluster string
	table   *textTable
	objects []unstructured.Unstructured
	err     error
}

func (o getCommand) run(resource, name string, stdout, stderr io.Writer) error {
	host, err := o.hostConfig()
	if err != nil {
		return err
	}
	if o.source != sourceProxy {
		results, err := o.fromCache(host, resource, name)
		if err == nil {
			o.logf("source: search cache")
			return o.print(results, stdout)
		}
		if o.source == sourceCache {
			return fmt.Errorf("search cache: %w", err)
		}
		o.logf("source: cluster proxy, as the search cache did not answer: %v", err)
	} else {
		o.logf("source: cluster proxy (--source=proxy)")
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

func (o getCommand) logf(format string, args ...any) {
	if o.verbosity > 0 {
		fmt.Fprintf(o.stderr, format+"\n", args...)
	}
}

// fromCache lists resource (name, when set) from the host's search cache,
// one result per member in -C's order or by name. The resource is resolved
// with the host's discovery: the cache serves a member's paths, and a kind
// the host does not know is read through the proxy. The host decides what
// the user sees (its RBAC per namespace); a refusal falls back to the
// proxy, where each member decides as the user.
func (o getCommand) fromCache(host *rest.Config, resource, name string) ([]memberResult, error) {
	cfg := rest.CopyConfig(host)
	cfg.Timeout = o.timeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	gvr, namespaced, err := resolveResource(dc, resource)
	if err != nil {
		return nil, fmt.Errorf("the host does not resolve it: %w", err)
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespaced && o.namespace != "" {
		p = path.Join(p, "namespaces", o.namespace)
	}
	u := strings.TrimSuffix(cfg.Host, "/") + fleetview.SearchPrefix + path.Join(p, gvr.Resource)
	if q := o.listQuery(name, true); len(q) > 0 {
		u += "?" + q.Encode()
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return o.readCache(hc, u, gvr, name)
}

// listQuery is the query of a list of resource (name, when set, as a
// field selector when byField): a table's rows carry no object when
// nothing is printed from it, that is when one namespace is listed and its
// column is not printed (includeObject=None, as an apiserver honours it),
// which makes the cache's answer a fraction of the size.
func (o getOptions) listQuery(name string, byField bool) url.Values {
	q := url.Values{}
	if name != "" && byField {
		q.Set("fieldSelector", "metadata.name="+name)
	}
	if o.wantsTable() && o.namespace != "" {
		q.Set("includeObject", string(metav1.IncludeNone))
	}
	return q
}

// wantsTable reports whether get prints a table (asks for one).
func (o getOptions) wantsTable() bool { return o.output == "" || o.output == "wide" }

// tableAccept asks for a meta.k8s.io/v1 Table first, as kubectl get does,
// and takes a plain list from a server that has none.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// readCache reads the cache's list at u and splits it per member. For a
// table it asks the cache for one, as kubectl does a member: the cache
// prints the kind's columns (READY, UP-TO-DATE, AVAILABLE for
// Deployments) and the plugin decodes the rows as they stream in, as text,
// never the whole objects. A cache that answers a list instead gets NAME
// and AGE.
func (o getCommand) readCache(hc *http.Client, u string, gvr schema.GroupVersionResource, name string) ([]memberResult, error) {
	accept := "application/json"
	if o.wantsTable() {
		accept = tableAccept
	}
	body, err := getStream(hc, u, accept)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	br := bufio.NewReaderSize(body, 64<<10)
	// The cache writes the kind first: a table is decoded as it streams,
	// anything else is a list of whole objects.
	head, _ := br.Peek(len(`{"kind":"Table",`))
	if bytes.Equal(head, []byte(`{"kind":"Table",`)) {
		t, err := decodeTable(br)
		if err != nil {
			return nil, fmt.Errorf("decode table: %w", err)
		}
		if name != "" && len(t.rows) == 0 {
			return nil, errors.New(gvr.GroupResource().String() + " " + name + " not found in the cache")
		}
		return o.splitTable(t)
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	var list unstructured.UnstructuredList
	if err := list.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	byCluster := map[string][]unstructured.Unstructured{}
	for _, obj := range list.Items {
		c := obj.GetAnnotations()[ClusterAnnotation]
		byCluster[c] = append(byCluster[c], obj)
	}
	clusters := splitList(o.clusters)
	if len(clusters) == 0 {
		for c := range byCluster {
			clusters = append(clusters, c)
		}
		slices.Sort(clusters)
	}
	if name != "" && len(list.Items) == 0 {
		return nil, errors.New(gvr.GroupResource().String() + " " + name + " not found in the cache")
	}
	results := make([]memberResult, len(clusters))
	for i, c := range clusters {
		results[i] = memberResult{cluster: c, objects: byCluster[c]}
		if o.wantsTable() {
			results[i].table = cacheTable(byCluster[c])
		}
	}
	return results, nil
}

// splitTable splits the cache's table, whose first column names each
// row's member, into one table per member in -C's order or by name.
func (o getCommand) splitTable(t *textTable) ([]memberResult, error) {
	if len(t.columns) == 0 || t.columns[0].Name != "Cluster" {
		return nil, errors.New("the cache's table has no Cluster column first")
	}
	cols := t.columns[1:]
	byCluster := map[string]*memberResult{}
	for _, row := range t.rows {
		c := cellText(row.cells, 0)
		mr := byCluster[c]
		if mr == nil {
			mr = &memberResult{cluster: c, table: &textTable{columns: cols}}
			byCluster[c] = mr
		}
		if len(row.cells) > 0 {
			row.cells = row.cells[1:]
		}
		mr.table.rows = append(mr.table.rows, row)
	}
	clusters := splitList(o.clusters)
	if len(clusters) == 0 {
		for c := range byCluster {
			clusters = append(clusters, c)
		}
		slices.Sort(clusters)
	}
	results := make([]memberResult, len(clusters))
	for i, c := range clusters {
		if mr := byCluster[c]; mr != nil {
			results[i] = *mr
		} else {
			results[i] = memberResult{cluster: c, table: &textTable{columns: cols}}
		}
	}
	return results, nil
}

// resolveResource maps a kubectl resource name (plural, singular, short
// name or kind) to its resource with dc's discovery.
func resolveResource(dc discovery.DiscoveryInterface, resource string) (schema.GroupVersionResource, bool, error) {
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: resource})
	if err != nil {
		return gvr, false, fmt.Errorf("resource %q: %w", resource, err)
	}
	kind, err := mapper.KindFor(gvr)
	if err != nil {
		return gvr, false, err
	}
	mapping, err := mapper.RESTMapping(kind.GroupKind(), kind.Version)
	if err != nil {
		return gvr, false, err
	}
	return gvr, mapping.Scope.Name() == "namespace", nil
}

// cacheTable is the table of cached objects from a cache that answers a
// list rather than a table: the columns kubectl prints for a kind without
// printer columns (name and age).
func cacheTable(objs []unstructured.Unstructured) *textTable {
	t := &textTable{columns: []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Age", Type: "string"}}}
	for _, obj := range objs {
		age := "<unknown>"
		if ts := obj.GetCreationTimestamp(); !ts.IsZero() {
			age = duration.HumanDuration(time.Since(ts.Time))
		}
		t.rows = append(t.rows, textRow{cells: []string{obj.GetName(), age}, namespace: obj.GetNamespace()})
	}
	return t
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
	gvr, namespaced, err := resolveResource(dc, resource)
	if err != nil {
		res.err = err
		return res
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespaced && o.namespace != "" {
		p = path.Join(p, "namespaces", o.namespace)
	}
	p = path.Join(p, gvr.Resource)
	if name != "" {
		p = path.Join(p, name)
	}
	if o.wantsTable() {
		if q := o.listQuery(name, false); len(q) > 0 {
			p += "?" + q.Encode()
		}
		body, err := getStream(hc, cfg.Host+p, tableAccept)
		if err != nil {
			res.err = err
			return res
		}
		defer body.Close()
		if res.table, err = decodeTable(body); err != nil {
			res.err = fmt.Errorf("decode table: %w", err)
		}
		return res
	}
	body, err := getRaw(hc, cfg.Host+p, "application/json")
	if err != nil {
		res.err = err
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
		} else {
			// Indented as kubectl prints it.
			var b bytes.Buffer
			if err := json.Indent(&b, data, "", "    "); err != nil {
				return err
			}
			data = append(b.Bytes(), '\n')
		}
		_, err = w.Write(data)
		return err
	}
	return o.printTable(results, w)
}

// printTable prints the members' tables under one header, as kubectl
// prints a table, with CLUSTER first and NAMESPACE when listing across
// namespaces; columns of priority above 0 only with -o wide.
func (o getOptions) printTable(results []memberResult, w io.Writer) error {
	var cols []metav1.TableColumnDefinition
	var keep []int
	for _, r := range results {
		if r.table != nil {
			for i, c := range r.table.columns {
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
	header := []string{"CLUSTER"}
	if o.namespace == "" {
		header = append(header, "NAMESPACE")
	}
	for _, c := range cols {
		header = append(header, strings.ToUpper(c.Name))
	}
	line := make([]string, 0, len(header))
	return writeAligned(w, func(yield func([]string)) {
		yield(header)
		for _, r := range results {
			if r.table == nil {
				continue
			}
			for _, row := range r.table.rows {
				line = append(line[:0], r.cluster)
				if o.namespace == "" {
					line = append(line, row.namespace)
				}
				for _, i := range keep {
					line = append(line, cellText(row.cells, i))
				}
				yield(line)
			}
		}
	})
}

// cellText is cell i of a row as printed: <none> when the row has none.
func cellText(cells []string, i int) string {
	if i >= len(cells) {
		return noneCell
	}
	return cells[i]
}
