package crossplane

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// TestHostCache drives the cache through sequences of steps and checks
// which provider configs still have a client after each sequence.
func TestHostCache(t *testing.T) {
	pc := func(ns, name string) providerConfigKey {
		return providerConfigKey{Kind: "ProviderConfig", Namespace: ns, Name: name}
	}
	digest := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	type step struct {
		op     string // put, get, forget, forgetIfNot
		key    providerConfigKey
		digest string
		gen    int64
		hit    bool // for get
	}
	cases := []struct {
		name   string
		size   int
		steps  []step
		want   []providerConfigKey
		closed int // entries whose connections were closed
	}{
		{
			name:  "a hit is the same config with the same credentials",
			size:  4,
			steps: []step{{op: "put", key: pc("a", "p"), digest: "k1"}, {op: "get", key: pc("a", "p"), digest: "k1", hit: true}},
			want:  []providerConfigKey{pc("a", "p")},
		},
		{
			name: "changed credentials drop the old client instead of adding one",
			size: 4,
			steps: []step{
				{op: "put", key: pc("a", "p"), digest: "k1"},
				{op: "get", key: pc("a", "p"), digest: "k2", hit: false},
				{op: "put", key: pc("a", "p"), digest: "k2"},
				{op: "put", key: pc("a", "p"), digest: "k3"},
			},
			want:   []providerConfigKey{pc("a", "p")},
			closed: 2,
		},
		{
			name: "the same kubeconfig in another namespace is another client",
			size: 4,
			steps: []step{
				{op: "put", key: pc("a", "p"), digest: "k1"},
				{op: "get", key: pc("b", "p"), digest: "k1", hit: false},
			},
			want: []providerConfigKey{pc("a", "p")},
		},
		{
			name: "a tenant's many configs are bounded, least recently used out",
			size: 3,
			steps: []step{
				{op: "put", key: pc("a", "1"), digest: "k"},
				{op: "put", key: pc("t", "1"), digest: "k1"},
				{op: "put", key: pc("t", "2"), digest: "k2"},
				{op: "get", key: pc("a", "1"), digest: "k", hit: true},
				{op: "put", key: pc("t", "3"), digest: "k3"},
				{op: "put", key: pc("t", "4"), digest: "k4"},
			},
			want:   []providerConfigKey{pc("t", "3"), pc("t", "4"), pc("a", "1")},
			closed: 2,
		},
		{
			name: "a deleted config is forgotten",
			size: 4,
			steps: []step{
				{op: "put", key: pc("a", "p"), digest: "k1"},
				{op: "put", key: pc("a", "q"), digest: "k1"},
				{op: "forget", key: pc("a", "p")},
			},
			want:   []providerConfigKey{pc("a", "q")},
			closed: 1,
		},
		{
			name: "a changed config is forgotten, an unchanged one kept",
			size: 4,
			steps: []step{
				{op: "put", key: pc("a", "p"), digest: "k1", gen: 1},
				{op: "put", key: pc("a", "q"), digest: "k1", gen: 1},
				{op: "forgetIfNot", key: pc("a", "p"), gen: 2},
				{op: "forgetIfNot", key: pc("a", "q"), gen: 1},
			},
			want:   []providerConfigKey{pc("a", "q")},
			closed: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newHostCache(tc.size)
			var closed atomic.Int32
			for i, s := range tc.steps {
				switch s.op {
				case "put":
					c.put(s.key, &hostEntry{digest: digest(s.digest), generation: s.gen, http: closeCounter(t, &closed)})
				case "get":
					if _, hit := c.get(s.key, digest(s.digest)); hit != s.hit {
						t.Fatalf("step %d: get %v = hit %v, want %v", i, s.key, hit, s.hit)
					}
				case "forget":
					c.forget(s.key)
				case "forgetIfNot":
					c.forgetIfNot(s.key, s.gen)
				}
			}
			var got []providerConfigKey
			for _, k := range []providerConfigKey{pc("a", "p"), pc("a", "q"), pc("a", "1"), pc("b", "p"), pc("t", "1"), pc("t", "2"), pc("t", "3"), pc("t", "4"), pc("t", "5")} {
				if v, ok := c.lru.Get(k); ok && v != nil {
					got = append(got, k)
				}
			}
			sortKeys(got)
			sortKeys(tc.want)
			if d := gocmp.Diff(tc.want, got); d != "" {
				t.Errorf("configs with a client (-want +got):\n%s", d)
			}
			if c.len() > tc.size {
				t.Errorf("%d clients held, bound %d", c.len(), tc.size)
			}
			if int(closed.Load()) != tc.closed {
				t.Errorf("%d entries closed their connections, want %d", closed.Load(), tc.closed)
			}
		})
	}
}

func sortKeys(k []providerConfigKey) {
	slices.SortFunc(k, func(a, b providerConfigKey) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
}

// closeCounter is an http.Client whose transport counts
// CloseIdleConnections, so the test sees which entries were let go.
func closeCounter(t *testing.T, n *atomic.Int32) *http.Client {
	t.Helper()
	return &http.Client{Transport: &countingTransport{n: n}}
}

type countingTransport struct{ n *atomic.Int32 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("no requests in this test")
}

func (c *countingTransport) CloseIdleConnections() { c.n.Add(1) }
