package interpret

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// This file holds the Interpreter's operations: each runs a kind's
// customized script when it has one and the built-in rule otherwise.

// HasReplicas reports whether a template's replicas are scheduled: a
// built-in kind with replicas, or a kind whose customization scripts
// replicaResource.
func (in *Interpreter) HasReplicas(tmpl *unstructured.Unstructured) bool {
	s, err := in.lookup(tmpl.GroupVersionKind(), opReplicas)
	return s != nil || err != nil || Of(tmpl).HasReplicas()
}

// RetentionCustomized reports whether a customization scripts the
// retention of obj's kind: such a kind may keep member-owned fields, and
// the HPA scale-target marker labels it as it labels a Deployment.
func (in *Interpreter) RetentionCustomized(obj *unstructured.Unstructured) bool {
	s, _ := in.lookup(obj.GroupVersionKind(), opRetain)
	return s != nil
}

// GetReplicas is GetReplicas with the kind's replicaResource script, which
// returns the replicas and what one replica requests (nil for nothing), as
// Karmada's GetReplicas(obj) does.
func (in *Interpreter) GetReplicas(tmpl *unstructured.Unstructured) (int32, *api.ReplicaRequirements, error) {
	s, err := in.lookup(tmpl.GroupVersionKind(), opReplicas)
	if err != nil {
		return 0, nil, err
	}
	if s == nil {
		return GetReplicas(tmpl)
	}
	out, err := s.call(2, tmpl.Object)
	if err != nil {
		return 0, nil, err
	}
	n, ok := out[0].(int64)
	if !ok || n < 0 || n > 1<<31-1 {
		return 0, nil, s.fail("GetReplicas returned %v as the replicas, want a whole number from 0 to 2147483647", out[0])
	}
	if out[1] == nil {
		return int32(n), nil, nil
	}
	m, ok := out[1].(map[string]any)
	if !ok {
		return 0, nil, s.fail("GetReplicas returned %v as the requirements, want a table or nil", out[1])
	}
	req := &api.ReplicaRequirements{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fixEmpty(m).(map[string]any), req); err != nil {
		return 0, nil, s.fail("GetReplicas returned requirements that are not ReplicaRequirements: %v", err)
	}
	if req.Namespace == "" {
		req.Namespace = tmpl.GetNamespace()
	}
	return int32(n), req, nil
}

// ReviseReplica is ReviseReplica with the kind's replicaRevision script,
// which returns the object with its replicas set to desiredReplica. The
// script may not change the object's apiVersion, kind, name or namespace.
func (in *Interpreter) ReviseReplica(obj *unstructured.Unstructured, replicas int64) error {
	s, err := in.lookup(obj.GroupVersionKind(), opRevise)
	if err != nil {
		return err
	}
	if s == nil {
		return ReviseReplica(obj, replicas)
	}
	out, err := s.call(1, obj.Object, replicas)
	if err != nil {
		return err
	}
	revised, err := s.sameObject("ReviseReplica", out[0], obj.Object)
	if err != nil {
		return err
	}
	obj.Object = revised
	return nil
}

// Retain is Retain with the kind's retention script, Karmada's
// Retain(desiredObj, observedObj), which returns desired with the fields
// the member owns taken from observed. In server-side-apply terms the
// fields the script changed, removed or added (from observed) are the
// member's: they are taken out of desired and returned, as the built-in
// retain-replicas rule does. An added field matters as much as a changed
// one: a field the template stopped setting that the script keeps from
// observed must reach the caller, which hands it over to the member
// before the apply that no longer carries it (else server-side apply would
// delete it). An object left empty by the removals is dropped too, so
// applying it does not claim the emptied object. observed nil (the object
// is new) retains nothing.
func (in *Interpreter) Retain(desired, observed *unstructured.Unstructured) ([][]string, error) {
	if observed == nil {
		return nil, nil
	}
	s, err := in.lookup(desired.GroupVersionKind(), opRetain)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return Retain(desired, observed), nil
	}
	out, err := s.call(1, desired.Object, observed.Object)
	if err != nil {
		return nil, err
	}
	retained, err := s.sameObject("Retain", out[0], desired.Object, observed.Object)
	if err != nil {
		return nil, err
	}
	paths := changedPaths(copyJSON(desired.Object).(map[string]any), copyJSON(retained).(map[string]any), nil)
	for _, p := range paths {
		unstructured.RemoveNestedField(desired.Object, p...)
		for i := len(p) - 1; i > 0; i-- {
			if m, found, _ := unstructured.NestedFieldNoCopy(desired.Object, p[:i]...); !found || !isEmptyMap(m) {
				break
			}
			unstructured.RemoveNestedField(desired.Object, p[:i]...)
		}
	}
	return paths, nil
}

// isEmptyMap reports an object with no fields.
func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// changedPaths lists the paths of desired's fields that retained changes
// or removes, and of the fields retained adds, descending through objects
// only (a changed list is one path), sorted.
func changedPaths(desired, retained map[string]any, at []string) [][]string {
	var out [][]string
	for k := range retained {
		if _, ok := desired[k]; !ok {
			out = append(out, append(slices.Clone(at), k))
		}
	}
	for k, d := range desired {
		p := append(slices.Clone(at), k)
		r, ok := retained[k]
		dm, dIsMap := d.(map[string]any)
		rm, rIsMap := r.(map[string]any)
		switch {
		case ok && dIsMap && rIsMap:
			out = append(out, changedPaths(dm, rm, p)...)
		case !ok || !reflect.DeepEqual(d, r):
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ".") < strings.Join(out[j], ".") })
	return out
}

// ReflectStatus is ReflectStatus with the kind's statusReflection script,
// Karmada's ReflectStatus(observedObj), which returns the status to carry
// back (nil for none).
func (in *Interpreter) ReflectStatus(obj *unstructured.Unstructured) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	s, err := in.lookup(obj.GroupVersionKind(), opReflect)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return ReflectStatus(obj), nil
	}
	out, err := s.call(1, obj.Object)
	if err != nil || out[0] == nil {
		return nil, err
	}
	m, ok := out[0].(map[string]any)
	if !ok {
		return nil, s.fail("ReflectStatus returned %v, want a table or nil", out[0])
	}
	// Karmada converts a reflected status with no reference object, so
	// every empty table under it is dropped, even where the member's status
	// had an empty list or object: the same status reaches aggregation here.
	// The table itself stays, empty or not: Karmada reports an empty table
	// as an empty object ({}), a status that says nothing, not as no status.
	return fixEmpty(m).(map[string]any), nil
}

// AggregateStatus is AggregateStatus with the kind's statusAggregation
// script, Karmada's AggregateStatus(desiredObj, statusItems): statusItems
// are {clusterName, applied, status} per member, sorted by cluster (nil
// when there is no member), and
// the script returns the template with its aggregated status, of which
// flotilla keeps status.
func (in *Interpreter) AggregateStatus(template *unstructured.Unstructured, items []Member) (map[string]any, error) {
	if template == nil {
		return nil, nil
	}
	s, err := in.lookup(template.GroupVersionKind(), opAggregate)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return AggregateStatus(template, items), nil
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b Member) int { return strings.Compare(a.Cluster, b.Cluster) })
	list := make([]any, 0, len(sorted))
	for _, m := range sorted {
		item := map[string]any{"clusterName": m.Cluster, "applied": m.Applied}
		if m.Status != nil {
			item["status"] = m.Status
		}
		list = append(list, item)
	}
	// Karmada hands a script nil, not an empty table, when no member has
	// an item (its binding's aggregatedStatus is empty): scripts written for
	// it branch on statusItems == nil to initialise a status.
	var arg any = list
	if len(list) == 0 {
		arg = nil
	}
	out, err := s.call(1, template.Object, arg)
	if err != nil {
		return nil, err
	}
	// Whether the script set a status table is read before its empty
	// tables are resolved, which drops an empty one: an empty status
	// table is an empty status object, as Karmada reports it, not none.
	var setStatus bool
	if m, ok := out[0].(map[string]any); ok {
		_, setStatus = m["status"].(map[string]any)
	}
	obj, err := s.sameObject("AggregateStatus", out[0], template.Object)
	if err != nil {
		return nil, err
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil && setStatus {
		status = map[string]any{}
	}
	return status, nil
}

// InterpretHealth is InterpretHealth with the kind's healthInterpretation
// script, Karmada's InterpretHealth(observedObj), which returns true for
// healthy. A script that fails makes the object Unknown, with the error as
// the message.
func (in *Interpreter) InterpretHealth(obj *unstructured.Unstructured) (Health, string) {
	if obj == nil {
		return InterpretHealth(obj)
	}
	s, err := in.lookup(obj.GroupVersionKind(), opHealth)
	if err != nil {
		return Unknown, err.Error()
	}
	if s == nil {
		return InterpretHealth(obj)
	}
	out, err := s.call(1, obj.Object)
	if err != nil {
		return Unknown, err.Error()
	}
	switch out[0] {
	case true:
		return Healthy, "healthy by customization " + s.customization
	case false:
		return Unhealthy, "unhealthy by customization " + s.customization
	}
	return Unknown, s.fail("InterpretHealth returned %v, want true or false", out[0]).Error()
}

// GetDependencies is GetDependencies with the kind's
// dependencyInterpretation script, Karmada's GetDependencies(desiredObj),
// which returns {apiVersion, kind, namespace, name} per dependency. Flotilla
// follows the v1 kinds of DependencyKinds by name; a script naming another
// kind, or a labelSelector, is refused rather than ignored.
func (in *Interpreter) GetDependencies(tmpl *unstructured.Unstructured) ([]Dependency, error) {
	s, err := in.lookup(tmpl.GroupVersionKind(), opDeps)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return GetDependencies(tmpl)
	}
	out, err := s.call(1, tmpl.Object)
	if err != nil || out[0] == nil {
		return nil, err
	}
	list, ok := out[0].([]any)
	if m, isMap := out[0].(map[string]any); isMap && len(m) == 0 {
		list, ok = nil, true
	}
	if !ok {
		return nil, s.fail("GetDependencies returned %v, want a list", out[0])
	}
	seen := map[Dependency]bool{}
	for i, e := range list {
		d, err := s.dependency(i, e, tmpl.GetNamespace())
		if err != nil {
			return nil, err
		}
		seen[d] = true
	}
	return sortedDependencies(seen), nil
}

func (s *script) dependency(i int, e any, namespace string) (Dependency, error) {
	m, _ := e.(map[string]any)
	str := func(k string) string { v, _ := m[k].(string); return v }
	d := Dependency{Kind: str("kind"), Namespace: str("namespace"), Name: str("name")}
	if d.Namespace == "" {
		d.Namespace = namespace
	}
	switch {
	case m == nil:
		return d, s.fail("GetDependencies returned %v at [%d], want a table", e, i)
	case m["labelSelector"] != nil:
		return d, s.fail("GetDependencies [%d] has a labelSelector; flotilla follows dependencies by name only", i)
	case str("apiVersion") != "v1" || !slices.Contains(DependencyKinds, d.Kind):
		return d, s.fail("GetDependencies [%d] is %s %s; flotilla follows v1 %s only", i, str("apiVersion"), d.Kind, strings.Join(DependencyKinds, ", "))
	case d.Name == "":
		return d, s.fail("GetDependencies [%d] has no name", i)
	case d.Namespace != namespace:
		return d, s.fail("GetDependencies [%d] is in namespace %q; a dependency is in its workload's namespace %q", i, d.Namespace, namespace)
	}
	return d, nil
}

// fail is an error of the script's result.
func (s *script) fail(format string, args ...any) error {
	return &scriptError{customization: s.customization, operation: s.op.field, err: fmt.Errorf(format, args...)}
}

// sameObject checks that a script returned an object with the identity of
// orig, and resolves its empty tables against refs.
func (s *script) sameObject(fn string, result any, orig map[string]any, refs ...any) (map[string]any, error) {
	m, ok := result.(map[string]any)
	if !ok {
		return nil, s.fail("%s returned %v, want the object", fn, result)
	}
	m = fixEmpty(m, append([]any{orig}, refs...)...).(map[string]any)
	got, want := &unstructured.Unstructured{Object: m}, &unstructured.Unstructured{Object: orig}
	if got.GetAPIVersion() != want.GetAPIVersion() || got.GetKind() != want.GetKind() ||
		got.GetName() != want.GetName() || got.GetNamespace() != want.GetNamespace() {
		return nil, s.fail("%s returned %s %s %s/%s, want the object it was given, %s %s %s/%s", fn,
			got.GetAPIVersion(), got.GetKind(), got.GetNamespace(), got.GetName(),
			want.GetAPIVersion(), want.GetKind(), want.GetNamespace(), want.GetName())
	}
	return m, nil
}
