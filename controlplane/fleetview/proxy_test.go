package fleetview

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripCredentialsDropsEveryIdentityHeader(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer stolen")
	h.Set("Impersonate-User", "admin")
	h.Add("Impersonate-Group", "system:masters")
	h.Set("Impersonate-Extra-Scopes", "all")
	h.Set("Impersonate-Uid", "0")
	h.Set("X-Remote-User", "admin")
	h.Set("X-Remote-Group", "system:masters")
	h.Set("X-Remote-Extra-Scopes", "all")
	h.Set("Accept", "application/json")
	h.Set("Content-Type", "application/json")
	stripCredentials(h)
	want := http.Header{"Accept": {"application/json"}, "Content-Type": {"application/json"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Fatalf("headers left (-want +got):\n%s", diff)
	}
}

func TestProxyHeaderSplitsCommaSeparatedValues(t *testing.T) {
	got := proxyHeader(map[string]string{"Proxy-Authorization": "Basic abc", "X-Route": "a, b"})
	want := http.Header{"Proxy-Authorization": {"Basic abc"}, "X-Route": {"a", "b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if proxyHeader(nil) != nil {
		t.Fatal("no proxyHeader must give no CONNECT headers")
	}
}

func TestStreamingRequestsAreNotCutByTheRequestTimeout(t *testing.T) {
	tests := []struct {
		query  string
		header http.Header
		want   bool
	}{
		{query: "", want: false},
		{query: "watch=true", want: true},
		{query: "watch=1", want: true},
		{query: "follow=true", want: true},
		{query: "watch=false", want: false},
		{header: http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}, want: true},
	}
	for _, tt := range tests {
		r := &http.Request{URL: &url.URL{Path: "/api/v1/pods", RawQuery: tt.query}, Header: tt.header}
		if r.Header == nil {
			r.Header = http.Header{}
		}
		if got := streaming(r); got != tt.want {
			t.Errorf("streaming(%q, %v) = %v, want %v", tt.query, tt.header, got, tt.want)
		}
	}
}
