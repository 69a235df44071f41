package execution

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// namespaceGVR is the one resource execution names without the mapper: it
// is served by every cluster.
var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// apply applies one rendered object after checking who owns the live one.
func (c *clusterRun) apply(ctx context.Context, o op) Outcome {
	out := Outcome{Cluster: c.name, Object: o.ref, Hash: o.obj.GetAnnotations()[render.AnnotationRenderedHash]}
	fail := func(err error) Outcome {
		c.noteFailure(ctx, err)
		out.Action, out.Err = ActionFailed, c.wrap(o, err)
		return out
	}
	if down := c.downErr(); down != nil {
		return fail(notAttempted(down))
	}
	if o.ref.Namespace != "" {
		if err := c.namespaceErr(o.ref.Namespace); err != nil {
			return fail(err)
		}
	}
	gvr, client, err := c.mapResource(ctx, o.ref)
	if err != nil {
		return fail(err)
	}
	if c.unchangedInWatch(gvr, o) {
		// The same object as last time onto a member object whose applied
		// fields nobody touched since, as the member's watch tells: nothing
		// to read, nothing to send. The outcome carries no live object.
		if phaseOf(o.ref) == phaseNamespace {
			c.setNamespace(o.ref.Name, nil)
		}
		out.Action = ActionApplied
		return out
	}
	live, err := client.Get(ctx, o.ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return fail(fmt.Errorf("read the live object: %w", err))
	}
	fromKarmada := false
	if live != nil {
		switch ownerOf(live, c.e.Fleet, o.ref) {
		case ownedByOtherFleet:
			out.Action, out.Err = ActionSkipped, &ConflictError{Cluster: c.name, Object: o.ref, Fleet: c.e.Fleet, OtherFleet: live.GetLabels()[render.LabelFleet]}
			return out
		case notOwned:
			if o.karmada.covers(c.name, live) {
				fromKarmada = true
				break
			}
			if o.conflict != api.ConflictOverwrite {
				out.Action, out.Err = ActionSkipped, &ConflictError{Cluster: c.name, Object: o.ref, Fleet: c.e.Fleet}
				return out
			}
			// The marker goes on before the apply takes the object over,
			// so no crash in between leaves an adopted object that a
			// prune would delete.
			if err := c.markAdopted(ctx, client, live); err != nil {
				return fail(fmt.Errorf("mark the object adopted: %w", err))
			}
			out.Adopted = true
		}
	}
	// The fields the member owns are left out first. Retention depends on
	// live, and handing a field over writes to the member: the apply that
	// follows a handover is never skipped, since it is what releases the
	// field from flotilla's manager.
	obj, handedOver := o.obj, false
	if o.retain && live != nil {
		if obj, handedOver, err = c.retain(ctx, client, o.interpreter, o.obj, live); err != nil {
			return fail(err)
		}
	}
	if live != nil && !handedOver && phaseOf(o.ref) != phaseCRD && (fromKarmada || ownerOf(live, c.e.Fleet, o.ref) == ownedByTemplate) && c.e.Applied.unchanged(c.name, o.ref, o.obj, live) {
		// The same object onto the same live one: nothing to send.
		if phaseOf(o.ref) == phaseNamespace {
			c.setNamespace(o.ref.Name, nil)
		}
		out.Action, out.Live = ActionApplied, live
		out.ResourceVersion, out.Generation = live.GetResourceVersion(), live.GetGeneration()
		return out
	}
	if fromKarmada && !handedOver && !o.karmada.Label {
		// Karmada's object, taken over: nothing is sent while it already
		// holds what flotilla renders (KarmadaAdoption).
		same, err := c.appliesNothing(ctx, client, obj, live)
		if err != nil {
			return fail(err)
		}
		if same {
			c.e.Applied.remember(c.name, o.ref, o.obj, live, c.e.fieldManager())
			out.Action, out.Live = ActionApplied, live
			out.ResourceVersion, out.Generation = live.GetResourceVersion(), live.GetGeneration()
			return out
		}
	}
	// Force: flotilla is the single declared owner of every field it
	// renders. A field another manager took since the last apply (kubectl
	// edit, a controller) is drift, and the apply takes it back, as
	// Karmada's execution controller does. Without force each such field
	// would be a conflict only a human could clear. Objects flotilla does
	// not own never get here unless adoption was asked for.
	applied, err := client.Apply(ctx, o.ref.Name, obj, metav1.ApplyOptions{FieldManager: c.e.fieldManager(), Force: true})
	if apierrors.IsNotFound(err) && c.namespaceFromCache(o.ref.Namespace) {
		// An earlier call saw the namespace, and it has gone since: it is
		// made again (its CreatedNamespace outcome is not reported) and
		// the object applied once more.
		c.e.Namespaces.forget(c.name, o.ref.Namespace)
		c.ensureNamespace(ctx, o.ref.Namespace)
		if nsErr := c.namespaceErr(o.ref.Namespace); nsErr != nil {
			return fail(nsErr)
		}
		applied, err = client.Apply(ctx, o.ref.Name, obj, metav1.ApplyOptions{FieldManager: c.e.fieldManager(), Force: true})
	}
	if err != nil {
		c.e.Applied.forget(c.name, o.ref)
		return fail(err)
	}
	if o.retain && c.handoverPending(o.interpreter, o.obj, applied) {
		c.e.Applied.forget(c.name, o.ref)
	} else {
		c.e.Applied.remember(c.name, o.ref, o.obj, applied, c.e.fieldManager())
	}
	out.Action, out.Live = ActionApplied, applied
	out.ResourceVersion, out.Generation = applied.GetResourceVersion(), applied.GetGeneration()
	out.Changed = live == nil || live.GetResourceVersion() != applied.GetResourceVersion()
	switch phaseOf(o.ref) {
	case phaseNamespace:
		c.setNamespace(o.ref.Name, nil)
	case phaseCRD:
		if out.Changed {
			c.crdChanged.Store(true)
		}
		// The object is written and flotilla's; only the wait failed, so
		// the outcome stays Applied and carries the error.
		if err := c.waitEstablished(ctx, client, applied); err != nil {
			c.noteFailure(ctx, err)
			out.Err = c.wrap(o, err)
		}
	}
	return out
}

// unchangedInWatch says whether the member's watch of its applied objects
// shows o's object with the applied fields the last apply of the same
// object left. A CustomResourceDefinition is always applied (its apply
// waits for it to be Established), and an adopted object goes through the
// read, which checks who owns it.
func (c *clusterRun) unchangedInWatch(gvr schema.GroupVersionResource, o op) bool {
	if c.target.Watched == nil || c.e.Applied == nil || phaseOf(o.ref) == phaseCRD {
		return false
	}
	fields, found, ok := c.target.Watched.AppliedFields(gvr, o.ref.Namespace, o.ref.Name, c.e.fieldManager())
	return ok && found && c.e.Applied.unchangedWatched(c.name, o.ref, o.obj, fields)
}

func (c *clusterRun) namespaceErr(ns string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.namespaces[ns]; err != nil {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	return nil
}

func (c *clusterRun) setNamespace(ns string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespaces[ns] = err
	delete(c.cachedNamespaces, ns)
	if err == nil {
		c.e.Namespaces.remember(c.name, ns)
	}
}

// namespaceFromCache says whether ns was taken from Executor.Namespaces in
// this run, without a read.
func (c *clusterRun) namespaceFromCache(ns string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ns != "" && c.cachedNamespaces[ns]
}

// useCachedNamespace takes ns as existing when Executor.Namespaces knows it.
func (c *clusterRun) useCachedNamespace(ns string) bool {
	if !c.e.Namespaces.known(c.name, ns) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespaces[ns] = nil
	if c.cachedNamespaces == nil {
		c.cachedNamespaces = map[string]bool{}
	}
	c.cachedNamespaces[ns] = true
	return true
}

func (c *clusterRun) knownNamespace(ns string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.namespaces[ns]
	return ok
}

// syncNamespaces makes sure the namespace of every object in ops exists,
// creating the missing ones, and returns an outcome per namespace created.
// A namespace flotilla creates carries the managed-by and fleet labels but
// no template annotation, so it is never pruned: deleting it would delete
// everything in it, including what others put there.
func (c *clusterRun) syncNamespaces(ctx context.Context, ops []op) []Outcome {
	var names []string
	for _, o := range ops {
		if o.invalid == nil && o.ref.Namespace != "" && !c.knownNamespace(o.ref.Namespace) && !slices.Contains(names, o.ref.Namespace) &&
			!c.useCachedNamespace(o.ref.Namespace) {
			names = append(names, o.ref.Namespace)
		}
	}
	if len(names) == 0 || c.downErr() != nil {
		return nil
	}
	slices.Sort(names)
	results := make([]*Outcome, len(names))
	c.parallel(len(names), func(i int) { results[i] = c.ensureNamespace(ctx, names[i]) })
	var out []Outcome
	for _, o := range results {
		if o != nil {
			out = append(out, *o)
		}
	}
	return out
}

// ensureNamespace creates ns when it is missing; it returns an outcome only
// when it created it.
func (c *clusterRun) ensureNamespace(ctx context.Context, ns string) *Outcome {
	client := c.target.Dynamic.Resource(namespaceGVR)
	_, err := client.Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil:
		c.setNamespace(ns, nil)
		return nil
	case apierrors.IsForbidden(err):
		// Credentials scoped to a namespace may not read it; the objects'
		// own applies will tell whether it exists.
		c.setNamespace(ns, nil)
		return nil
	case !apierrors.IsNotFound(err):
		c.noteFailure(ctx, err)
		c.setNamespace(ns, fmt.Errorf("read: %w", err))
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("Namespace")
	obj.SetName(ns)
	obj.SetLabels(map[string]string{render.LabelManagedBy: render.ManagedByFlotilla, render.LabelFleet: c.e.Fleet})
	created, err := client.Apply(ctx, ns, obj, metav1.ApplyOptions{FieldManager: c.e.fieldManager(), Force: true})
	if err != nil {
		c.noteFailure(ctx, err)
		c.setNamespace(ns, fmt.Errorf("create: %w", err))
		return nil
	}
	c.setNamespace(ns, nil)
	return &Outcome{
		Cluster:         c.name,
		Object:          api.TemplateRef{Version: "v1", Kind: "Namespace", Name: ns},
		Action:          ActionCreatedNamespace,
		ResourceVersion: created.GetResourceVersion(),
	}
}
