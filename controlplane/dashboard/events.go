package dashboard

import (
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// ExecutionNamespacePrefix starts the host namespace of one member's Works
// (the control plane's shared.ExecutionNamespacePrefix()): an event on a
// Work there concerns that member.
func ExecutionNamespacePrefix() string { return apis.Current().ExecutionNamespacePrefix() }

// eventRow is one event on the events page.
type eventRow struct {
	Age, Time    string
	Class, Type  string
	Reason, Note string
	Object       string
	Namespace    string
	Clusters     []string
	Link         string
	Count        int32
	Controller   string
	Warning      bool
}

// eventsView is the events page.
type eventsView struct {
	Events []eventRow
	// Namespaces and Clusters are those of the events the user may see,
	// for the filters; Namespace and Cluster are the ones filtered on.
	Namespaces, Clusters []string
	Namespace, Cluster   string
	Page                 pager
	// Hidden says some events were left out because the user may not list
	// events where they happened.
	Hidden bool
	// Synced is false until the watches have listed once.
	Synced bool
	Limit  int
}

// clusterInNote finds the clusters an event's note names: the control
// plane's notes say "cluster NAME" (left cluster east, …; stage canary:
// cluster west is Unhealthy).
var clusterInNote = regexp.MustCompile(`\bclusters? ([a-z0-9]([-a-z0-9.]*[a-z0-9])?)`)

// clustersOf are the member clusters an event concerns: the Cluster it is
// about, the member of the execution namespace of the Work it is about, or
// the clusters its note names.
func clustersOf(e *corev1.Event) []string {
	o := e.InvolvedObject
	if o.Kind == "Cluster" && strings.HasPrefix(o.APIVersion, clusterv1.GroupVersion.Group+"/") {
		return []string{o.Name}
	}
	if c, ok := strings.CutPrefix(o.Namespace, ExecutionNamespacePrefix()); ok && c != "" {
		return []string{c}
	}
	var out []string
	for _, m := range clusterInNote.FindAllStringSubmatch(e.Message, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// classOf is the class of a watched reason; "" for one not watched.
func classOf(e *corev1.Event) string {
	for _, we := range watchedEvents {
		if we.reason == e.Reason && we.controller == e.ReportingController {
			if we.reason == "SyncFailed" && strings.HasPrefix(e.Message, "Refused:") {
				// The execution controller refuses an object that is not
				// flotilla's (a conflict) or that a check forbids.
				return "conflict"
			}
			return we.class
		}
	}
	return ""
}

// isTwin reports whether e is the template's copy of an event recorded on
// its binding too (the control plane records both, each naming the other
// as related): the page shows the binding's.
func isTwin(e *corev1.Event) bool {
	r := e.Related
	return r != nil && strings.HasPrefix(r.APIVersion, workv1.GroupVersion.Group+"/") &&
		(r.Kind == "ResourceBinding" || r.Kind == "ClusterResourceBinding")
}

// buildEvents is the events page over events (newest first) that the user
// may see, filtered by namespace and cluster, cut to one page, at now.
// visible says whether the user may list events in a namespace ("": in
// every namespace). An event shows when the user may list events both
// where it is stored and in the namespace of the object it is about; one
// about a cluster-scoped object (a Cluster) needs events in every
// namespace.
func buildEvents(events []*corev1.Event, visible func(ns string) bool, ns, cluster string, page int, now time.Time) eventsView {
	v := eventsView{Namespace: ns, Cluster: cluster}
	seen := map[string]bool{}
	allowed := func(n string) bool {
		ok, known := seen[n]
		if !known {
			ok = visible(n)
			seen[n] = ok
		}
		return ok
	}
	namespaces, clusters := map[string]bool{}, map[string]bool{}
	var rows []eventRow
	for _, e := range events {
		class := classOf(e)
		if class == "" || isTwin(e) {
			continue
		}
		involved := e.InvolvedObject.Namespace
		if !allowed(involved) || (e.Namespace != involved && !allowed(e.Namespace)) {
			v.Hidden = true
			continue
		}
		cs := clustersOf(e)
		if involved != "" {
			namespaces[involved] = true
		}
		for _, c := range cs {
			clusters[c] = true
		}
		if (ns != "" && involved != ns) || (cluster != "" && !slices.Contains(cs, cluster)) {
			continue
		}
		o := e.InvolvedObject
		row := eventRow{
			Class: class, Type: e.Type, Reason: e.Reason, Note: e.Message, Namespace: involved, Clusters: cs,
			Object: o.Kind + " " + strings.TrimPrefix(o.Namespace+"/"+o.Name, "/"), Controller: e.ReportingController,
			Warning: e.Type == corev1.EventTypeWarning, Count: 1,
		}
		if e.Series != nil && e.Series.Count > 0 {
			row.Count = e.Series.Count
		} else if e.Count > 1 {
			row.Count = e.Count
		}
		if t := eventTime(e); !t.IsZero() {
			row.Age, row.Time = ago(now.Sub(t)), t.UTC().Format(time.RFC3339)
		}
		if o.Kind == "ResourceBinding" && strings.HasPrefix(o.APIVersion, workv1.GroupVersion.Group+"/") {
			row.Link = "/workloads/" + o.Namespace + "/" + o.Name
		}
		rows = append(rows, row)
	}
	v.Namespaces, v.Clusters = sortedKeys(namespaces), sortedKeys(clusters)
	v.Page = paginate(len(rows), page)
	v.Events = rows[v.Page.from:v.Page.to]
	return v
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request) {
	u := userOf(r.Context())
	everywhere := s.access.canList(r.Context(), u, eventsResource, "")
	visible := func(ns string) bool {
		if everywhere {
			return true
		}
		return ns != "" && s.access.canList(r.Context(), u, eventsResource, ns)
	}
	q := r.URL.Query()
	v := buildEvents(s.watches.Events(), visible, strings.TrimSpace(q.Get("namespace")), strings.TrimSpace(q.Get("cluster")), pageNumber(r), s.now())
	v.Synced, v.Limit = s.watches.HasSynced(), s.watches.Limit()
	s.render(w, r, http.StatusOK, "events", page{Title: "Events", Nav: "events", View: v})
}
