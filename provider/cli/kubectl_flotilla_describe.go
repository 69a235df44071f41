package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/yaml"
)

func pluginDescribe(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("describe", stderr)
	o := getOptions{stderr: stderr}
	o.hostFlags(fs)
	o.memberFlags(fs, "comma-separated member `names`; default: every member that has the object")
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "kubectl flotilla describe: name a resource and one object")
		return 2
	}
	if err := o.describe(pos[0], pos[1], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// describe describes the object in each member of -C, or without -C in
// every member that has it, asked in parallel and printed in cluster
// order. A member named with -C that lacks the object is an error; without
// -C it is passed over, and an object in no member is an error naming the
// members. A member that does not answer is named and the others printed.
func (o getOptions) describe(resource, name string, stdout, stderr io.Writer) error {
	host, err := o.hostConfig()
	if err != nil {
		return err
	}
	explicit := o.clusters != ""
	clusters, err := o.clusterNames(host)
	if err != nil {
		return err
	}
	out := make([]bytes.Buffer, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { errs[i] = o.describeMember(host, c, resource, name, &out[i]) })
	}
	wg.Wait()
	var found, failed []string
	for i, c := range clusters {
		switch {
		case errs[i] == nil:
			if len(found) > 0 {
				fmt.Fprintln(stdout)
			}
			found = append(found, c)
			if _, err := out[i].WriteTo(stdout); err != nil {
				return err
			}
		case isNotFound(errs[i]) && !explicit:
		default:
			failed = append(failed, c)
			fmt.Fprintf(stderr, "error: %v\n", errs[i])
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("cluster(s) %s did not describe %s %s; the others are printed", strings.Join(failed, ", "), resource, name)
	case len(found) == 0:
		return fmt.Errorf("%s %s not found in clusters %s", resource, name, strings.Join(clusters, ", "))
	}
	return nil
}

// describeMember writes the object as the member serves it to the user
// (without its managed fields), then the member's events about it. Events
// the user may not list are said so; the object is still printed. Its
// errors name the cluster, and keep a 404 for the object recognisable.
func (o getOptions) describeMember(host *rest.Config, cluster, resource, name string, stdout io.Writer) error {
	cfg := memberConfig(host, cluster, o.timeout)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	if _, err := getRaw(hc, cfg.Host+"/version", "application/json"); err != nil {
		return fmt.Errorf("cluster %s: %w", cluster, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	gvr, namespaced, err := resolveResource(dc, resource)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", cluster, err)
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespaced {
		p = path.Join(p, "namespaces", o.namespace)
	}
	body, err := getRaw(hc, cfg.Host+path.Join(p, gvr.Resource, name), "application/json")
	if err != nil {
		return fmt.Errorf("cluster %s: %s %s: %w", cluster, gvr.GroupResource(), name, err)
	}
	var obj unstructured.Unstructured
	if err := obj.UnmarshalJSON(body); err != nil {
		return fmt.Errorf("cluster %s: decode: %w", cluster, err)
	}
	obj.SetManagedFields(nil)
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Cluster: %s\n%s", cluster, data)
	q := url.Values{"fieldSelector": {"involvedObject.name=" + name + ",involvedObject.uid=" + string(obj.GetUID())}}
	eventsPath := "/api/v1/events"
	if namespaced {
		eventsPath = "/api/v1/namespaces/" + url.PathEscape(o.namespace) + "/events"
	}
	body, err = getRaw(hc, cfg.Host+eventsPath+"?"+q.Encode(), "application/json")
	if err != nil {
		fmt.Fprintf(stdout, "Events: <cannot list in cluster %s: %v>\n", cluster, err)
		return nil
	}
	var events corev1.EventList
	if err := json.Unmarshal(body, &events); err != nil {
		return fmt.Errorf("cluster %s: decode events: %w", cluster, err)
	}
	if len(events.Items) == 0 {
		fmt.Fprintln(stdout, "Events: <none>")
		return nil
	}
	slices.SortFunc(events.Items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	fmt.Fprintln(stdout, "Events:")
	tw := tabwriter.NewWriter(stdout, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "  TYPE\tREASON\tAGE\tFROM\tMESSAGE")
	for _, e := range events.Items {
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", e.Type, e.Reason, duration.HumanDuration(time.Since(eventTime(e))), from, strings.TrimSpace(e.Message))
	}
	return tw.Flush()
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func pluginTop(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("top", stderr)
	o := getOptions{stderr: stderr}
	o.hostFlags(fs)
	o.memberFlags(fs, "comma-separated member `names`; default: every Cluster")
	for _, n := range []string{"A", "all-namespaces"} {
		fs.BoolVar(&o.allNamespaces, n, false, "across all namespaces")
	}
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || (pos[0] != "pods" && pos[0] != "pod" && pos[0] != "po" && pos[0] != "nodes" && pos[0] != "node" && pos[0] != "no") {
		fmt.Fprintln(stderr, "kubectl flotilla top: name pods or nodes")
		return 2
	}
	if err := o.top(strings.HasPrefix(pos[0], "n"), stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// topRow is one pod's or node's usage in one member.
type topRow struct {
	cluster, namespace, name string
	cpuMilli, memBytes       int64
}

// top reads metrics.k8s.io from each member through the proxy, as the
// user; a member that does not serve it is named, the others printed.
func (o getOptions) top(nodes bool, stdout, stderr io.Writer) error {
	host, err := o.hostConfig()
	if err != nil {
		return err
	}
	clusters, err := o.clusterNames(host)
	if err != nil {
		return err
	}
	rows := make([][]topRow, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { rows[i], errs[i] = o.topMember(host, c, nodes) })
	}
	wg.Wait()
	var failed []string
	for i, err := range errs {
		if err != nil {
			failed = append(failed, clusters[i])
			fmt.Fprintf(stderr, "error: cluster %s: %v\n", clusters[i], err)
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 3, ' ', 0)
	header := "CLUSTER\tNAME\tCPU(cores)\tMEMORY(bytes)"
	showNS := !nodes && o.namespace == ""
	if showNS {
		header = "CLUSTER\tNAMESPACE\tNAME\tCPU(cores)\tMEMORY(bytes)"
	}
	fmt.Fprintln(tw, header)
	for _, member := range rows {
		for _, r := range member {
			ns := ""
			if showNS {
				ns = r.namespace + "\t"
			}
			fmt.Fprintf(tw, "%s\t%s%s\t%dm\t%dMi\n", r.cluster, ns, r.name, r.cpuMilli, r.memBytes/(1024*1024))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("no metrics from cluster(s) %s; the others are printed", strings.Join(failed, ", "))
	}
	return nil
}

func (o getOptions) topMember(host *rest.Config, cluster string, nodes bool) ([]topRow, error) {
	cfg := memberConfig(host, cluster, o.timeout)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	const group = "/apis/" + metricsv1beta1.GroupName + "/v1beta1"
	// The group's discovery document is readable by every user; a 404
	// there means the member serves no metrics API at all.
	if _, err := getRaw(hc, cfg.Host+group, "application/json"); err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("member %s does not serve %s", cluster, metricsv1beta1.GroupName)
		}
		return nil, err
	}
	var rows []topRow
	if nodes {
		body, err := getRaw(hc, cfg.Host+group+"/nodes", "application/json")
		if err != nil {
			return nil, err
		}
		var list metricsv1beta1.NodeMetricsList
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, fmt.Errorf("decode node metrics: %w", err)
		}
		for _, m := range list.Items {
			rows = append(rows, topRow{cluster: cluster, name: m.Name, cpuMilli: m.Usage.Cpu().MilliValue(), memBytes: m.Usage.Memory().Value()})
		}
		return rows, nil
	}
	p := group + "/pods"
	if o.namespace != "" {
		p = group + "/namespaces/" + url.PathEscape(o.namespace) + "/pods"
	}
	body, err := getRaw(hc, cfg.Host+p, "application/json")
	if err != nil {
		return nil, err
	}
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode pod metrics: %w", err)
	}
	for _, m := range list.Items {
		r := topRow{cluster: cluster, namespace: m.Namespace, name: m.Name}
		for _, c := range m.Containers {
			r.cpuMilli += c.Usage.Cpu().MilliValue()
			r.memBytes += c.Usage.Memory().Value()
		}
		rows = append(rows, r)
	}
	return rows, nil
}
