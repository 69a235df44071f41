//go:build linux

package e2e_test

// Write counting of the restart benchmarks (bench_restart_test.go): the
// host apiserver's apiserver_request_total, read before and after a phase,
// says which writes the control plane made; its own /metrics says how far
// its queues are.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// writeVerbs are the verbs of apiserver_request_total that change stored
// objects (APPLY is a server-side apply PATCH).
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// hostWrites counts write requests the host apiserver served, by
// "resource[/subresource]:VERB", with ":CODE" added for a response that is
// not a success (a rejected write still cost a request).
type hostWrites map[string]float64

// readHostWrites scrapes the host apiserver's /metrics with cfg's
// credentials (the testenv token is system:masters).
func readHostWrites(ctx context.Context, cfg *rest.Config) (hostWrites, error) {
	return readHostRequests(ctx, cfg, func(verb string) bool { return writeVerbs[verb] })
}

// readHostRequests is readHostWrites for the verbs keep passes.
func readHostRequests(ctx context.Context, cfg *rest.Config, keep func(verb string) bool) (hostWrites, error) {
	families, err := scrapeMetrics(ctx, cfg, cfg.Host+"/metrics")
	if err != nil {
		return nil, fmt.Errorf("read host apiserver metrics: %w", err)
	}
	w := hostWrites{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := labels(m)
		if !keep(l["verb"]) {
			continue
		}
		key := l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		key += ":" + l["verb"]
		if !strings.HasPrefix(l["code"], "2") {
			key += ":" + l["code"]
		}
		w[key] += m.GetCounter().GetValue()
	}
	return w, nil
}

// since is w minus an earlier reading, without the resources that did not
// change.
func (w hostWrites) since(before hostWrites) hostWrites {
	d := hostWrites{}
	for k, v := range w {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// split separates the writes that count from those the brief expects of
// any running process: Lease renewals (leader election, and the
// apiserver's own identity leases) and Events.
func (w hostWrites) split() (writes, leases, events float64) {
	for k, v := range w {
		resource, _, _ := strings.Cut(k, ":")
		switch resource {
		case "leases":
			leases += v
		case "events":
			events += v
		default:
			writes += v
		}
	}
	return writes, leases, events
}

// String lists the resources by name: "resourcebindings/status:PATCH=12 works:POST=3".
func (w hostWrites) String() string {
	if len(w) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(w)) {
		fmt.Fprintf(&b, "%s%s=%.0f", map[bool]string{true: "", false: " "}[b.Len() == 0], k, w[k])
	}
	return b.String()
}

// scrapeMetrics GETs a Prometheus text endpoint, with cfg's TLS and token
// when cfg is set (the host apiserver) or plain HTTP (the control plane's
// --metrics-secure=false endpoint).
func scrapeMetrics(ctx context.Context, cfg *rest.Config, url string) (map[string]*dto.MetricFamily, error) {
	hc := http.DefaultClient
	if cfg != nil {
		var err error
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// labels returns a sample's labels as a map.
func labels(m *dto.Metric) map[string]string {
	l := make(map[string]string, len(m.GetLabel()))
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// metricSum adds the samples of a counter or gauge family whose labels
// include match.
func metricSum(families map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	sum := 0.0
	for _, m := range families[name].GetMetric() {
		l := labels(m)
		ok := true
		for k, v := range match {
			ok = ok && l[k] == v
		}
		if !ok {
			continue
		}
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}

// freeAddr returns a loopback address with a port free at the time of the
// call, for a control plane's metrics endpoint.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
