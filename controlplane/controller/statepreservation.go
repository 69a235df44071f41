package controller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// preservedLabelState is Karmada's helper.BuildPreservedLabelState: each
// rule's JSONPath, evaluated against the status the template's object
// reported from cluster (the path starts at status: `{.jobID}`, not
// `{.status.jobID}`), becomes the value of its aliasLabelName. nil when
// there are no rules. It fails, and the failover waits, when the status
// has not been collected from cluster, a path finds nothing, or a value is
// not a valid label value (Karmada would render an object its member
// refuses).
func preservedLabelState(sp *api.StatePreservation, status []api.AggregatedStatusItem, cluster string) (map[string]string, error) {
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
