package fleetview

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxPools bounds the connection pools kept at once. A pool is keyed by a
// member's address, trust and proxy, so a fleet needs one per member; the
// bound only stops Cluster edits from growing the map without end.
const maxPools = 1024

// pools keeps one connection pool per member connection, so requests to a
// member reuse its TLS connections instead of dialing and handshaking each
// time. A pool is found by what it was built from: a Cluster whose
// address, CA or proxy changes gets a new one.
type pools struct {
	mu    sync.Mutex
	byKey map[string]*http.Transport
}

// get returns the pool for target, building it with build the first time.
func (p *pools) get(target Target, build func() (*http.Transport, error)) (*http.Transport, error) {
	key := poolKey(target)
	p.mu.Lock()
	defer p.mu.Unlock()
	if rt, ok := p.byKey[key]; ok {
		return rt, nil
	}
	rt, err := build()
	if err != nil {
		return nil, err
	}
	if p.byKey == nil || len(p.byKey) >= maxPools {
		for _, old := range p.byKey {
			old.CloseIdleConnections()
		}
		p.byKey = map[string]*http.Transport{}
	}
	p.byKey[key] = rt
	return rt, nil
}

// poolKey is a digest of everything a pool is built from: the address, the
// TLS trust, and the proxy with its CONNECT headers. Credentials are not
// part of it, as pools hold none.
func poolKey(t Target) string {
	c := t.Config
	h := sha256.New()
	for _, part := range []string{c.Host, c.APIPath, c.ServerName, c.CAFile, string(c.CAData),
		strconv.FormatBool(c.Insecure), strings.Join(c.NextProtos, ","), t.ProxyURL} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	keys := make([]string, 0, len(t.ProxyHeader))
	for k := range t.ProxyHeader {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.Write([]byte(k + "=" + t.ProxyHeader[k] + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
