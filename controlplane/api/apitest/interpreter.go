package apitest

import (
	"os"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ReadInterpreters decodes the ResourceInterpreterCustomizations of a YAML
// file, such as flotilla's own in examples/interpreter, failing the test
// when the file cannot be read or decoded.
func ReadInterpreters(t testing.TB, path string) []api.ResourceInterpreterCustomization {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.Decode(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Interpreters) == 0 {
		t.Fatalf("%s holds no ResourceInterpreterCustomization", path)
	}
	return b.Interpreters
}
