package member

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// discoveryCache keeps a member's last complete API discovery for a
// watching cache, with the ETags of the member's aggregated discovery
// documents (/api and /apis) it was made under. CollectStatus asks the
// member whether those documents changed (a conditional GET each, answered
// 304 with no body while nothing changed) and discovers again only when one
// did: a CRD or an aggregated API added, removed or changed. The kept
// discovery is also dropped after interval, a safety net, and after a failed
// probe (the member may have come back upgraded). A partial discovery is
// never kept, and neither is one from a member that sends no ETags (an
// apiserver without aggregated discovery): that member is discovered on
// every CollectStatus, as without a watch. The zero value (no interval)
// keeps nothing.
type discoveryCache struct {
	interval time.Duration
	now      func() time.Time // time.Now when nil; tests move it

	mu          sync.Mutex
	enablements []api.APIEnablement
	tags        discoveryTags
	at          time.Time
	valid       bool
}

// discoveryTags are the ETags of /api and /apis as aggregated discovery.
type discoveryTags [2]string

// discoveryPaths are the documents discoveryTags are of.
var discoveryPaths = [2]string{"/api", "/apis"}

// aggregatedDiscovery asks for the aggregated discovery document, the one
// kube-apiserver serves with an ETag, and accepts the legacy one.
const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// complete reports whether every document had an ETag.
func (t discoveryTags) complete() bool { return t[0] != "" && t[1] != "" }

// get returns the kept enablements while they are fresh and were made
// under tags.
func (d *discoveryCache) get(tags discoveryTags) ([]api.APIEnablement, bool) {
	if d.interval <= 0 || !tags.complete() {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.valid || d.tags != tags || d.clock().Sub(d.at) >= d.interval {
		return nil, false
	}
	return d.enablements, true
}

// kept returns the ETags of the kept discovery, empty when none is kept.
func (d *discoveryCache) kept() discoveryTags {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.valid {
		return discoveryTags{}
	}
	return d.tags
}

// keep records a complete discovery made now under tags (read before it,
// so a change during the discovery shows as new tags next time).
func (d *discoveryCache) keep(enablements []api.APIEnablement, tags discoveryTags) {
	if d.interval <= 0 || !tags.complete() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enablements, d.tags, d.at, d.valid = enablements, tags, d.clock(), true
}

// forget drops the kept discovery: the member failed its probe.
func (d *discoveryCache) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enablements, d.tags, d.valid = nil, discoveryTags{}, false
}

func (d *discoveryCache) clock() time.Time {
	if d.now != nil {
		return d.now()
	}
	return time.Now()
}

// discoveryTags reads the current ETags of the member's discovery
// documents, each with a conditional GET on the kept one: 304 keeps it, 200
// gives the new one. A document that cannot be read, or has no ETag, gives
// an empty tag, which makes the caller discover (and report any failure) as
// it would without a kept discovery. Only a watching cache asks.
func (c *Client) discoveryTags(ctx context.Context) discoveryTags {
	var tags discoveryTags
	if c.discovered.interval <= 0 {
		return tags
	}
	kept := c.discovered.kept()
	for i, path := range discoveryPaths {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.config.Host+path, nil)
		if err != nil {
			return discoveryTags{}
		}
		req.Header.Set("Accept", aggregatedDiscovery)
		if kept[i] != "" {
			req.Header.Set("If-None-Match", kept[i])
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return discoveryTags{}
		}
		// Drained so the connection is reused; the document itself is
		// read by the discovery client when it has changed.
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusNotModified:
			tags[i] = kept[i]
		case http.StatusOK:
			tags[i] = resp.Header.Get("ETag")
		default:
			return discoveryTags{}
		}
	}
	return tags
}
