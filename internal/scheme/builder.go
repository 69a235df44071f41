// Package scheme registers the kinds of flotilla's API packages with a
// runtime.Scheme. It stands in for controller-runtime's scheme.Builder,
// deprecated in v0.25 because API packages should depend on apimachinery
// alone; it imports nothing but apimachinery, so the API packages stay
// importable without a client library.
package scheme

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Builder collects the kinds of one API package, registered from its init
// functions, and adds them to a scheme under GroupVersion. The group
// version is read when AddToScheme runs, not when a kind is registered:
// the control plane chooses the API groups it serves (flotilla's or
// Karmada's) at start, for the same Go types.
type Builder struct {
	// GroupVersion is the group version of every kind registered, unless
	// KindVersions names another version for it.
	GroupVersion schema.GroupVersion
	// KindVersions gives a kind (by its Go type name, which is its kind) a
	// version other than GroupVersion's, in the same group: Karmada serves
	// Work as work.karmada.io/v1alpha1 but ResourceBinding as v1alpha2.
	KindVersions map[string]string
	objects      []runtime.Object
}

// Register adds kinds (each object and its list) to those AddToScheme adds.
func (b *Builder) Register(objects ...runtime.Object) *Builder {
	b.objects = append(b.objects, objects...)
	return b
}

// AddToScheme adds the registered kinds to s, with the options, status
// and watch-event types every group version of an apiserver has.
func (b *Builder) AddToScheme(s *runtime.Scheme) error {
	added := map[schema.GroupVersion]bool{}
	for _, obj := range b.objects {
		kind := reflect.TypeOf(obj).Elem().Name()
		gv := b.groupVersionOf(kind)
		if !added[gv] {
			metav1.AddToGroupVersion(s, gv)
			added[gv] = true
		}
		s.AddKnownTypeWithName(gv.WithKind(kind), obj)
	}
	if !added[b.GroupVersion] {
		metav1.AddToGroupVersion(s, b.GroupVersion)
	}
	return nil
}

// groupVersionOf is the group version of kind: a list kind follows its
// item's version.
func (b *Builder) groupVersionOf(kind string) schema.GroupVersion {
	gv := b.GroupVersion
	item, _ := strings.CutSuffix(kind, "List")
	if v, ok := b.KindVersions[item]; ok {
		gv.Version = v
	}
	return gv
}
