package execution

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ObserveRequest names one object to read back from one cluster.
type ObserveRequest struct {
	// Cluster is the member cluster.
	Cluster string
	// Object is the rendered object, or at least its apiVersion, kind,
	// namespace and name. Its fields count as managed in the view even when
	// another manager has taken them, so changes to them show as drift.
	Object *unstructured.Unstructured
}

// Observation is one object as it is in one cluster.
type Observation struct {
	// Cluster is the member cluster.
	Cluster string
	// Object identifies the object.
	Object api.TemplateRef
	// NotFound is set when the object does not exist (or its kind is not
	// served); Live and Managed are then nil.
	NotFound bool
	// Live is the object as the apiserver returned it.
	Live *unstructured.Unstructured
	// Managed is the view of Live limited to the fields flotilla manages
	// (ManagedView): what a Terraform Read stores to show drift.
	Managed *unstructured.Unstructured
	// Owned is set when Live carries this fleet's ownership labels and the
	// same template annotation.
	Owned bool
	// Err says why the object could not be read.
	Err error
}

// ObserveLive reads every requested object back from its cluster and
// returns the observations in request order. Clusters are read in
// parallel, at most Concurrency at a time; an unreachable cluster fails its
// own observations only.
func (e *Executor) ObserveLive(ctx context.Context, reqs []ObserveRequest) []Observation {
	out := make([]Observation, len(reqs))
	byCluster := map[string][]int{}
	for i, r := range reqs {
		out[i] = Observation{Cluster: r.Cluster}
		if err := e.check(); err != nil {
			out[i].Err = fmt.Errorf("observe in cluster %s: %w", r.Cluster, err)
			continue
		}
		if r.Object == nil {
			out[i].Err = fmt.Errorf("observe in cluster %s: object is nil", r.Cluster)
			continue
		}
		out[i].Object = api.TemplateRefOf(r.Object)
		if err := validateRef(out[i].Object); err != nil {
			out[i].Err = fmt.Errorf("observe in cluster %s: %w", r.Cluster, err)
			continue
		}
		byCluster[r.Cluster] = append(byCluster[r.Cluster], i)
	}
	clusters := make([]string, 0, len(byCluster))
	for name := range byCluster {
		clusters = append(clusters, name)
	}
	slices.Sort(clusters)
	sem := make(chan struct{}, e.concurrency())
	var wg sync.WaitGroup
	for _, name := range clusters {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c := &clusterRun{e: e, name: name, namespaces: map[string]error{}}
			target, err := e.connect(ctx, name)
			if err != nil {
				c.down = fmt.Errorf("cannot connect: %w", err)
			}
			c.target = target
			idx := byCluster[name]
			c.parallel(len(idx), func(j int) {
				i := idx[j]
				c.observe(ctx, reqs[i].Object, &out[i])
			})
		})
	}
	wg.Wait()
	return out
}

// observe fills obs with the live object and its managed view.
func (c *clusterRun) observe(ctx context.Context, desired *unstructured.Unstructured, obs *Observation) {
	fail := func(err error) {
		c.noteFailure(ctx, err)
		obs.Err = fmt.Errorf("observe %s in cluster %s: %w", obs.Object.Describe(), c.name, err)
	}
	if down := c.downErr(); down != nil {
		fail(notAttempted(down))
		return
	}
	client, err := c.resource(ctx, obs.Object)
	if err != nil {
		if isNoKind(err) {
			obs.NotFound = true
			return
		}
		fail(err)
		return
	}
	var live *unstructured.Unstructured
	if c.e.Reads != nil {
		ref := obs.Object
		key := readKey{cluster: c.name, kind: schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind}, namespace: ref.Namespace}
		live, _ = c.e.Reads.get(ctx, key, client, c.e.Fleet, ref.Name)
	}
	if live == nil {
		live, err = client.Get(ctx, obs.Object.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			obs.NotFound = true
			return
		}
		if err != nil {
			fail(err)
			return
		}
	}
	managed, err := ManagedView(live, c.e.fieldManager(), desired)
	if err != nil {
		fail(err)
		return
	}
	obs.Live, obs.Managed = live, managed
	obs.Owned = ownerOf(live, c.e.Fleet, obs.Object) == ownedByTemplate
}
