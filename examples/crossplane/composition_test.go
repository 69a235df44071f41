package examples

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// definition reads an app's XRD, checks its Crossplane v2 shape and returns
// its schemas by group/version/kind, with whether each version is served
// and referenceable.
func definition(t *testing.T, app string) (map[schema.GroupVersionKind]kindSchema, map[string]bool) {
	t.Helper()
	f := filepath.Join(app, "definition.yaml")
	xrd := readOne(t, f)
	if xrd.GetAPIVersion() != "apiextensions.crossplane.io/v2" || xrd.GetKind() != "CompositeResourceDefinition" {
		t.Fatalf("%s: %s %s is not an apiextensions.crossplane.io/v2 CompositeResourceDefinition", f, xrd.GetAPIVersion(), xrd.GetKind())
	}
	group, _, _ := unstructured.NestedString(xrd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(xrd.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(xrd.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(xrd.Object, "spec", "scope")
	if kind != apps[app] {
		t.Errorf("%s: kind %q, want %q", f, kind, apps[app])
	}
	if scope != "Namespaced" {
		t.Errorf("%s: scope %q, want Namespaced (Crossplane v2 XRs without claims)", f, scope)
	}
	if want := plural + "." + group; xrd.GetName() != want {
		t.Errorf("%s: name %q, want <plural>.<group> %q", f, xrd.GetName(), want)
	}
	out := map[schema.GroupVersionKind]kindSchema{}
	addSchemas(t, out, xrd.Object)
	usable := map[string]bool{}
	versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(vm, "name")
		served, _, _ := unstructured.NestedBool(vm, "served")
		ref, _, _ := unstructured.NestedBool(vm, "referenceable")
		usable[group+"/"+name] = served && ref
	}
	return out, usable
}

// composedResource is one entry of a function-patch-and-transform input.
type composedResource struct {
	Name    string         `json:"name"`
	Base    map[string]any `json:"base"`
	Patches []patch        `json:"patches"`
}

type patch struct {
	Type          string      `json:"type"`
	FromFieldPath string      `json:"fromFieldPath"`
	ToFieldPath   string      `json:"toFieldPath"`
	Transforms    []transform `json:"transforms"`
}

type transform struct {
	Type    string `json:"type"`
	Convert *struct {
		ToType string `json:"toType"`
	} `json:"convert"`
}

// convertTypes maps a convert transform's toType to an openAPI type.
var convertTypes = map[string]string{
	"string": "string", "int": "integer", "int64": "integer", "float64": "number",
	"bool": "boolean", "object": "object", "array": "array",
}

// outputType is the type the last transform produces; "" when unknown.
func (p patch) outputType() string {
	if len(p.Transforms) == 0 {
		return ""
	}
	last := p.Transforms[len(p.Transforms)-1]
	switch {
	case last.Type == "convert" && last.Convert != nil:
		return convertTypes[last.Convert.ToType]
	case last.Type == "string":
		return "string"
	default:
		return ""
	}
}

// pipelineStep is one step of a Pipeline Composition.
type pipelineStep struct {
	Step        string `json:"step"`
	FunctionRef struct {
		Name string `json:"name"`
	} `json:"functionRef"`
	Input struct {
		APIVersion string             `json:"apiVersion"`
		Kind       string             `json:"kind"`
		Resources  []composedResource `json:"resources"`
	} `json:"input"`
}

// pipeline reads an app's Composition and checks that it composes the app's
// XR in Pipeline mode with functions that functions.yaml declares.
func pipeline(t *testing.T, app string) []pipelineStep {
	t.Helper()
	f := filepath.Join(app, "composition.yaml")
	comp := readOne(t, f)
	if comp.GetAPIVersion() != "apiextensions.crossplane.io/v1" || comp.GetKind() != "Composition" {
		t.Fatalf("%s: %s %s is not an apiextensions.crossplane.io/v1 Composition", f, comp.GetAPIVersion(), comp.GetKind())
	}
	if mode, _, _ := unstructured.NestedString(comp.Object, "spec", "mode"); mode != "Pipeline" {
		t.Errorf("%s: mode %q, want Pipeline", f, mode)
	}
	var spec struct {
		Pipeline []pipelineStep `json:"pipeline"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(comp.Object["spec"].(map[string]any), &spec); err != nil {
		t.Fatalf("%s: spec: %v", f, err)
	}
	if len(spec.Pipeline) == 0 {
		t.Fatalf("%s: empty pipeline", f)
	}
	fns := functions(t, filepath.Join(app, "functions.yaml"))
	for _, s := range spec.Pipeline {
		if _, ok := fns[s.FunctionRef.Name]; !ok {
			t.Errorf("%s: step %s runs function %q, which functions.yaml does not declare", f, s.Step, s.FunctionRef.Name)
		}
		if s.Input.APIVersion != "pt.fn.crossplane.io/v1beta1" || s.Input.Kind != "Resources" {
			t.Errorf("%s: step %s: input %s %s is not function-patch-and-transform's Resources", f, s.Step, s.Input.APIVersion, s.Input.Kind)
		}
	}
	return spec.Pipeline
}

func TestCompositions(t *testing.T) {
	mrs := providerSchemas(t)
	for app, kind := range apps {
		t.Run(app, func(t *testing.T) {
			xrs, usable := definition(t, app)
			f := filepath.Join(app, "composition.yaml")
			comp := readOne(t, f)
			apiVersion, _, _ := unstructured.NestedString(comp.Object, "spec", "compositeTypeRef", "apiVersion")
			refKind, _, _ := unstructured.NestedString(comp.Object, "spec", "compositeTypeRef", "kind")
			gv, err := schema.ParseGroupVersion(apiVersion)
			if err != nil {
				t.Fatalf("%s: compositeTypeRef.apiVersion: %v", f, err)
			}
			xr, ok := xrs[gv.WithKind(refKind)]
			if !ok || refKind != kind {
				t.Fatalf("%s: compositeTypeRef %s %s is not the XRD's %s", f, apiVersion, refKind, kind)
			}
			if !usable[apiVersion] {
				t.Errorf("%s: compositeTypeRef version %s is not served and referenceable", f, apiVersion)
			}
			read, written := map[string]bool{}, map[string]bool{}
			names := map[string]bool{}
			for _, step := range pipeline(t, app) {
				for _, r := range step.Input.Resources {
					if r.Name == "" || names[r.Name] {
						t.Errorf("%s: resource name %q is empty or not unique", f, r.Name)
					}
					names[r.Name] = true
					base := &unstructured.Unstructured{Object: r.Base}
					mr, ok := mrs[base.GroupVersionKind()]
					if !ok {
						t.Errorf("%s: resource %s: %s is not a kind in package/crds", f, r.Name, base.GroupVersionKind())
						continue
					}
					for _, err := range checkObject(r.Base, mr, "apiVersion", "kind") {
						t.Errorf("%s: resource %s: base: %v", f, r.Name, err)
					}
					for i, p := range r.Patches {
						if err := checkPatch(p, xr, mr, read, written); err != nil {
							t.Errorf("%s: resource %s: patches[%d]: %v", f, r.Name, i, err)
						}
					}
				}
			}
			for _, field := range schemaLeaves(xr.openAPI, "spec") {
				if !covered(field, read) {
					t.Errorf("%s: XR field %s is never read by a patch", f, field)
				}
			}
			for _, field := range schemaLeaves(xr.openAPI, "status") {
				if !covered(field, written) {
					t.Errorf("%s: XR field %s is never written by a patch", f, field)
				}
			}
		})
	}
}

// checkPatch resolves a patch's paths: FromCompositeFieldPath reads the XR
// and writes the composed resource, ToCompositeFieldPath the other way. It
// records the XR paths read and written, list indices dropped.
func checkPatch(p patch, xr, mr kindSchema, read, written map[string]bool) error {
	from, to := xr, mr
	switch p.Type {
	case "", "FromCompositeFieldPath":
		read[indexless(p.FromFieldPath)] = true
	case "ToCompositeFieldPath":
		from, to = mr, xr
		written[indexless(p.ToFieldPath)] = true
	default:
		return fmt.Errorf("patch type %q is not checked by this test", p.Type)
	}
	fromType, err := resolvePath(from, p.FromFieldPath)
	if err != nil {
		return fmt.Errorf("fromFieldPath: %w", err)
	}
	toType, err := resolvePath(to, p.ToFieldPath)
	if err != nil {
		return fmt.Errorf("toFieldPath: %w", err)
	}
	got := fromType
	if len(p.Transforms) > 0 {
		got = p.outputType()
	}
	if !compatible(toType, got) {
		return fmt.Errorf("%s is %s but %s wants %s", p.FromFieldPath, got, p.ToFieldPath, toType)
	}
	return nil
}

func resolvePath(ks kindSchema, path string) (string, error) {
	segs, err := parseFieldPath(path)
	if err != nil {
		return "", err
	}
	return ks.resolve(segs)
}

var listIndex = regexp.MustCompile(`\[\d+\]`)

func indexless(path string) string { return listIndex.ReplaceAllString(path, "[]") }

// schemaLeaves lists the leaf fields under a top-level property of a
// schema, lists marked with [] ("spec.clusters[].name"). A map
// (additionalProperties) is one leaf.
func schemaLeaves(s map[string]any, top string) []string {
	var out []string
	var walk func(node map[string]any, path string)
	walk = func(node map[string]any, path string) {
		if node["type"] == "array" {
			items, _ := node["items"].(map[string]any)
			walk(items, path+"[]")
			return
		}
		props := properties(node)
		if len(props) == 0 {
			out = append(out, path)
			return
		}
		for _, k := range sortedKeys(props) {
			walk(props[k], path+"."+k)
		}
	}
	if node, ok := properties(s)[top]; ok {
		walk(node, top)
	}
	return out
}

// covered says whether a patch path reads or writes field or a parent of it.
func covered(field string, used map[string]bool) bool {
	for u := range used {
		if u == field || strings.HasPrefix(field, u+".") || strings.HasPrefix(field, u+"[") {
			return true
		}
	}
	return false
}

func TestXRs(t *testing.T) {
	for app, kind := range apps {
		t.Run(app, func(t *testing.T) {
			xrs, _ := definition(t, app)
			f := filepath.Join(app, "xr.yaml")
			xr := readOne(t, f)
			ks, ok := xrs[xr.GroupVersionKind()]
			if !ok || xr.GetKind() != kind {
				t.Fatalf("%s: %s is not the XRD's %s", f, xr.GroupVersionKind(), kind)
			}
			if xr.GetNamespace() == "" {
				t.Errorf("%s: a namespaced XR needs metadata.namespace", f)
			}
			for _, err := range checkObject(xr.Object, ks, "apiVersion", "kind") {
				t.Errorf("%s: %v", f, err)
			}
			required, _, _ := unstructured.NestedStringSlice(ks.openAPI, "properties", "spec", "required")
			for _, r := range required {
				if _, ok, _ := unstructured.NestedFieldNoCopy(xr.Object, "spec", r); !ok {
					t.Errorf("%s: spec.%s is required by the XRD", f, r)
				}
			}
		})
	}
}
