package testkit

import (
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// MustCreate creates obj through c and fails the test if it cannot.
func MustCreate(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// MustYAML decodes the YAML that format and args print into into, and fails
// the test if it does not decode.
func MustYAML(t testing.TB, into any, format string, args ...any) {
	t.Helper()
	if err := yaml.Unmarshal(fmt.Appendf(nil, format, args...), into); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the file's contents and fails the test if it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
