package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
)

func pluginCordon(args []string, stdout, stderr io.Writer) int {
	return cordonCommand("cordon", args, stdout, stderr)
}

func pluginUncordon(args []string, stdout, stderr io.Writer) int {
	return cordonCommand("uncordon", args, stdout, stderr)
}

// unschedulable is the taint cordon adds and uncordon removes, Karmada's:
// the scheduler places nothing new on the cluster; what runs there stays.
var unschedulable = corev1.Taint{Key: api.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}

func cordonCommand(verb string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(verb, stderr)
	o := getOptions{stderr: stderr}
	o.hostFlags(fs)
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	pos = dropClusterWord(pos)
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "kubectl flotilla %s: name one cluster\n", verb)
		return 2
	}
	change := taintChange{add: []corev1.Taint{unschedulable}}
	if verb == "uncordon" {
		change = taintChange{remove: []corev1.Taint{unschedulable}}
	}
	changed, err := o.changeTaints(pos[0], change)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	if !changed {
		fmt.Fprintf(stdout, "cluster/%s already %sed\n", pos[0], verb)
		return 0
	}
	fmt.Fprintf(stdout, "cluster/%s %sed\n", pos[0], verb)
	return 0
}

func pluginTaint(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("taint", stderr)
	o := getOptions{stderr: stderr}
	o.hostFlags(fs)
	var change taintChange
	fs.BoolVar(&change.overwrite, "overwrite", false, "replace the value of a taint with the same key and effect")
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	pos = dropClusterWord(pos)
	if len(pos) < 2 {
		fmt.Fprintln(stderr, "kubectl flotilla taint: name one cluster and at least one taint (KEY[=VALUE]:EFFECT, or KEY[:EFFECT]- to remove)")
		return 2
	}
	for _, spec := range pos[1:] {
		if err := change.parse(spec); err != nil {
			fmt.Fprintf(stderr, "kubectl flotilla taint: cluster %s: %v\n", pos[0], err)
			return 2
		}
	}
	if _, err := o.changeTaints(pos[0], change); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "cluster/%s tainted\n", pos[0])
	return 0
}

// dropClusterWord accepts `taint clusters NAME` as karmadactl spells it.
func dropClusterWord(pos []string) []string {
	if len(pos) > 0 && (pos[0] == "cluster" || pos[0] == "clusters") {
		return pos[1:]
	}
	return pos
}

// taintChange is what to add to and remove from a Cluster's spec.taints.
type taintChange struct {
	add, remove []corev1.Taint
	overwrite   bool
}

// parse reads one kubectl taint argument: KEY[=VALUE]:EFFECT adds,
// KEY[:EFFECT]- removes (every effect when none is named).
func (c *taintChange) parse(spec string) error {
	remove := strings.HasSuffix(spec, "-")
	spec = strings.TrimSuffix(spec, "-")
	keyValue, effect, hasEffect := strings.Cut(spec, ":")
	key, value, _ := strings.Cut(keyValue, "=")
	if key == "" {
		return fmt.Errorf("taint %q: no key", spec)
	}
	if hasEffect || !remove {
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("taint %q: effect %q must be NoSchedule, PreferNoSchedule or NoExecute", spec, effect)
		}
	}
	if api.IsClusterStatusTaint(key) {
		return fmt.Errorf("taint %q: the control plane sets and clears %s from the cluster's Ready condition", spec, key)
	}
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	if remove {
		c.remove = append(c.remove, t)
	} else {
		c.add = append(c.add, t)
	}
	return nil
}

// apply returns taints with c applied, and whether anything changed.
func (c taintChange) apply(cluster string, taints []corev1.Taint) ([]corev1.Taint, bool, error) {
	out := slices.Clone(taints)
	changed := false
	for _, r := range c.remove {
		before := len(out)
		out = slices.DeleteFunc(out, func(t corev1.Taint) bool {
			return t.Key == r.Key && (r.Effect == "" || t.Effect == r.Effect)
		})
		changed = changed || len(out) != before
	}
	for _, a := range c.add {
		i := slices.IndexFunc(out, func(t corev1.Taint) bool { return t.Key == a.Key && t.Effect == a.Effect })
		switch {
		case i < 0:
			out = append(out, a)
			changed = true
		case out[i].Value == a.Value:
		case !c.overwrite:
			return nil, false, fmt.Errorf("cluster %s already has taint %s=%s:%s; --overwrite to replace its value", cluster, a.Key, out[i].Value, a.Effect)
		default:
			out[i].Value = a.Value
			changed = true
		}
	}
	return out, changed, nil
}

// changeTaints applies c to the Cluster's spec.taints on the host with a
// merge patch that carries the resourceVersion read, so a taint the
// control plane wrote meanwhile (not-ready, unreachable) is never lost:
// the host refuses the stale patch and it is made again.
func (o getOptions) changeTaints(cluster string, c taintChange) (bool, error) {
	host, err := o.hostConfig()
	if err != nil {
		return false, err
	}
	dc, err := dynamic.NewForConfig(host)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	g, err := hostGroups(ctx, dc)
	if err != nil {
		return false, err
	}
	clusters := dc.Resource(hostResource(g, "cluster", "Cluster", "clusters"))
	changed := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := clusters.Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var cl clusterv1.Cluster
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cl); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		taints, ch, err := c.apply(cluster, cl.Spec.Taints)
		if err != nil || !ch {
			return err
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": cl.ResourceVersion},
			"spec":     map[string]any{"taints": taints},
		})
		if err != nil {
			return err
		}
		if _, err := clusters.Patch(ctx, cluster, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-flotilla"}); err != nil {
			return err
		}
		changed = true
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Errorf("cluster %s: no such Cluster on the host", cluster)
	case err != nil && strings.HasPrefix(err.Error(), "cluster "):
		return false, err
	case err != nil:
		return false, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	return changed, nil
}
