package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAsDeclared: with the retain-replicas label the recorded replicas
// replace the member's in the managed view, and nothing else changes;
// without it the view is left as it is.
func TestAsDeclared(t *testing.T) {
	const live = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`
	const labelled = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"resourcetemplate.karmada.io/retain-replicas":"true"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`
	const plain = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":2}}`
	const labelledNoReplicas = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"resourcetemplate.karmada.io/retain-replicas":"true"}},"spec":{}}`
	for _, tc := range []struct {
		name, desired, want string
	}{
		{
			name:    "retained replicas read as recorded, image drift kept",
			desired: labelled,
			want:    `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`,
		},
		{name: "no label: the member's replicas are drift", desired: plain, want: live},
		{name: "label without replicas: nothing retained", desired: labelledNoReplicas, want: live},
	} {
		t.Run(tc.name, func(t *testing.T) {
			managed := obj(t, live)
			got := AsDeclared(obj(t, tc.desired), managed, obj(t, live))
			if d := cmp.Diff(obj(t, tc.want).Object, got.Object); d != "" {
				t.Errorf("view (-want +got):\n%s", d)
			}
			if d := cmp.Diff(obj(t, live).Object, managed.Object); d != "" {
				t.Errorf("managed was changed (-before +after):\n%s", d)
			}
		})
	}
}
