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

// RolloutCRDYAML is a stand-in for Argo's Rollout CustomResourceDefinition
// (argoproj.io/v1alpha1 Rollout): namespaced, any fields, with a status
// subresource as Argo's has. Integration tests install it in the host and
// the members.
const RolloutCRDYAML = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.argoproj.io}
spec:
  group: argoproj.io
  scope: Namespaced
  names: {plural: rollouts, singular: rollout, kind: Rollout, listKind: RolloutList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
