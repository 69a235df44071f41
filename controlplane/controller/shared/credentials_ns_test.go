package shared

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
)

// TestCredentialsNamespaceFollowsGroups: the one namespace whose Secrets
// the control plane reads, and the agents' Lease namespace, follow the API
// groups chosen by apis.Use: flotilla-system and flotilla-cluster in
// flotilla's, karmada-cluster for both in Karmada's. The attack: in either
// mode a secretRef naming any other namespace (the other mode's included)
// is refused before anything is read, naming the cluster and the namespace,
// so choosing Karmada's groups moves the one readable namespace rather than
// adding one.
func TestCredentialsNamespaceFollowsGroups(t *testing.T) {
	t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })
	for _, tc := range []struct {
		groups           apis.Groups
		credentials      string
		leases           string
		refusedNamespace []string
	}{
		{apis.FlotillaGroups, "flotilla-system", "flotilla-cluster", []string{"karmada-cluster", "default", "flotilla-cluster", ""}},
		{apis.KarmadaGroups, "karmada-cluster", "karmada-cluster", []string{"flotilla-system", "default", "karmada-system", ""}},
	} {
		t.Run(string(tc.groups), func(t *testing.T) {
			apis.Use(tc.groups)
			if got := CredentialsNamespace(); got != tc.credentials {
				t.Errorf("CredentialsNamespace = %q, want %q", got, tc.credentials)
			}
			if got := ClusterLeaseNamespace(); got != tc.leases {
				t.Errorf("ClusterLeaseNamespace = %q, want %q", got, tc.leases)
			}
			only := Options{CredentialSecretsOnly: true}
			if got := only.SecretCacheNamespaces(); !slices.Equal(got, []string{tc.credentials}) {
				t.Errorf("SecretCacheNamespaces = %v, want only [%s]", got, tc.credentials)
			}
			for _, ns := range []string{tc.credentials, tc.leases} {
				if !(Options{}).Reserved(ns) {
					t.Errorf("namespace %s is not reserved by default: its Secrets or Leases could become templates", ns)
				}
			}
			ok := &clusterv1.Cluster{Spec: api.ClusterSpec{SecretRef: &api.LocalSecretReference{Namespace: tc.credentials, Name: "east"}}}
			ok.Name = "east"
			if err := CheckSecretRef(ok); err != nil {
				t.Errorf("secretRef in %s refused: %v", tc.credentials, err)
			}
			for _, ns := range tc.refusedNamespace {
				cl := ok.DeepCopy()
				cl.Spec.SecretRef.Namespace = ns
				err := CheckSecretRef(cl)
				if !errors.Is(err, ErrCredentialsRefused) {
					t.Errorf("secretRef in %q: %v, want it refused", ns, err)
					continue
				}
				for _, want := range []string{"cluster east", `spec.secretRef.namespace "` + ns + `"`, tc.credentials} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal of %q does not say %q: %v", ns, want, err)
					}
				}
			}
		})
	}
}
