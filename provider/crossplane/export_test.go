package crossplane

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// ManifestDelete runs the Manifest external client's Delete against the
// host c, as the reconciler would after an Observe that found mg's template:
// tests use it to show that Delete itself checks ownership.
func ManifestDelete(ctx context.Context, c client.Client, mg *v1alpha1.Manifest) error {
	_, err := (&manifestClient{host: &host{client: c}}).Delete(ctx, mg)
	return err
}
