package dashboard

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
)

// clusterRow is one member cluster on the fleet page.
type clusterRow struct {
	Name, Region, Provider, SyncMode, Version string
	// State is Ready, NotReady or Unknown; Reason and Message are the Ready
	// condition's, Since when it last changed.
	State, Reason, Message string
	Since                  string
	SinceTitle             string
	// Heartbeat is how long ago a Pull cluster's agent last renewed its
	// Lease, or a Push cluster last answered its probe Ready
	// (HeartbeatTime when); otherwise it says why no time is known.
	Heartbeat, HeartbeatTime string
	Taints                   []string
	Nodes                    string
	Capacity                 []capacity
	// Color is the cluster's colour class on placement bars.
	Color string
}

// capacity is one resource's use of a cluster: what pods request
// (allocated plus allocating) of the nodes' allocatable.
type capacity struct {
	Name        string
	Used, Total string
	Free        string
	Percent     int64
}

// fleetView is the fleet page.
type fleetView struct {
	Clusters     []clusterRow
	Total, Ready int
	Query        string
	Page         pager
}

// capacityResources are the resources the fleet page shows, in order.
var capacityResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods}

// colorClasses is how many colours placement bars cycle through.
const colorClasses = 8

// colors gives each cluster name a colour class by its place in the
// sorted fleet, so a cluster keeps its colour on every page.
func colors(clusters []clusterv1.Cluster) map[string]string {
	names := make([]string, len(clusters))
	for i := range clusters {
		names[i] = clusters[i].Name
	}
	sort.Strings(names)
	out := make(map[string]string, len(names))
	for i, n := range names {
		out[n] = fmt.Sprintf("c%d", i%colorClasses)
	}
	return out
}

// heartbeats say when each cluster was last heard from: renewed when a
// Pull cluster's agent last renewed its Lease, probed when a Push cluster
// last answered this process' probe Ready (nil or a nil answer: unknown).
// leading says this process runs the probes; a standby's dashboard knows
// no probe time, since only the leader probes.
type heartbeats struct {
	renewed, probed func(cluster string) *time.Time
	leading         bool
}

// buildFleet is the fleet page of clusters, filtered by a name substring
// and cut to one page, at now, with each cluster's last heartbeat (hb).
func buildFleet(clusters []clusterv1.Cluster, query string, page int, now time.Time, hb heartbeats) fleetView {
	palette := colors(clusters)
	v := fleetView{Query: query}
	// Only the page's rows are built in full (capacity, taints, times):
	// the order and the counts need the Ready state alone.
	type entry struct {
		c     *clusterv1.Cluster
		ready bool
	}
	matched := make([]entry, 0, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		ready := readyState(c) == "Ready"
		v.Total++
		if ready {
			v.Ready++
		}
		if query != "" && !strings.Contains(c.Name, query) {
			continue
		}
		matched = append(matched, entry{c, ready})
	}
	sort.Slice(matched, func(i, j int) bool {
		// Clusters that are not ready come first: during an incident they
		// are what the page is opened for.
		if matched[i].ready != matched[j].ready {
			return matched[j].ready
		}
		return matched[i].c.Name < matched[j].c.Name
	})
	v.Page = paginate(len(matched), page)
	v.Clusters = make([]clusterRow, 0, v.Page.to-v.Page.from)
	for _, e := range matched[v.Page.from:v.Page.to] {
		c := e.c
		row := clusterRowOf(c, now)
		row.Color = palette[c.Name]
		row.Heartbeat, row.HeartbeatTime = heartbeatOf(c, now, hb)
		v.Clusters = append(v.Clusters, row)
	}
	return v
}

// heartbeatOf is a cluster's last heartbeat as the page shows it: an age
// and its time, or why there is none.
func heartbeatOf(c *clusterv1.Cluster, now time.Time, hb heartbeats) (string, string) {
	lookup, none := hb.probed, "no successful probe yet"
	if c.Spec.SyncMode == api.Pull {
		lookup, none = hb.renewed, "no Lease renewal"
	}
	var t *time.Time
	if lookup != nil {
		t = lookup(c.Name)
	}
	switch {
	case t != nil:
		return ago(now.Sub(*t)) + " ago", t.UTC().Format(time.RFC3339)
	case c.Spec.SyncMode != api.Pull && !hb.leading:
		// Probe times live in the leader's memory (no host write per
		// probe); a standby can only say who probes.
		return "probed by the leader", ""
	}
	return none, ""
}

// readyState is Ready, NotReady or Unknown from the Ready condition.
func readyState(c *clusterv1.Cluster) string {
	if ready := apimeta.FindStatusCondition(c.Status.Conditions, api.ClusterConditionReady); ready != nil {
		switch ready.Status {
		case "True":
			return "Ready"
		case "False":
			return "NotReady"
		}
	}
	return "Unknown"
}

func clusterRowOf(c *clusterv1.Cluster, now time.Time) clusterRow {
	row := clusterRow{
		Name: c.Name, Region: c.Spec.Region, Provider: c.Spec.Provider,
		SyncMode: string(c.Spec.SyncMode), Version: c.Status.KubernetesVersion, State: readyState(c),
	}
	if row.SyncMode == "" {
		row.SyncMode = string(api.Push)
	}
	if ready := apimeta.FindStatusCondition(c.Status.Conditions, api.ClusterConditionReady); ready != nil {
		row.Reason, row.Message = ready.Reason, ready.Message
		if !ready.LastTransitionTime.IsZero() {
			row.Since = ago(now.Sub(ready.LastTransitionTime.Time))
			row.SinceTitle = ready.LastTransitionTime.UTC().Format(time.RFC3339)
		}
	}
	for _, t := range c.Spec.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		row.Taints = append(row.Taints, s+":"+string(t.Effect))
	}
	if n := c.Status.NodeSummary; n != nil {
		row.Nodes = fmt.Sprintf("%d/%d", n.ReadyNum, n.TotalNum)
	}
	if s := c.Status.ResourceSummary; s != nil {
		for _, name := range capacityResources {
			if cp, ok := capacityOf(s, name); ok {
				row.Capacity = append(row.Capacity, cp)
			}
		}
	}
	return row
}

// capacityOf is the use of one resource; false when the cluster reports no
// allocatable amount of it.
func capacityOf(s *api.ResourceSummary, name corev1.ResourceName) (capacity, bool) {
	total, ok := s.Allocatable[name]
	if !ok || total.IsZero() {
		return capacity{}, false
	}
	used := resource.Quantity{}
	if q, ok := s.Allocated[name]; ok {
		used.Add(q)
	}
	if q, ok := s.Allocating[name]; ok {
		used.Add(q)
	}
	free := total.DeepCopy()
	free.Sub(used)
	if free.Sign() < 0 {
		free = resource.Quantity{}
	}
	pct := used.MilliValue() * 100 / total.MilliValue()
	if name == corev1.ResourceMemory {
		// MilliValue of large memory amounts overflows; bytes suffice.
		pct = used.Value() * 100 / total.Value()
	}
	return capacity{Name: string(name), Used: quantity(name, used), Total: quantity(name, total), Free: quantity(name, free), Percent: min(pct, 100)}, true
}

// quantity prints memory in GiB and the rest as Kubernetes does.
func quantity(name corev1.ResourceName, q resource.Quantity) string {
	if name == corev1.ResourceMemory {
		return fmt.Sprintf("%.1fGi", float64(q.Value())/(1<<30))
	}
	if name == corev1.ResourceCPU && q.MilliValue()%1000 != 0 {
		return fmt.Sprintf("%.1f", float64(q.MilliValue())/1000)
	}
	return q.String()
}

// ago is a short age: 5s, 3m, 2h, 4d.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// pageSize is how many rows a page holds.
const pageSize = 50

// pager is one page of a list: rows [from, to) of Total, page Number of
// Pages (1-based).
type pager struct {
	Number, Pages, Total int
	from, to             int
}

// Prev and Next are the neighbouring page numbers; 0 when there is none.
func (p pager) Prev() int {
	if p.Number > 1 {
		return p.Number - 1
	}
	return 0
}

// Next is the following page number; 0 on the last page.
func (p pager) Next() int {
	if p.Number < p.Pages {
		return p.Number + 1
	}
	return 0
}

func paginate(total, page int) pager {
	pages := max(1, (total+pageSize-1)/pageSize)
	page = min(max(page, 1), pages)
	from := (page - 1) * pageSize
	return pager{Number: page, Pages: pages, Total: total, from: from, to: min(from+pageSize, total)}
}
