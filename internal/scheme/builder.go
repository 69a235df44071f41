// Package scheme registers the kinds of flotilla's API packages with a
// runtime.Scheme. It stands in for controller-runtime's scheme.Builder,
// deprecated in v0.25 because API packages should depend on apimachinery
// alone; it imports nothing but apimachinery, so the API packages stay
// importable without a client library.
package scheme

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Builder collects the kinds of one group version, registered from the
// API package's init functions, and adds them to a scheme.
type Builder struct {
	// GroupVersion is the group version of every kind registered.
	GroupVersion schema.GroupVersion
	runtime.SchemeBuilder
}

// Register adds kinds (each object and its list) to those AddToScheme adds.
func (b *Builder) Register(objects ...runtime.Object) *Builder {
	b.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(b.GroupVersion, objects...)
		return nil
	})
	return b
}

// AddToScheme adds the registered kinds to s, with the options, status
// and watch-event types every group version of an apiserver has.
func (b *Builder) AddToScheme(s *runtime.Scheme) error {
	metav1.AddToGroupVersion(s, b.GroupVersion)
	return b.SchemeBuilder.AddToScheme(s)
}
