package interpret

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// maxComponentName is the longest component name Karmada's binding CRD
// admits.
const maxComponentName = 32

// GetComponents runs the kind's componentResource script, Karmada's
// GetComponents(desiredObj): the components of a multi-component workload,
// each with its replicas and what one of its replicas requests. ok is false
// when the kind has no such script; the caller then reads replicas with
// GetReplicas, as Karmada's detector falls back to GetReplicas. A script
// returning nil (or an empty table) gives no components and ok true: the
// template is then scheduled like a non-workload, as in Karmada.
//
// Every component must have a name of at most 32 characters, unique in
// the workload, and replicas from 0 to 2147483647 (what Karmada's binding
// CRD admits); the error names the component.
func (in *Interpreter) GetComponents(tmpl *unstructured.Unstructured) (comps []api.Component, ok bool, err error) {
	s, err := in.lookup(tmpl.GroupVersionKind(), opComponents)
	if err != nil || s == nil {
		return nil, false, err
	}
	out, err := s.call(1, tmpl.Object)
	if err != nil {
		return nil, true, err
	}
	var list []any
	switch v := out[0].(type) {
	case nil:
		return nil, true, nil
	case map[string]any:
		if len(v) > 0 {
			return nil, true, s.fail("GetComponents returned a table with keys, want a list of components")
		}
		return nil, true, nil
	case []any:
		list = v
	default:
		return nil, true, s.fail("GetComponents returned %v, want a list of components or nil", out[0])
	}
	seen := make(map[string]int, len(list))
	comps = make([]api.Component, 0, len(list))
	for i, e := range list {
		c, err := component(e)
		if err == nil {
			if j, dup := seen[c.Name]; dup {
				err = fmt.Errorf("name %q is also component [%d]'s", c.Name, j)
			}
		}
		if err != nil {
			return nil, true, s.fail("GetComponents returned component [%d]: %v", i, err)
		}
		seen[c.Name] = i
		comps = append(comps, c)
	}
	return comps, true, nil
}

// component converts one entry of GetComponents' list.
func component(e any) (api.Component, error) {
	m, ok := e.(map[string]any)
	if !ok {
		return api.Component{}, fmt.Errorf("%v is not a table", e)
	}
	name, _ := m["name"].(string)
	if name == "" || len(name) > maxComponentName {
		return api.Component{}, fmt.Errorf("name %v: want a string of 1 to %d characters", m["name"], maxComponentName)
	}
	n, ok := m["replicas"].(int64)
	if !ok || n < 0 || n > 1<<31-1 {
		return api.Component{}, fmt.Errorf("component %q: replicas %v: want a whole number from 0 to 2147483647", name, m["replicas"])
	}
	c := api.Component{Name: name, Replicas: int32(n)}
	if r, ok := m["replicaRequirements"].(map[string]any); ok && len(r) > 0 {
		r = fixEmpty(r).(map[string]any)
		delete(r, "namespace")
		req := &api.ReplicaRequirements{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r, req); err != nil {
			return api.Component{}, fmt.Errorf("component %q: replicaRequirements: %w", name, err)
		}
		// Karmada's component requirements have no namespace (the
		// binding's is the workload's), so none is added: the binding
		// reads as Karmada's.
		c.ReplicaRequirements = req
	} else if v := m["replicaRequirements"]; v != nil && !ok {
		return api.Component{}, fmt.Errorf("component %q: replicaRequirements %v is not a table", name, v)
	}
	return c, nil
}

// HasComponents reports whether tmpl's kind scripts componentResource:
// such a template is scheduled and rendered whole. A kind whose
// customization was refused has none.
func (in *Interpreter) HasComponents(tmpl *unstructured.Unstructured) bool {
	s, err := in.lookup(tmpl.GroupVersionKind(), opComponents)
	return s != nil && err == nil
}

// Workload is what the scheduler needs of a template, as Karmada's
// detector reads it: the components when the kind scripts componentResource
// (replicas then zero and requirements nil: the template is scheduled
// whole), otherwise the replicas and what one replica requests
// (GetReplicas). Every front end reads a template through it, so a
// multi-component workload is scheduled the same way in each.
func (in *Interpreter) Workload(tmpl *unstructured.Unstructured) (replicas int32, req *api.ReplicaRequirements, comps []api.Component, err error) {
	comps, ok, err := in.GetComponents(tmpl)
	if ok || err != nil {
		return 0, nil, comps, err
	}
	replicas, req, err = in.GetReplicas(tmpl)
	return replicas, req, nil, err
}
