package member

import (
	"sync"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// discoveryCache keeps a member's last complete API discovery for a
// watching cache, so CollectStatus asks the member's /api and /apis again
// only every interval, or after the member failed a probe (it may have come
// back upgraded). A partial discovery is never kept. The zero value (no
// interval) keeps nothing: every CollectStatus discovers.
type discoveryCache struct {
	interval time.Duration
	now      func() time.Time // time.Now when nil; tests move it

	mu          sync.Mutex
	enablements []api.APIEnablement
	at          time.Time
	valid       bool
}

// get returns the kept enablements while they are fresh.
func (d *discoveryCache) get() ([]api.APIEnablement, bool) {
	if d.interval <= 0 {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.valid || d.clock().Sub(d.at) >= d.interval {
		return nil, false
	}
	return d.enablements, true
}

// keep records a complete discovery made now.
func (d *discoveryCache) keep(enablements []api.APIEnablement) {
	if d.interval <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enablements, d.at, d.valid = enablements, d.clock(), true
}

// forget drops the kept discovery: the member failed its probe.
func (d *discoveryCache) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enablements, d.valid = nil, false
}

func (d *discoveryCache) clock() time.Time {
	if d.now != nil {
		return d.now()
	}
	return time.Now()
}
