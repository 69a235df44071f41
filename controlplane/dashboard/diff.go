package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// LabelBindingPermanentID ties a Work to its binding by the binding's UID
// (the control plane's shared.LabelBindingPermanentID).
const LabelBindingPermanentID = "resourcebinding.flotilla.io/permanent-id"

// diffContext is how many unchanged lines surround a change.
const diffContext = 3

// diffLine is one line of a rendered diff: a hunk header ("hunk"), a line
// of the template only ("del"), of the cluster's manifest only ("add"), or
// of both ("same").
type diffLine struct {
	Kind, Text string
}

// lineDiff is the unified diff of after against before, line by line, with
// diffContext lines around each change; nil when they are equal.
func lineDiff(before, after string) ([]diffLine, error) {
	if before == after {
		return nil, nil
	}
	u, err := udiff.ToUnifiedDiff("template", "cluster", before, udiff.Lines(before, after), diffContext)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	var out []diffLine
	for _, h := range u.Hunks {
		var del, add int
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				del++
			case udiff.Insert:
				add++
			default:
				del++
				add++
			}
		}
		out = append(out, diffLine{Kind: "hunk", Text: fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.FromLine, del, h.ToLine, add)})
		for _, l := range h.Lines {
			text := strings.TrimSuffix(l.Content, "\n")
			switch l.Kind {
			case udiff.Delete:
				out = append(out, diffLine{Kind: "del", Text: "-" + text})
			case udiff.Insert:
				out = append(out, diffLine{Kind: "add", Text: "+" + text})
			default:
				out = append(out, diffLine{Kind: "same", Text: " " + text})
			}
		}
	}
	return out, nil
}

// comparableYAML is an object as YAML with sorted keys, without what the
// renderer strips before a member gets it (server-populated metadata,
// status) and without flotilla's own labels and annotations, which every
// rendered copy carries: what is left differs only where replicas were
// divided or an override applied.
func comparableYAML(obj *unstructured.Unstructured) (string, error) {
	o := obj.DeepCopy()
	interpret.Prune(o)
	for _, f := range []struct {
		get func() map[string]string
		set func(map[string]string)
	}{{o.GetLabels, o.SetLabels}, {o.GetAnnotations, o.SetAnnotations}} {
		m := f.get()
		for k := range m {
			if render.Reserved(k) {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			m = nil // removes the field: a template without any is not "{}"
		}
		f.set(m)
	}
	b, err := yaml.Marshal(o.Object)
	if err != nil {
		return "", fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return string(b), nil
}

// clusterDiff is one cluster's rendered manifest against the template.
type clusterDiff struct {
	Cluster, Color string
	Lines          []diffLine
	Added, Removed int
	// Error says why there is no diff (no Work yet, a manifest that does
	// not decode).
	Error string
}

// diffsOf are the per-cluster diffs of a binding's Works (those the
// permanent-id label ties to it) against its template, in the order of
// clusters; a placed cluster without a Work says so.
func diffsOf(template *unstructured.Unstructured, works []workv1.Work, clusters []string, palette map[string]string) []clusterDiff {
	base, err := comparableYAML(template)
	if err != nil {
		return []clusterDiff{{Error: err.Error()}}
	}
	byCluster := map[string]*workv1.Work{}
	for i := range works {
		if c, ok := strings.CutPrefix(works[i].Namespace, ExecutionNamespacePrefix()); ok {
			byCluster[c] = &works[i]
			if !slices.Contains(clusters, c) {
				// A Work left on a cluster the binding no longer places on
				// (being evicted): shown too, after the placed ones.
				clusters = append(clusters, c)
			}
		}
	}
	out := make([]clusterDiff, 0, len(clusters))
	for _, c := range clusters {
		d := clusterDiff{Cluster: c, Color: palette[c]}
		w, ok := byCluster[c]
		if !ok {
			d.Error = "no Work for this cluster yet"
			out = append(out, d)
			continue
		}
		m, err := manifestOf(w, template)
		if err == nil {
			var rendered string
			if rendered, err = comparableYAML(m); err == nil {
				d.Lines, err = lineDiff(base, rendered)
			}
		}
		if err != nil {
			d.Error = fmt.Sprintf("Work %s/%s: %v", w.Namespace, w.Name, err)
		}
		for _, l := range d.Lines {
			switch l.Kind {
			case "add":
				d.Added++
			case "del":
				d.Removed++
			}
		}
		out = append(out, d)
	}
	return out
}

// manifestOf is the Work's manifest of the template: the one of the same
// kind and name.
func manifestOf(w *workv1.Work, template *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for _, m := range w.Spec.Workload.Manifests {
		var u unstructured.Unstructured
		if err := json.Unmarshal(m.Raw, &u.Object); err != nil {
			return nil, fmt.Errorf("decode manifest: %w", err)
		}
		if u.GetKind() == template.GetKind() && u.GetName() == template.GetName() {
			return &u, nil
		}
	}
	return nil, fmt.Errorf("no manifest of %s %s", template.GetKind(), template.GetName())
}

// renderedDiffs are a binding's per-cluster diffs for user u, or a note
// saying why there are none: the user must be allowed to get the template
// itself, since the rendered manifests carry all of it.
func (s *Server) renderedDiffs(ctx context.Context, u user.Info, rb *workv1.ResourceBinding, palette map[string]string) ([]clusterDiff, string) {
	if (s.templates == nil && s.api == nil) || s.mapper == nil {
		return nil, "The rendered manifests are not available in this dashboard."
	}
	res := rb.Spec.Resource
	k, err := s.kindOf(res)
	if err != nil {
		return nil, "The rendered manifests are not shown: " + err.Error() + "."
	}
	if !s.access.canGet(ctx, u, k.res, res.Namespace, res.Name) {
		return nil, fmt.Sprintf("The host does not allow %s to get %s %s/%s, so its rendered manifests are not shown.", u.GetName(), k.res.name, res.Namespace, res.Name)
	}
	// From the cache: an open page refreshes every few seconds, and each
	// refresh must not cost the host a GET.
	tmpl, err := s.template(ctx, k, res.Namespace, res.Name)
	if err != nil {
		return nil, fmt.Sprintf("Reading the template %s %s/%s failed: %v", res.Kind, res.Namespace, res.Name, err)
	}
	var works workv1.WorkList
	if err := s.reader.List(ctx, &works, client.MatchingLabels{LabelBindingPermanentID: string(rb.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Sprintf("Listing the Works failed: %v", err)
	}
	clusters := make([]string, 0, len(rb.Spec.Clusters))
	for _, tc := range rb.Spec.Clusters {
		clusters = append(clusters, tc.Name)
	}
	sort.SliceStable(works.Items, func(i, j int) bool { return works.Items[i].Namespace < works.Items[j].Namespace })
	return diffsOf(tmpl, works.Items, clusters, palette), ""
}
