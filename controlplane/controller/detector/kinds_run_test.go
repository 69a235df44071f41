package detector

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestGoneKinds(t *testing.T) {
	widget := servedKind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}}
	gadget := servedKind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}}
	deployment := servedKind{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, namespaced: true}
	active := map[schema.GroupKind]servedKind{}
	for _, s := range []servedKind{widget, gadget, deployment} {
		active[s.GVK.GroupKind()] = s
	}
	all := map[schema.GroupKind]bool{widget.GVK.GroupKind(): true, gadget.GVK.GroupKind(): true, deployment.GVK.GroupKind(): true}
	tests := []struct {
		name    string
		current map[schema.GroupKind]bool
		failed  map[schema.GroupVersion]error
		want    []schema.GroupKind
	}{
		{name: "all still served", current: all},
		{name: "a CRD deleted", current: map[schema.GroupKind]bool{deployment.GVK.GroupKind(): true, gadget.GVK.GroupKind(): true},
			want: []schema.GroupKind{widget.GVK.GroupKind()}},
		{name: "a group gone, in a stable order", current: map[schema.GroupKind]bool{deployment.GVK.GroupKind(): true},
			want: []schema.GroupKind{gadget.GVK.GroupKind(), widget.GVK.GroupKind()}},
		{name: "its group's discovery failed: kept", current: map[schema.GroupKind]bool{deployment.GVK.GroupKind(): true},
			failed: map[schema.GroupVersion]error{{Group: "example.com", Version: "v1"}: errors.New("503")}},
		{name: "another version's discovery failed: still gone", current: map[schema.GroupKind]bool{deployment.GVK.GroupKind(): true},
			failed: map[schema.GroupVersion]error{{Group: "example.com", Version: "v2"}: errors.New("503")},
			want:   []schema.GroupKind{gadget.GVK.GroupKind(), widget.GVK.GroupKind()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, goneKinds(active, tt.current, tt.failed)); diff != "" {
				t.Errorf("goneKinds (-want +got):\n%s", diff)
			}
		})
	}
}
