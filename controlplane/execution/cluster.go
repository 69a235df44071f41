package execution

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// clusterRun is the state of one call's work in one cluster.
type clusterRun struct {
	e      *Executor
	name   string
	target Target

	mu sync.Mutex
	// down is the first error that showed the cluster cannot be reached;
	// later ops fail with it instead of waiting for their own timeouts.
	down error
	// namespaces records, per namespace known to this run, nil when it
	// exists and the error when it could not be created.
	namespaces map[string]error
	// cachedNamespaces are those of namespaces taken from
	// Executor.Namespaces, not read in this run.
	cachedNamespaces map[string]bool
	// crdChanged is set when a CustomResourceDefinition apply wrote
	// something or a prune deleted one, so discovery must be refreshed.
	crdChanged atomic.Bool
	// noMatchReset is set once a kind that did not match reset the mapper.
	noMatchReset atomic.Bool
}

// downErr returns the error that took the cluster down in this run, if any.
func (c *clusterRun) downErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down
}

// noteFailure marks the cluster down when err shows it cannot be reached
// (a transport error: refused, reset, timed out) or when the caller's
// context ended. An error the apiserver answered with does not.
func (c *clusterRun) noteFailure(ctx context.Context, err error) {
	var urlErr *url.Error
	var down error
	switch {
	case ctx.Err() != nil:
		down = fmt.Errorf("the call ended: %w", context.Cause(ctx))
	case errors.As(err, &urlErr):
		down = fmt.Errorf("the cluster is unreachable: %w", err)
	default:
		return
	}
	c.mu.Lock()
	first := c.down == nil
	if first {
		c.down = down
	}
	c.mu.Unlock()
	if first && ctx.Err() == nil && c.e.Unreachable != nil {
		c.e.Unreachable(c.name, err)
	}
}

// notAttempted is the error of an op skipped because the cluster is down.
func notAttempted(down error) error {
	return fmt.Errorf("not attempted, %w", down)
}

// wrap gives an op's error its context, e.g.
// "apply Deployment default/web to cluster east: …".
func (c *clusterRun) wrap(o op, err error) error {
	prep := "from"
	if o.kind == opApply {
		prep = "to"
	}
	return fmt.Errorf("%s %s %s cluster %s: %w", o.verb(), o.ref.Describe(), prep, c.name, err)
}

// noKindError is a kind the cluster does not serve, even after the mapper
// was reset.
type noKindError struct{ ref api.TemplateRef }

func (e *noKindError) Error() string {
	return "the cluster does not serve " + schema.GroupVersionKind{Group: e.ref.Group, Version: e.ref.Version, Kind: e.ref.Kind}.String()
}

func isNoKind(err error) bool {
	var target *noKindError
	return errors.As(err, &target)
}

// resource maps ref to the client of its resource in the cluster. A kind
// the mapper does not know resets the mapper (discovery may be stale after
// a CustomResourceDefinition appeared) and is tried once more; one reset
// per run and CRD change is enough, however many objects miss.
func (c *clusterRun) resource(ctx context.Context, ref api.TemplateRef) (dynamic.ResourceInterface, error) {
	_, client, err := c.mapResource(ctx, ref)
	return client, err
}

// mapResource is resource, with the resource ref maps to.
func (c *clusterRun) mapResource(ctx context.Context, ref api.TemplateRef) (schema.GroupVersionResource, dynamic.ResourceInterface, error) {
	gk := schema.GroupKind{Group: ref.Group, Kind: ref.Kind}
	mapping, err := c.target.Mapper.RESTMapping(gk, ref.Version)
	if apimeta.IsNoMatchError(err) {
		if !c.noMatchReset.Swap(true) {
			c.target.Mapper.Reset()
		}
		mapping, err = c.target.Mapper.RESTMapping(gk, ref.Version)
	}
	if err != nil {
		if apimeta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, nil, &noKindError{ref: ref}
		}
		c.noteFailure(ctx, err)
		return schema.GroupVersionResource{}, nil, fmt.Errorf("map kind %s: %w", ref.Kind, err)
	}
	namespaced := mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
	switch {
	case namespaced && ref.Namespace == "":
		return schema.GroupVersionResource{}, nil, fmt.Errorf("%s is namespaced in the cluster but the template has no namespace", ref.Kind)
	case !namespaced && ref.Namespace != "":
		return schema.GroupVersionResource{}, nil, fmt.Errorf("%s is cluster-scoped in the cluster but the template has namespace %q", ref.Kind, ref.Namespace)
	case namespaced:
		return mapping.Resource, c.target.Dynamic.Resource(mapping.Resource).Namespace(ref.Namespace), nil
	default:
		return mapping.Resource, c.target.Dynamic.Resource(mapping.Resource), nil
	}
}

// resetMapper forgets the cached discovery after kinds were added, changed
// or removed, and allows one more reset on a kind that does not match.
func (c *clusterRun) resetMapper() {
	c.target.Mapper.Reset()
	c.noMatchReset.Store(false)
}
