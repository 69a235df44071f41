package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// connect returns the cluster's target, its requests bounded by
// RequestTimeout when one is set.
func (e *Executor) connect(ctx context.Context, cluster string) (Target, error) {
	target, err := e.Clusters.Connect(ctx, cluster)
	if err != nil || e.RequestTimeout <= 0 || target.Dynamic == nil {
		return target, err
	}
	target.Dynamic = timedDynamic{Interface: target.Dynamic, timeout: e.RequestTimeout}
	return target, nil
}

// timedDynamic bounds every request its resource clients send by timeout,
// so a member that accepts a request and never answers holds the caller for
// that long, not for the caller's whole deadline. Watches are not bounded:
// they are meant to last.
type timedDynamic struct {
	dynamic.Interface
	timeout time.Duration
}

func (d timedDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	r := d.Interface.Resource(gvr)
	return timedNamespaceable{timedResource: timedResource{ResourceInterface: r, timeout: d.timeout}, inner: r}
}

type timedNamespaceable struct {
	timedResource
	inner dynamic.NamespaceableResourceInterface
}

func (n timedNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return timedResource{ResourceInterface: n.inner.Namespace(ns), timeout: n.timeout}
}

type timedResource struct {
	dynamic.ResourceInterface
	timeout time.Duration
}

// bound runs one request under the timeout and names it when it is what
// ended the request (and not the caller's own context).
func bound[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := f(rctx)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		err = &RequestTimeoutError{Timeout: timeout, Err: err}
	}
	return v, err
}

// RequestTimeoutError is a request to a member that did not finish within
// Executor.RequestTimeout.
type RequestTimeoutError struct {
	// Timeout is the bound that passed.
	Timeout time.Duration
	// Err is the client's error.
	Err error
}

func (e *RequestTimeoutError) Error() string {
	return fmt.Sprintf("no answer within the member request timeout %s: %v", e.Timeout, e.Err)
}

func (e *RequestTimeoutError) Unwrap() error { return e.Err }

type uobj = *unstructured.Unstructured

func (r timedResource) Create(ctx context.Context, o uobj, opts metav1.CreateOptions, sub ...string) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) { return r.ResourceInterface.Create(ctx, o, opts, sub...) })
}

func (r timedResource) Update(ctx context.Context, o uobj, opts metav1.UpdateOptions, sub ...string) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) { return r.ResourceInterface.Update(ctx, o, opts, sub...) })
}

func (r timedResource) UpdateStatus(ctx context.Context, o uobj, opts metav1.UpdateOptions) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) { return r.ResourceInterface.UpdateStatus(ctx, o, opts) })
}

func (r timedResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	_, err := bound(ctx, r.timeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.ResourceInterface.Delete(ctx, name, opts, sub...)
	})
	return err
}

func (r timedResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	_, err := bound(ctx, r.timeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.ResourceInterface.DeleteCollection(ctx, opts, list)
	})
	return err
}

func (r timedResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) { return r.ResourceInterface.Get(ctx, name, opts, sub...) })
}

func (r timedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
		return r.ResourceInterface.List(ctx, opts)
	})
}

func (r timedResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) {
		return r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
	})
}

func (r timedResource) Apply(ctx context.Context, name string, o uobj, opts metav1.ApplyOptions, sub ...string) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) { return r.ResourceInterface.Apply(ctx, name, o, opts, sub...) })
}

func (r timedResource) ApplyStatus(ctx context.Context, name string, o uobj, opts metav1.ApplyOptions) (uobj, error) {
	return bound(ctx, r.timeout, func(ctx context.Context) (uobj, error) { return r.ResourceInterface.ApplyStatus(ctx, name, o, opts) })
}
