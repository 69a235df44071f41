package hoststore

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// IndexBindingsByKind is the host cache's field index of ResourceBindings
// by the group and kind of their resource ("HorizontalPodAutoscaler.autoscaling").
// RegisterIndexes adds it.
const IndexBindingsByKind = "flotilla.io/resource-kind"

// RegisterIndexes adds the field indexes that an Indexed reader promises
// to a manager's cache, before the cache starts.
func RegisterIndexes(ctx context.Context, idx client.FieldIndexer) error {
	if err := idx.IndexField(ctx, &workv1.ResourceBinding{}, IndexBindingsByKind, func(obj client.Object) []string {
		return []string{GroupKindOf(obj.(*workv1.ResourceBinding).Spec.Resource).String()}
	}); err != nil {
		return fmt.Errorf("index bindings by the kind of their resource: %w", err)
	}
	return nil
}

// Indexed marks a reader, a manager's cache, that holds the indexes
// RegisterIndexes adds. Renders through it read only the bindings they
// need: looking through every binding of a namespace on every render made
// a cold start of 10,000 templates quadratic (issue 20). Renders through
// any other reader (a direct client) list the namespace's bindings.
func Indexed(r client.Reader) client.Reader { return indexedReader{r} }

type indexedReader struct{ client.Reader }
