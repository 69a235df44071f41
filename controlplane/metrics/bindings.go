package metrics

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds one count of the bindings during a scrape.
const scrapeTimeout = 5 * time.Second

// bindingCollector reports flotilla_resource_bindings at scrape time: a
// gauge kept up to date by every write would drift on restarts and
// failovers of the leader, a count from the cache does not.
type bindingCollector struct {
	mu    sync.Mutex
	count BindingCounter
}

// Describe implements prometheus.Collector.
func (c *bindingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- bindingsDesc }

// Collect implements prometheus.Collector.
func (c *bindingCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	count := c.count
	c.mu.Unlock()
	if count == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, ok, err := count(ctx)
	// controller-runtime's endpoint fails the whole scrape on an invalid
	// metric, so a failed count leaves only this family out.
	if err != nil || !ok {
		return
	}
	states := make([]string, 0, len(counts))
	for s := range counts {
		states = append(states, s)
	}
	sort.Strings(states)
	for _, s := range states {
		ch <- prometheus.MustNewConstMetric(bindingsDesc, prometheus.GaugeValue, float64(counts[s]), s)
	}
}
