package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// TestConnectionSecretsAreSensitive: every connection attribute that may
// carry a credential is sensitive in flotilla_cluster's schema, exec.args
// included (plugins take tokens as arguments too), so plan output and
// logs never show them.
func TestConnectionSecretsAreSensitive(t *testing.T) {
	attrs := clusterResourceSchema().Attributes
	nested := func(parent, name string) schema.Attribute {
		t.Helper()
		obj, ok := attrs[parent].(schema.SingleNestedAttribute)
		if !ok {
			t.Fatalf("attribute %s is %T, want a single nested attribute", parent, attrs[parent])
		}
		return obj.Attributes[name]
	}
	for path, attr := range map[string]schema.Attribute{
		"token":          attrs[connAttrToken],
		"client_key":     attrs[connAttrClientKey],
		"proxy_url":      attrs[connAttrProxyURL],
		"kubeconfig.raw": nested(connAttrKubeconfig, connAttrRaw),
		"exec.args":      nested(connAttrExec, connAttrArgs),
		"exec.env":       nested(connAttrExec, connAttrEnv),
	} {
		if attr == nil {
			t.Errorf("%s: no such attribute", path)
			continue
		}
		if !attr.IsSensitive() {
			t.Errorf("%s is not sensitive", path)
		}
	}
}
