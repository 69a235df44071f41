package shared

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func TestWorkName(t *testing.T) {
	web := api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	with := func(f func(*api.TemplateRef)) api.TemplateRef {
		r := web
		f(&r)
		return r
	}
	tests := []struct {
		name      string
		ref       api.TemplateRef
		same      bool // same name as web's
		wantStart string
	}{
		{name: "stable", ref: web, same: true, wantStart: "web-"},
		{name: "version is not part of the identity", ref: with(func(r *api.TemplateRef) { r.Version = "v2" }), same: true, wantStart: "web-"},
		{name: "another kind", ref: with(func(r *api.TemplateRef) { r.Group, r.Kind = "", "ConfigMap" }), wantStart: "web-"},
		{name: "another group", ref: with(func(r *api.TemplateRef) { r.Group = "example.com" }), wantStart: "web-"},
		{name: "another namespace", ref: with(func(r *api.TemplateRef) { r.Namespace = "prod" }), wantStart: "web-"},
		{name: "colon and capitals", ref: api.TemplateRef{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "system:Admin"}, wantStart: "system.admin-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WorkName(tt.ref)
			if (got == WorkName(web)) != tt.same {
				t.Errorf("WorkName(%+v) = %q, WorkName(web) = %q; same = %v, want %v", tt.ref, got, WorkName(web), !tt.same, tt.same)
			}
			if !strings.HasPrefix(got, tt.wantStart) {
				t.Errorf("WorkName(%+v) = %q, want prefix %q", tt.ref, got, tt.wantStart)
			}
			if msgs := validation.IsDNS1123Subdomain(got); len(msgs) > 0 {
				t.Errorf("WorkName(%+v) = %q is not a valid name: %v", tt.ref, got, msgs)
			}
		})
	}
	long := WorkName(with(func(r *api.TemplateRef) { r.Name = strings.Repeat("a", 253) }))
	if len(long) > 253 || validation.IsDNS1123Subdomain(long) != nil {
		t.Errorf("WorkName of a 253-character name = %q (%d characters), want a valid name of at most 253", long, len(long))
	}
}

func TestClusterOfNamespace(t *testing.T) {
	tests := []struct {
		namespace string
		cluster   string
		ok        bool
	}{
		{ExecutionNamespace("east"), "east", true},
		{"flotilla-es-", "", false},
		{"karmada-es-east", "", false},
		{"default", "", false},
	}
	for _, tt := range tests {
		cluster, ok := ClusterOfNamespace(tt.namespace)
		if cluster != tt.cluster || ok != tt.ok {
			t.Errorf("clusterOfNamespace(%q) = %q, %v; want %q, %v", tt.namespace, cluster, ok, tt.cluster, tt.ok)
		}
	}
}
