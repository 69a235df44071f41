package examples

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Binaries that `make tools` builds from tools/crossplane.
const (
	crossplaneBinary = "crossplane"
	functionBinary   = "function-patch-and-transform"
)

// resourceNameAnnotation names the Composition resource an object was
// composed from.
const resourceNameAnnotation = "crossplane.io/composition-resource-name"

// crossplaneTools returns the directory that holds the crossplane CLI and
// function-patch-and-transform (see testkit.CrossplaneTools).
func crossplaneTools(t *testing.T) string {
	t.Helper()
	return testkit.CrossplaneTools(t, filepath.Join("..", ".."), crossplaneBinary, functionBinary)
}

// startFunction runs function-patch-and-transform without TLS on a free
// loopback port until the test ends, and returns its address.
func startFunction(t *testing.T, tools string) string {
	t.Helper()
	addr := testkit.FreeAddr(t)
	p := startProcess(t, t.TempDir(), functionBinary, filepath.Join(tools, functionBinary), nil, "--insecure", "--address", addr)
	p.waitListening(t, addr)
	return addr
}

// rendered is the output of `crossplane render` for one app.
type rendered struct {
	// XR is the composite resource with the status the pipeline set.
	XR *unstructured.Unstructured
	// Composed are the composed resources by Composition resource name.
	Composed map[string]*unstructured.Unstructured
}

// render runs `crossplane render` for an app's XR, Composition and
// functions.yaml against the function at addr, with observed composed
// resources if any.
func render(t *testing.T, tools, addr, app string, observed ...*unstructured.Unstructured) rendered {
	t.Helper()
	args := []string{"render",
		"--xrd", filepath.Join(app, "definition.yaml"),
		"--function-annotations", "render.crossplane.io/runtime=Development",
		"--function-annotations", "render.crossplane.io/runtime-development-target=" + addr,
		"--timeout", "5m",
	}
	if len(observed) > 0 {
		var buf bytes.Buffer
		for _, o := range observed {
			data, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			buf.WriteString("---\n")
			buf.Write(data)
		}
		path := filepath.Join(t.TempDir(), "observed.yaml")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--observed-resources", path)
	}
	args = append(args, filepath.Join(app, "xr.yaml"), filepath.Join(app, "composition.yaml"), filepath.Join(app, "functions.yaml"))
	cmd := exec.CommandContext(t.Context(), filepath.Join(tools, crossplaneBinary), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("crossplane %v: %v\n%s", args, err, stderr.String())
	}
	docs, err := parseDocs(stdout.Bytes())
	if err != nil {
		t.Fatalf("parse crossplane render output: %v\n%s", err, stdout.String())
	}
	out := rendered{Composed: map[string]*unstructured.Unstructured{}}
	for _, d := range docs {
		name := d.GetAnnotations()[resourceNameAnnotation]
		switch {
		case d.GetKind() == apps[app]:
			out.XR = d
		case name != "":
			out.Composed[name] = d
		}
	}
	if out.XR == nil {
		t.Fatalf("crossplane render printed no %s:\n%s", apps[app], stdout.String())
	}
	return out
}

// composed returns the composed resource of a Composition resource name,
// checking its kind.
func (r rendered) composed(t *testing.T, name, kind string) *unstructured.Unstructured {
	t.Helper()
	u, ok := r.Composed[name]
	if !ok {
		t.Fatalf("render composed no resource %q (got %v)", name, sortedKeys(r.Composed))
	}
	if u.GroupVersionKind().Group != "fleet.m.flotilla.io" || u.GetKind() != kind {
		t.Fatalf("resource %q is %s, want fleet.m.flotilla.io %s", name, u.GroupVersionKind(), kind)
	}
	return u
}

// observe returns a copy of a composed resource as it would be observed
// with status.atProvider set.
func observe(t *testing.T, u *unstructured.Unstructured, atProvider map[string]any) *unstructured.Unstructured {
	t.Helper()
	o := u.DeepCopy()
	if o.GetName() == "" {
		o.SetName(o.GetGenerateName() + "observed")
	}
	if err := unstructured.SetNestedField(o.Object, atProvider, "status", "atProvider"); err != nil {
		t.Fatal(err)
	}
	return o
}

func nested(t *testing.T, u *unstructured.Unstructured, fields ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldCopy(u.Object, fields...)
	if err != nil || !ok {
		t.Fatalf("%s %s: no field %v (%v)", u.GetKind(), u.GetName(), fields, err)
	}
	return v
}

// asInt reads a JSON number of a rendered or planned object as an int64.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		return int64(n), n == float64(int64(n))
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	default:
		return 0, false
	}
}

// sameJSON compares two values as JSON, so that 1 read from YAML (float64)
// equals int64(1).
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
