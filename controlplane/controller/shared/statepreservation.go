package shared

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// PreservedLabelState is Karmada's helper.BuildPreservedLabelState: each
// rule's JSONPath, evaluated against the status the template's object
// reported from cluster (the path starts at status: `{.jobID}`, not
// `{.status.jobID}`), becomes the value of its aliasLabelName. nil when
// there are no rules. It fails, and the failover waits, when the status
// has not been collected from cluster, a path finds nothing, or a value is
// not a valid label value (Karmada would render an object its member
// refuses).
func PreservedLabelState(sp *api.StatePreservation, status []api.AggregatedStatusItem, cluster string) (map[string]string, error) {
	if sp == nil || len(sp.Rules) == 0 {
		return nil, nil
	}
	i := slices.IndexFunc(status, func(it api.AggregatedStatusItem) bool { return it.ClusterName == cluster })
	if i < 0 || status[i].Status == nil || len(status[i].Status.Raw) == 0 {
		return nil, fmt.Errorf("state preservation: the status has not been collected from cluster %s yet", cluster)
	}
	var obj any
	if err := json.Unmarshal(status[i].Status.Raw, &obj); err != nil {
		return nil, fmt.Errorf("state preservation: status from cluster %s: %w", cluster, err)
	}
	out := make(map[string]string, len(sp.Rules))
	for j, r := range sp.Rules {
		at := fmt.Sprintf("statePreservation.rules[%d]", j)
		jp := jsonpath.New(r.AliasLabelName)
		jp.AllowMissingKeys(false)
		if err := jp.Parse(r.JSONPath); err != nil {
			return nil, fmt.Errorf("state preservation: %s.jsonPath %q: %w", at, r.JSONPath, err)
		}
		var buf bytes.Buffer
		if err := jp.Execute(&buf, obj); err != nil {
			return nil, fmt.Errorf("state preservation: %s.jsonPath %q on the status from cluster %s: %w", at, r.JSONPath, cluster, err)
		}
		v := buf.String()
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return nil, fmt.Errorf("state preservation: %s.jsonPath %q on the status from cluster %s gives %q, not a label value: %s",
				at, r.JSONPath, cluster, v, strings.Join(msgs, "; "))
		}
		out[r.AliasLabelName] = v
	}
	return out, nil
}

// keepsCopy reports whether an eviction task keeps the old copy in its
// cluster until it ends. A Directly task does not: it stays only to carry
// its preserved state to the new cluster (render.PreservedLabels).
func keepsCopy(t api.GracefulEvictionTask) bool {
	return t.PurgeMode != api.PurgeModeDirectly && t.PurgeMode != api.PurgeModeImmediately
}

// LastReported is the binding's aggregated status with, for each scheduled
// cluster whose item holds no status, the status its Work last recorded.
// A cluster that goes NotReady has its Work marked not applied, which
// empties its item, yet its last report is the state cluster failover's
// statePreservation carries to the new cluster (Karmada leaves the Work
// applied, and so the status, while a cluster is NotReady). Without rules
// the status is returned as it is.
func LastReported(ctx context.Context, c client.Reader, rb *workv1.ResourceBinding) ([]api.AggregatedStatusItem, error) {
	status := rb.Status.AggregatedStatus
	f := rb.Spec.Failover
	if f == nil || f.Cluster == nil || f.Cluster.StatePreservation == nil || len(f.Cluster.StatePreservation.Rules) == 0 {
		return status, nil
	}
	out := slices.Clone(status)
	ref := api.TemplateRefOfResource(rb.Spec.Resource)
	for _, tc := range rb.Spec.Clusters {
		i := slices.IndexFunc(out, func(it api.AggregatedStatusItem) bool { return it.ClusterName == tc.Name })
		if i >= 0 && out[i].Status != nil && len(out[i].Status.Raw) > 0 {
			continue
		}
		var w workv1.Work
		err := c.Get(ctx, client.ObjectKey{Namespace: ExecutionNamespace(tc.Name), Name: WorkName(ref)}, &w)
		switch {
		case IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("read the last status from cluster %s: %w", tc.Name, err)
		}
		ms := ManifestStatusOf(w.Status.ManifestStatuses, ref)
		if w.Labels[LabelBindingPermanentID] != string(rb.UID) || ms == nil {
			continue
		}
		reported, _, _ := SplitStatus(ms.Status)
		if reported == nil {
			continue
		}
		raw, err := json.Marshal(reported)
		if err != nil {
			return nil, fmt.Errorf("encode the last status from cluster %s: %w", tc.Name, err)
		}
		if i < 0 {
			out = append(out, api.AggregatedStatusItem{ClusterName: tc.Name})
			i = len(out) - 1
		}
		out[i].Status = &runtime.RawExtension{Raw: raw}
	}
	return out, nil
}
