package shared

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseTemplateKinds(t *testing.T) {
	cases := []struct {
		in      string
		want    []schema.GroupVersionKind
		wantErr string
	}{
		{"apps/v1/Deployment, v1/ConfigMap,example.com/v1beta1/Widget", []schema.GroupVersionKind{
			{Group: "apps", Version: "v1", Kind: "Deployment"}, {Version: "v1", Kind: "ConfigMap"}, {Group: "example.com", Version: "v1beta1", Kind: "Widget"},
		}, ""},
		{"Deployment", nil, `template kind "Deployment": want group/version/Kind`},
		{"a/b/c/d", nil, `template kind "a/b/c/d"`},
		{"/v1/Widget", nil, `template kind "/v1/Widget"`},
		{"v1/", nil, `template kind "v1/"`},
		{" , ", nil, "name at least one kind"},
	}
	for _, tc := range cases {
		got, err := ParseTemplateKinds(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestReservedNamespace(t *testing.T) {
	custom := Options{ReservedNamespaces: []string{"istio-*", "shop"}}
	cases := []struct {
		opts Options
		ns   string
		want bool
	}{
		{Options{}, "flotilla-system", true},
		{Options{}, "flotilla-es-member1", true},
		{Options{}, "kube-system", true},
		{Options{}, "kube-public", true},
		{Options{}, "kube-node-lease", true},
		{Options{}, "default", false},
		{Options{}, "flotilla", false},
		{Options{}, "kubernetes-apps", false},
		{Options{}, "istio-system", false},
		// A custom list replaces the defaults, but the execution
		// namespaces stay reserved.
		{custom, "istio-system", true},
		{custom, "shop", true},
		{custom, "shopping", false},
		{custom, "kube-system", false},
		{custom, "flotilla-es-member1", true},
	}
	for _, tc := range cases {
		if got := tc.opts.Reserved(tc.ns); got != tc.want {
			t.Errorf("Options%v.Reserved(%q) = %v, want %v", tc.opts.ReservedNamespaces, tc.ns, got, tc.want)
		}
	}
}

func TestParseReservedNamespaces(t *testing.T) {
	got, err := ParseReservedNamespaces(" kube-*, flotilla-system ,istio-system,")
	if err != nil || !slices.Equal(got, []string{"kube-*", "flotilla-system", "istio-system"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "*", "a*b", "**"} {
		if _, err := ParseReservedNamespaces(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestOptionsWorkers(t *testing.T) {
	o := Options{}.WithDefaults()
	if o.WorkWorkers != DefaultWorkWorkers || o.MemberWorkers != DefaultWorkWorkers/2 || o.ClusterStatusWorkers != DefaultClusterStatusWorkers {
		t.Errorf("defaults: %d work, %d per member, %d cluster status workers", o.WorkWorkers, o.MemberWorkers, o.ClusterStatusWorkers)
	}
	if err := (Options{WorkWorkers: 4, MemberWorkers: 4}).Validate(); err == nil || !strings.Contains(err.Error(), "member workers (4) must be below work workers (4)") {
		t.Errorf("Validate = %v, want member workers refused", err)
	}
	if err := (Options{WorkWorkers: 1}).Validate(); err != nil {
		t.Errorf("Validate with one worker = %v", err)
	}
	// The work status controller's per-member share is the execution's.
	for _, c := range []struct {
		o    Options
		want int
	}{
		{Options{}, DefaultWorkStatusWorkers / 2},
		{Options{WorkStatusWorkers: 10}, 5},
		{Options{WorkWorkers: 8, MemberWorkers: 2, WorkStatusWorkers: 40}, 10},
		{Options{WorkWorkers: 1, WorkStatusWorkers: 4}, 2},
		{Options{WorkStatusWorkers: 1}, 1},
	} {
		if got := c.o.StatusMemberWorkers(); got != c.want {
			t.Errorf("%+v: StatusMemberWorkers = %d, want %d", c.o, got, c.want)
		}
	}
}

func TestOptionsWorkRequestTimeout(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Options
		want time.Duration
	}{
		{"default", Options{}, DefaultWorkRequestTimeout},
		{"set", Options{WorkRequestTimeout: 3 * time.Second}, 3 * time.Second},
		{"capped by the work timeout", Options{WorkRequestTimeout: time.Minute, WorkTimeout: 5 * time.Second}, 5 * time.Second},
		{"default capped by a short work timeout", Options{WorkTimeout: 2 * time.Second}, 2 * time.Second},
	} {
		if got := c.in.WithDefaults().WorkRequestTimeout; got != c.want {
			t.Errorf("%s: work request timeout = %v, want %v", c.name, got, c.want)
		}
	}
	if DefaultWorkRequestTimeout*4 > DefaultWorkTimeout {
		t.Errorf("the default work request timeout %v is not well below the work timeout %v", DefaultWorkRequestTimeout, DefaultWorkTimeout)
	}
}
