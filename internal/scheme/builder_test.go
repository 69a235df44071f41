package scheme

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestBuilderAddsRegisteredKinds checks that kinds registered after
// AddToScheme was taken as a method value (as the API packages' init
// functions do) still reach the scheme, with the group version's
// metav1 kinds.
func TestBuilderAddsRegisteredKinds(t *testing.T) {
	gv := schema.GroupVersion{Group: "test.flotilla.io", Version: "v1alpha1"}
	b := &Builder{GroupVersion: gv}
	addToScheme := b.AddToScheme
	b.Register(&metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{})
	s := runtime.NewScheme()
	if err := addToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"PartialObjectMetadata", "PartialObjectMetadataList", "ListOptions", "DeleteOptions", "WatchEvent"} {
		if !s.Recognizes(gv.WithKind(kind)) {
			t.Errorf("scheme does not recognize %s", gv.WithKind(kind))
		}
	}
	if s.Recognizes(gv.WithKind("ConfigMap")) {
		t.Error("scheme recognizes a kind never registered")
	}
}
