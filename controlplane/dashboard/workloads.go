package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// workloadRow is one template (its ResourceBinding) on the workloads page.
type workloadRow struct {
	Namespace, Name string
	// Template is "Kind namespace/name" of the resource template.
	Template, Kind string
	Policy         string
	Placement      []segment
	// PlacementLabel reads the placement out for screen readers.
	PlacementLabel string
	// Health is Healthy, Unhealthy, Progressing or Unknown; Healthy and
	// Placed count the healthy clusters of the placed ones.
	Health          string
	Healthy, Placed int
	// Why are the conditions that are not True, with their reasons: the
	// scheduler's and the appliers' answer to "why not".
	Why     []condition
	Rollout string
}

// segment is one cluster's share of a placement bar, in percent of the
// bar's width starting at Offset.
type segment struct {
	Cluster         string
	Replicas        int32
	Offset, Percent float64
	Color           string
}

// condition is one binding condition shown to the user.
type condition struct {
	Type, Status, Reason, Message string
}

// workloadsView is the workloads page.
type workloadsView struct {
	Workloads []workloadRow
	// Namespaces are those the user may list bindings in and that hold
	// some; Namespace is the one filtered on (all when empty).
	Namespaces []string
	Namespace  string
	Query      string
	// Labels is the label selector as typed, LabelsError why it does not
	// parse (then nothing matches).
	Labels, LabelsError string
	Page                pager
	// Hidden says some namespaces were left out because the user may not
	// list bindings there.
	Hidden bool
}

// policyOf names the propagation policy that claims the binding: the
// control plane's label, else Karmada's annotations (a binding brought
// from Karmada).
func policyOf(rb *workv1.ResourceBinding) string {
	if ref, ok := policy.ParseClaimRef(rb.Labels[hoststore.LabelPolicy]); ok {
		return ref.Kind + " " + ref.Name
	}
	a := rb.Annotations
	if n := a[policy.AnnotationClaimClusterPolicyName]; n != "" {
		return "ClusterPropagationPolicy " + n
	}
	if n := a[policy.AnnotationClaimPolicyName]; n != "" {
		return "PropagationPolicy " + n
	}
	return ""
}

// placementOf is the binding's placement bar: each cluster's replicas as a
// share of the total; clusters with no replica count (a Duplicated or
// non-workload template) get equal shares.
func placementOf(rb *workv1.ResourceBinding, palette map[string]string) ([]segment, string) {
	var total int32
	for _, tc := range rb.Spec.Clusters {
		total += tc.Replicas
	}
	segs := make([]segment, 0, len(rb.Spec.Clusters))
	labels := make([]string, 0, len(rb.Spec.Clusters))
	offset := 0.0
	for _, tc := range rb.Spec.Clusters {
		share := 100 / float64(len(rb.Spec.Clusters))
		if total > 0 {
			share = 100 * float64(tc.Replicas) / float64(total)
		}
		segs = append(segs, segment{Cluster: tc.Name, Replicas: tc.Replicas, Offset: offset, Percent: share, Color: palette[tc.Name]})
		offset += share
		if total > 0 {
			labels = append(labels, fmt.Sprintf("%s %d", tc.Name, tc.Replicas))
		} else {
			labels = append(labels, tc.Name)
		}
	}
	if len(labels) == 0 {
		return segs, "not placed"
	}
	return segs, strings.Join(labels, ", ")
}

// healthOf sums the members' reports of the placed clusters.
func healthOf(rb *workv1.ResourceBinding) (string, int, int) {
	placed := len(rb.Spec.Clusters)
	reports := map[string]api.ResourceHealth{}
	for _, s := range rb.Status.AggregatedStatus {
		reports[s.ClusterName] = s.Health
	}
	healthy, unhealthy := 0, 0
	for _, tc := range rb.Spec.Clusters {
		switch reports[tc.Name] {
		case api.ResourceHealthy:
			healthy++
		case api.ResourceUnhealthy:
			unhealthy++
		}
	}
	switch {
	case placed == 0:
		return "Unknown", 0, 0
	case healthy == placed:
		return "Healthy", healthy, placed
	case unhealthy > 0:
		return "Unhealthy", healthy, placed
	}
	return "Progressing", healthy, placed
}

func conditionsOf(cs []metav1.Condition, onlyFalse bool) []condition {
	var out []condition
	for _, c := range cs {
		if onlyFalse && c.Status == metav1.ConditionTrue {
			continue
		}
		out = append(out, condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

func workloadRowOf(rb *workv1.ResourceBinding, palette map[string]string) workloadRow {
	r := rb.Spec.Resource
	row := workloadRow{
		Namespace: rb.Namespace, Name: rb.Name, Kind: r.Kind,
		Template: r.Kind + " " + r.Namespace + "/" + r.Name, Policy: policyOf(rb),
		Why: conditionsOf(rb.Status.Conditions, true),
	}
	row.Placement, row.PlacementLabel = placementOf(rb, palette)
	row.Health, row.Healthy, row.Placed = healthOf(rb)
	if ro := rb.Status.Rollout; ro != nil {
		row.Rollout = string(ro.Phase)
		if ro.Stage != "" {
			row.Rollout += " · " + ro.Stage
		}
	}
	return row
}

// buildWorkloads is the workloads page over the bindings the user may see
// (visible says, per namespace, whether they may list bindings there),
// filtered by namespace, a substring of the template's or binding's name
// and a label selector (matches says whether a binding's template or the
// binding matches it; nil: all), cut to one page.
func buildWorkloads(bindings []workv1.ResourceBinding, visible func(ns string) bool, palette map[string]string, ns, query string, matches func(*workv1.ResourceBinding) bool, page int) workloadsView {
	v := workloadsView{Namespace: ns, Query: query}
	seen := map[string]bool{}
	var matched []*workv1.ResourceBinding
	for i := range bindings {
		rb := &bindings[i]
		allowed, known := seen[rb.Namespace]
		if !known {
			allowed = visible(rb.Namespace)
			seen[rb.Namespace] = allowed
			if allowed {
				v.Namespaces = append(v.Namespaces, rb.Namespace)
			} else {
				v.Hidden = true
			}
		}
		if !allowed || (ns != "" && rb.Namespace != ns) {
			continue
		}
		if query != "" && !strings.Contains(rb.Name, query) && !strings.Contains(rb.Spec.Resource.Name, query) {
			continue
		}
		if matches != nil && !matches(rb) {
			continue
		}
		matched = append(matched, rb)
	}
	sort.Strings(v.Namespaces)
	sort.Slice(matched, func(i, j int) bool {
		if matched[i].Namespace != matched[j].Namespace {
			return matched[i].Namespace < matched[j].Namespace
		}
		return matched[i].Name < matched[j].Name
	})
	v.Page = paginate(len(matched), page)
	// Only the rows of the page are built: at thousands of bindings the
	// filter is cheap and the rows are not.
	for _, rb := range matched[v.Page.from:v.Page.to] {
		v.Workloads = append(v.Workloads, workloadRowOf(rb, palette))
	}
	return v
}

// memberRow is one placed cluster on a workload's page.
type memberRow struct {
	Cluster  string
	Replicas int32
	Applied  string
	Message  string
	Health   string
	Status   string
	Color    string
}

// evictionRow is a graceful eviction in progress.
type evictionRow struct {
	From, Reason, Message, Producer, Age string
}

// workloadView is one workload's page.
type workloadView struct {
	workloadRow
	Members    []memberRow
	Conditions []condition
	Evictions  []evictionRow
	// RolloutReason and RolloutMessage say why a staged rollout waits or
	// halted.
	RolloutReason, RolloutMessage string
	Scheduled                     string
	// Diffs are each cluster's rendered manifest against the template;
	// DiffNote says why there are none.
	Diffs    []clusterDiff
	DiffNote string
}

func buildWorkload(rb *workv1.ResourceBinding, palette map[string]string, now time.Time) workloadView {
	v := workloadView{workloadRow: workloadRowOf(rb, palette), Conditions: conditionsOf(rb.Status.Conditions, false)}
	reports := map[string]api.AggregatedStatusItem{}
	for _, s := range rb.Status.AggregatedStatus {
		reports[s.ClusterName] = s
	}
	for _, tc := range rb.Spec.Clusters {
		m := memberRow{Cluster: tc.Name, Replicas: tc.Replicas, Color: palette[tc.Name], Applied: "not yet", Health: "Unknown"}
		if s, ok := reports[tc.Name]; ok {
			if s.Applied {
				m.Applied = "yes"
			} else if s.AppliedMessage != "" {
				m.Applied = "no"
			}
			m.Message = s.AppliedMessage
			if s.Health != "" {
				m.Health = string(s.Health)
			}
			if s.Status != nil && len(s.Status.Raw) > 0 {
				var buf bytes.Buffer
				if json.Indent(&buf, s.Status.Raw, "", "  ") == nil {
					m.Status = buf.String()
				}
			}
		}
		v.Members = append(v.Members, m)
	}
	for _, e := range rb.Spec.GracefulEvictionTasks {
		row := evictionRow{From: e.FromCluster, Reason: e.Reason, Message: e.Message, Producer: e.Producer}
		if e.CreationTimestamp != nil {
			row.Age = ago(now.Sub(e.CreationTimestamp.Time))
		}
		v.Evictions = append(v.Evictions, row)
	}
	if ro := rb.Status.Rollout; ro != nil {
		v.RolloutReason, v.RolloutMessage = ro.Reason, ro.Message
	}
	if t := rb.Status.LastScheduledTime; t != nil {
		v.Scheduled = ago(now.Sub(t.Time)) + " ago"
	}
	return v
}
