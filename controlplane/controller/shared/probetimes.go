package shared

import (
	"sync"
	"time"
)

// ProbeTimes records, in memory, when each Push cluster last answered its
// probe Ready. The cluster status controller writes the Cluster only when
// its status changes, so a successful probe leaves no trace on the host;
// this record lets the dashboard served by the same process show the last
// heartbeat without a host write per probe. Only the replica whose
// controllers run (the leader) fills it. The zero value is not usable; a
// nil *ProbeTimes records nothing and knows nothing.
type ProbeTimes struct {
	mu   sync.RWMutex
	last map[string]time.Time
}

// NewProbeTimes returns an empty record.
func NewProbeTimes() *ProbeTimes { return &ProbeTimes{last: map[string]time.Time{}} }

// Record notes that cluster answered its probe Ready at t.
func (p *ProbeTimes) Record(cluster string, t time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[cluster] = t
}

// Forget drops a Cluster that is going.
func (p *ProbeTimes) Forget(cluster string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, cluster)
}

// LastProbe is when cluster last answered its probe Ready in this
// process; false when it has not (yet), or p is nil.
func (p *ProbeTimes) LastProbe(cluster string) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	t, ok := p.last[cluster]
	return t, ok
}
