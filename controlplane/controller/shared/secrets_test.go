package shared

import (
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
)

// TestCredentialSecretsOnly: with Secrets read in flotilla-system only, the
// manager's Secret cache is kept to that namespace, propagateDeps no longer
// follows Secrets, and an attached binding of a Secret is refused (the
// Secret could not be read), while the other dependency kinds still attach.
func TestCredentialSecretsOnly(t *testing.T) {
	only := Options{CredentialSecretsOnly: true, kinds: testKinds()}
	all := Options{kinds: testKinds()}
	if got := only.SecretCacheNamespaces(); !slices.Equal(got, []string{SystemNamespace}) {
		t.Errorf("SecretCacheNamespaces = %v, want [%s]", got, SystemNamespace)
	}
	if got := all.SecretCacheNamespaces(); got != nil {
		t.Errorf("SecretCacheNamespaces without the option = %v, want every namespace (nil)", got)
	}
	if got := only.DependencyKinds(); slices.Contains(got, "Secret") || !slices.Contains(got, "ConfigMap") {
		t.Errorf("dependency kinds = %v, want them without Secret", got)
	}
	if got := all.DependencyKinds(); !slices.Contains(got, "Secret") {
		t.Errorf("dependency kinds without the option = %v, want Secret among them (the shared list was changed)", got)
	}
	secret := sharedtest.Binding("shop", "db-secret", "v1", "Secret", "shop", "db", attachedBy)
	config := sharedtest.Binding("shop", "cfg-configmap", "v1", "ConfigMap", "shop", "cfg", attachedBy)
	if errs := ValidateResourceBinding(secret, all); len(errs) != 0 {
		t.Errorf("attached Secret without the option: %v", errs)
	}
	if errs := ValidateResourceBinding(config, only); len(errs) != 0 {
		t.Errorf("attached ConfigMap: %v", errs)
	}
	errs := ValidateResourceBinding(secret, only)
	if want := `spec.resource.kind: Unsupported value: "v1 Secret"`; len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
		t.Errorf("attached Secret: %v, want one error containing %q", errs, want)
	}
}
