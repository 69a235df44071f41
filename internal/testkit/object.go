package testkit

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/util/retry"
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

// MustUpdate reads the object at key from c into obj, applies edit (which
// changes obj, usually through a closure over it) and writes obj back, again
// from a fresh read on a conflict: the controllers under test write the same
// objects (status, finalizers, annotations) while a test edits them, so a
// bare read-then-update fails at random. edit must be repeatable.
func MustUpdate(t testing.TB, c client.Client, key client.ObjectKey, obj client.Object, edit func(), opts ...client.UpdateOption) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(t.Context(), key, obj); err != nil {
			return err
		}
		edit()
		return c.Update(t.Context(), obj, opts...)
	})
	if err != nil {
		t.Fatalf("update %T %s: %v", obj, key, err)
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
