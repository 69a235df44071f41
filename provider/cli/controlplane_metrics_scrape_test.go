package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestControlplaneServesFlotillaMetrics runs the controlplane against a
// real host and one real member, scrapes its /metrics endpoint over HTTP,
// and checks that flotilla's series are there and move as a ConfigMap is
// propagated: scheduling attempts and latency, bindings per state, Work
// apply latency per member, member readiness and probe latency.
func TestControlplaneServesFlotillaMetrics(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, member := fleet.Clusters[0], fleet.Clusters[1]
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runControlplane(ctx, controlplaneConfig{
			kubeconfig: host.KubeconfigPath, fleet: "test", probeAddr: "0", inProcess: true,
			metricsAddr: addr, metrics: metricsConfig{secure: false},
			options: shared.Options{ProbeInterval: 300 * time.Millisecond, Resync: time.Second},
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controlplane: %v", err)
		}
	})
	hub, memberClient := apiClient(t, host.RESTConfig()), apiClient(t, member.RESTConfig())
	registerMember(t, hub, member)
	ready := fmt.Sprintf(`flotilla_cluster_ready_state{member_cluster=%q}`, member.Name)
	var before map[string]float64
	waitFor(t, "the member reported ready on /metrics", func() (bool, string) {
		var err error
		before, err = scrape(t, addr)
		if err != nil {
			return false, err.Error()
		}
		return before[ready] == 1, fmt.Sprintf("%s = %v", ready, before[ready])
	})

	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: scraped
`)
	testkit.MustCreate(t, hub, pp)
	createConfigMap(t, hub, "scraped")
	waitConfigMap(t, memberClient, "scraped")

	probes := fmt.Sprintf(`flotilla_cluster_probe_duration_seconds_count{member_cluster=%q,result="success"}`, member.Name)
	applies := fmt.Sprintf(`flotilla_work_apply_duration_seconds_count{member_cluster=%q,result="success"}`, member.Name)
	moved := []string{
		`flotilla_scheduler_schedule_attempts_total{result="scheduled"}`,
		`flotilla_scheduler_e2e_scheduling_duration_seconds_count{result="scheduled"}`,
		applies, probes,
	}
	var after map[string]float64
	waitFor(t, "flotilla's metrics moved", func() (bool, string) {
		var err error
		after, err = scrape(t, addr)
		if err != nil {
			return false, err.Error()
		}
		var still []string
		for _, name := range moved {
			if after[name] <= before[name] {
				still = append(still, fmt.Sprintf("%s %v -> %v", name, before[name], after[name]))
			}
		}
		if after[`flotilla_resource_bindings{state="FullyApplied"}`] < 1 {
			still = append(still, fmt.Sprintf("no FullyApplied binding: %v", pick(after, "flotilla_resource_bindings")))
		}
		return len(still) == 0, strings.Join(still, "; ")
	})
	if after[ready] != 1 {
		t.Errorf("%s = %v, want 1", ready, after[ready])
	}
	if n := after[`flotilla_scheduler_e2e_scheduling_duration_seconds_sum{result="scheduled"}`]; n <= 0 {
		t.Errorf("scheduling latency sum = %v, want > 0", n)
	}
}

// scrape reads /metrics over plain HTTP into series → value. Histograms
// give _count and _sum series.
func scrape(t *testing.T, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET /metrics: %s: %.300s", resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse /metrics: %w", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := seriesLabels(m)
			switch {
			case m.GetCounter() != nil:
				out[name+labels] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[name+labels] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"+labels] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum"+labels] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out, nil
}

// seriesLabels is {a="x",b="y"} in the order the endpoint gives (sorted).
func seriesLabels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	parts := make([]string, len(m.GetLabel()))
	for i, l := range m.GetLabel() {
		parts[i] = fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// pick is the series of one family, for failure messages.
func pick(series map[string]float64, family string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range series {
		if strings.HasPrefix(k, family+"{") {
			out[k] = v
		}
	}
	return out
}
