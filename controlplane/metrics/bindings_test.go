package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBindingCollector: the counts become one gauge per state; a standby
// (ok=false) or a failed count reports no series rather than failing the
// scrape; no counter set reports none.
func TestBindingCollector(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count BindingCounter
		want  string
	}{
		{name: "counts", count: func(context.Context) (map[string]int, bool, error) {
			return map[string]int{"Scheduled": 2, "FullyApplied": 5, "Unscheduled": 0}, true, nil
		}, want: `
# HELP flotilla_resource_bindings Number of ResourceBindings and ClusterResourceBindings by state (Unscheduled, Unschedulable, Scheduled, FullyApplied), counted from the leader's cache at scrape time.
# TYPE flotilla_resource_bindings gauge
flotilla_resource_bindings{state="FullyApplied"} 5
flotilla_resource_bindings{state="Scheduled"} 2
flotilla_resource_bindings{state="Unscheduled"} 0
`},
		{name: "standby", count: func(context.Context) (map[string]int, bool, error) { return nil, false, nil }},
		{name: "failed count", count: func(context.Context) (map[string]int, bool, error) { return nil, false, errors.New("cache not synced") }},
		{name: "no counter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &bindingCollector{count: tc.count}
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want), "flotilla_resource_bindings"); err != nil {
				t.Error(err)
			}
		})
	}
}
