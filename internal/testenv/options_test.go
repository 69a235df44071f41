package testenv

import (
	"strings"
	"testing"
)

// TestKubeletOptions table-tests which fleets may name kubelet members and
// run metrics in them.
func TestKubeletOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		err  string
	}{
		{name: "one member of an apiserver-only fleet", opts: Options{Clusters: 3, Mode: APIServerOnly, Kubelet: []string{"member3"}}},
		{name: "metrics in the kubelet member only", opts: Options{Clusters: 3, Mode: APIServerOnly, Kubelet: []string{"member2"}, MetricsServer: "ms"}},
		{name: "metrics in an apiserver-only fleet without a kubelet member", opts: Options{Clusters: 2, Mode: APIServerOnly, MetricsServer: "ms"}, err: "metrics need"},
		{name: "a cluster the fleet does not have", opts: Options{Clusters: 2, Kubelet: []string{"member3"}}, err: `"member3" is none of the fleet's clusters member1 to member2`},
		{name: "another prefix", opts: Options{Clusters: 2, NamePrefix: "east", Kubelet: []string{"member1"}}, err: `"member1" is none`},
		{name: "custom metrics need full clusters", opts: Options{Clusters: 1, Mode: APIServerOnly, Kubelet: []string{"member1"}, MetricsServer: "ms", CustomMetricsAdapter: "cm"}, err: "Full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.BinDir = t.TempDir()
			_, err := tc.opts.withDefaults()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("got %v, want an error with %q", err, tc.err)
			}
		})
	}
}
