// Package examples tests the Crossplane examples in this directory: an XRD,
// a pipeline Composition (function-patch-and-transform) and an XR for an
// active-active app and a remote-DR app, built from flotilla's managed
// resources. The structural tests check that every file parses and that
// every kind and field path they use exists in package/crds or the XRD; the
// render tests run `crossplane render` against the real function and plan
// the result with flotilla's engine.
package examples

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/package/crds"
)

// apps are the example apps, one directory each, and the kind of their XR.
var apps = map[string]string{
	"active-active": "XActiveActiveApp",
	"remote-dr":     "XRemoteDRApp",
}

// exercised lists every example file and the tests that read it. A new file
// fails TestEveryExampleFileIsTested until a test reads it.
var exercised = map[string]string{
	"README.md":                      "TestReadmeNamesEveryFile",
	"setup/provider.yaml":            "TestFunctionPackages",
	"setup/providerconfig.yaml":      "TestManagedResourceExamples, TestExamplesOnAPIServer, TestCrossplaneCore",
	"active-active/definition.yaml":  "TestCompositions, TestXRs, TestCrossplaneCore",
	"active-active/composition.yaml": "TestCompositions, TestRenderActiveActive, TestCrossplaneCore",
	"active-active/xr.yaml":          "TestXRs, TestRenderActiveActive, TestCrossplaneCore",
	"active-active/functions.yaml":   "TestFunctionPackages, TestRenderActiveActive, TestCrossplaneCore",
	"active-active/clusters.yaml":    "TestManagedResourceExamples, TestRenderActiveActive, TestExamplesOnAPIServer, TestCrossplaneCore",
	"remote-dr/definition.yaml":      "TestCompositions, TestXRs",
	"remote-dr/composition.yaml":     "TestCompositions, TestRenderRemoteDR",
	"remote-dr/xr.yaml":              "TestXRs, TestRenderRemoteDR",
	"remote-dr/functions.yaml":       "TestFunctionPackages, TestRenderRemoteDR",
	"remote-dr/clusters.yaml":        "TestManagedResourceExamples, TestRenderRemoteDR, TestExamplesOnAPIServer",
}

func TestEveryExampleFileIsTested(t *testing.T) {
	var found []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		found = append(found, filepath.ToSlash(path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if _, ok := exercised[f]; !ok {
			t.Errorf("%s is not read by any test: add a test and list it in exercised", f)
		}
	}
	for f := range exercised {
		if !slices.Contains(found, f) {
			t.Errorf("exercised lists %s, which does not exist", f)
		}
	}
}

func TestReadmeNamesEveryFile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for f := range exercised {
		if f != "README.md" && !bytes.Contains(readme, []byte(f)) {
			t.Errorf("README.md does not mention %s", f)
		}
	}
}

// readDocs reads every YAML document of a file; each must be an object
// with apiVersion, kind and metadata.name (composed resources that
// `crossplane render` prints may have a generateName instead).
func readDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := parseDocs(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return docs
}

func parseDocs(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		chunk, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj := map[string]any{}
		if err := yaml.UnmarshalStrict(chunk, &obj); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || (u.GetName() == "" && u.GetGenerateName() == "") {
			return nil, fmt.Errorf("document %d: apiVersion, kind and metadata.name (or generateName) are required", i)
		}
		out = append(out, u)
	}
}

func readOne(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	docs := readDocs(t, path)
	if len(docs) != 1 {
		t.Fatalf("%s: want one document, got %d", path, len(docs))
	}
	return docs[0]
}

func TestExamplesParse(t *testing.T) {
	for f := range exercised {
		if strings.HasSuffix(f, ".yaml") {
			if docs := readDocs(t, f); len(docs) == 0 {
				t.Errorf("%s has no documents", f)
			}
		}
	}
}

// kindSchema is a kind's schema and scope.
type kindSchema struct {
	objectSchema
	namespaced bool
}

// providerSchemas indexes the provider's CRDs (package/crds) by
// group/version/kind. A Manifest's embedded template is resolved against
// the Go type of a Deployment, the only kind the examples embed.
func providerSchemas(t *testing.T) map[schema.GroupVersionKind]kindSchema {
	t.Helper()
	defs, err := crds.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[schema.GroupVersionKind]kindSchema{}
	for _, d := range defs {
		addSchemas(t, out, d.Object)
	}
	manifest := schema.GroupVersionKind{Group: "fleet.m.flotilla.io", Version: "v1alpha1", Kind: "Manifest"}
	ks, ok := out[manifest]
	if !ok {
		t.Fatalf("package/crds has no %s", manifest)
	}
	ks.embedded = map[string]reflect.Type{"spec.forProvider.manifest": reflect.TypeFor[appsv1.Deployment]()}
	out[manifest] = ks
	return out
}

// addSchemas adds every version of a CRD or an XRD to out.
func addSchemas(t *testing.T, out map[schema.GroupVersionKind]kindSchema, def map[string]any) {
	t.Helper()
	group, _, _ := unstructured.NestedString(def, "spec", "group")
	kind, _, _ := unstructured.NestedString(def, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(def, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(def, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(vm, "name")
		s, ok, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		if !ok {
			t.Fatalf("%s/%s %s has no openAPIV3Schema", group, name, kind)
		}
		out[schema.GroupVersionKind{Group: group, Version: name, Kind: kind}] = kindSchema{
			objectSchema: objectSchema{openAPI: s},
			namespaced:   scope == "Namespaced",
		}
	}
}

// checkObject resolves every field of obj in its kind's schema and checks
// the values' types.
func checkObject(obj map[string]any, ks kindSchema, skip ...string) []error {
	leaves := map[string]leaf{}
	leafPaths(obj, nil, leaves)
	var errs []error
	for _, p := range sortedKeys(leaves) {
		if slices.ContainsFunc(skip, func(s string) bool { return p == s || strings.HasPrefix(p, s+".") }) {
			continue
		}
		l := leaves[p]
		typ, err := ks.resolve(l.segs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !compatible(typ, l.typ) {
			errs = append(errs, fmt.Errorf("%s: the schema wants %s, the value is %s", p, typ, l.typ))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestManagedResourceExamples(t *testing.T) {
	schemas := providerSchemas(t)
	for _, f := range []string{"setup/providerconfig.yaml", "active-active/clusters.yaml", "remote-dr/clusters.yaml"} {
		for _, doc := range readDocs(t, f) {
			gvk := doc.GroupVersionKind()
			ks, ok := schemas[gvk]
			if !ok {
				t.Errorf("%s: %s %s: no such kind in package/crds", f, gvk, doc.GetName())
				continue
			}
			if ks.namespaced != (doc.GetNamespace() != "") {
				t.Errorf("%s: %s %s: namespaced is %v but metadata.namespace is %q", f, gvk.Kind, doc.GetName(), ks.namespaced, doc.GetNamespace())
			}
			for _, err := range checkObject(doc.Object, ks, "apiVersion", "kind") {
				t.Errorf("%s: %s %s: %v", f, gvk.Kind, doc.GetName(), err)
			}
		}
	}
}

// pinnedPackage matches a package reference pinned to a release tag.
var pinnedPackage = regexp.MustCompile(`^xpkg\.crossplane\.io/crossplane-contrib/function-patch-and-transform:(v\d+\.\d+\.\d+)$`)

func TestFunctionPackages(t *testing.T) {
	setup := map[string]string{}
	for _, doc := range readDocs(t, "setup/provider.yaml") {
		if doc.GetAPIVersion() != "pkg.crossplane.io/v1" || (doc.GetKind() != "Provider" && doc.GetKind() != "Function") {
			t.Errorf("setup/provider.yaml: %s %s is not a pkg.crossplane.io/v1 Provider or Function", doc.GetAPIVersion(), doc.GetKind())
		}
		pkg, _, _ := unstructured.NestedString(doc.Object, "spec", "package")
		if pkg == "" {
			t.Errorf("setup/provider.yaml: %s %s has no spec.package", doc.GetKind(), doc.GetName())
		}
		if doc.GetKind() == "Function" {
			setup[doc.GetName()] = pkg
		}
	}
	toolsVersion := toolsModuleVersion(t, "github.com/crossplane-contrib/function-patch-and-transform")
	for app := range apps {
		f := filepath.Join(app, "functions.yaml")
		fns := functions(t, f)
		if !reflect.DeepEqual(fns, setup) {
			t.Errorf("%s declares %v, setup/provider.yaml installs %v", f, fns, setup)
		}
		for name, pkg := range fns {
			m := pinnedPackage.FindStringSubmatch(pkg)
			if m == nil {
				t.Errorf("%s: Function %s: package %q is not function-patch-and-transform pinned to a release", f, name, pkg)
				continue
			}
			if m[1] != toolsVersion {
				t.Errorf("%s: Function %s is %s, but the render tests build %s (tools/crossplane/go.mod)", f, name, m[1], toolsVersion)
			}
		}
	}
}

// functions reads a functions.yaml: Function name → package.
func functions(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, doc := range readDocs(t, path) {
		if doc.GetAPIVersion() != "pkg.crossplane.io/v1" || doc.GetKind() != "Function" {
			t.Errorf("%s: %s %s is not a pkg.crossplane.io/v1 Function", path, doc.GetAPIVersion(), doc.GetKind())
			continue
		}
		out[doc.GetName()], _, _ = unstructured.NestedString(doc.Object, "spec", "package")
	}
	return out
}

// toolsModuleVersion is the version tools/crossplane/go.mod requires of mod.
func toolsModuleVersion(t *testing.T, mod string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "tools", "crossplane", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(mod) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("tools/crossplane/go.mod does not require %s", mod)
	}
	return string(m[1])
}
