package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		want                []diffLine
	}{
		{name: "equal", before: "a\nb\n", after: "a\nb\n"},
		{name: "one line changed in the middle", before: "a\nb\nc\n", after: "a\nB\nc\n", want: []diffLine{
			{"hunk", "@@ -1,3 +1,3 @@"}, {"same", " a"}, {"del", "-b"}, {"add", "+B"}, {"same", " c"},
		}},
		{name: "a line added at the end", before: "a\n", after: "a\nb\n", want: []diffLine{
			{"hunk", "@@ -1,1 +1,2 @@"}, {"same", " a"}, {"add", "+b"},
		}},
		{name: "a line removed at the start", before: "a\nb\n", after: "b\n", want: []diffLine{
			{"hunk", "@@ -1,2 +1,1 @@"}, {"del", "-a"}, {"same", " b"},
		}},
		{name: "far apart changes make two hunks with three lines of context",
			before: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", after: "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n", want: []diffLine{
				{"hunk", "@@ -1,4 +1,4 @@"}, {"del", "-1"}, {"add", "+X"}, {"same", " 2"}, {"same", " 3"}, {"same", " 4"},
				{"hunk", "@@ -9,4 +9,4 @@"}, {"same", " 9"}, {"same", " 10"}, {"same", " 11"}, {"del", "-12"}, {"add", "+Y"},
			}},
		{name: "no final newline", before: "a", after: "b", want: []diffLine{
			{"hunk", "@@ -1,1 +1,1 @@"}, {"del", "-a"}, {"add", "+b"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lineDiff(tc.before, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDiffsOf: each placed cluster's Work against the template, without
// server fields or flotilla's own keys; a cluster without a Work and a
// Work whose manifest is not the template's say so.
func TestDiffsOf(t *testing.T) {
	tmpl := obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"a","uid":"u1","resourceVersion":"9","labels":{"app":"web"}},
		"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}},"status":{"readyReplicas":3}}`)
	rendered := func(replicas int, image string) runtime.RawExtension {
		return runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"a",
			"labels":{"app":"web","flotilla.io/fleet":"f","app.kubernetes.io/managed-by":"flotilla"},"annotations":{"flotilla.io/rendered-hash":"h"}},
			"spec":{"replicas":` + string(rune('0'+replicas)) + `,"template":{"spec":{"containers":[{"name":"c","image":"` + image + `"}]}}}}`)}
	}
	work := func(cluster string, m runtime.RawExtension) workv1.Work {
		w := workv1.Work{}
		w.Namespace, w.Name = ExecutionNamespacePrefix()+cluster, "web-1"
		w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: m}}
		return w
	}
	works := []workv1.Work{
		work("east", rendered(3, "nginx:1")),
		work("west", rendered(1, "nginx:2")),
		work("north", runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`)}),
	}
	got := diffsOf(tmpl, works, []string{"east", "west", "south", "north"}, map[string]string{"east": "c0"})
	if len(got) != 4 {
		t.Fatalf("%d diffs, want 4: %+v", len(got), got)
	}
	if got[0].Cluster != "east" || got[0].Lines != nil || got[0].Error != "" || got[0].Color != "c0" {
		t.Errorf("east renders the template unchanged (flotilla's keys, uid, status left out): %+v", got[0])
	}
	west := got[1]
	var changed []string
	for _, l := range west.Lines {
		if l.Kind == "add" || l.Kind == "del" {
			changed = append(changed, l.Text)
		}
	}
	want := []string{"-  replicas: 3", "+  replicas: 1", "-      - image: nginx:1", "+      - image: nginx:2"}
	if diff := cmp.Diff(want, changed); diff != "" || west.Added != 2 || west.Removed != 2 {
		t.Errorf("west: +%d -%d, changed lines (-want +got):\n%s", west.Added, west.Removed, diff)
	}
	if got[2].Cluster != "south" || got[2].Error != "no Work for this cluster yet" {
		t.Errorf("south: %+v", got[2])
	}
	if got[3].Cluster != "north" || !strings.Contains(got[3].Error, "no manifest of Deployment web") {
		t.Errorf("north: %+v", got[3])
	}
}

// TestWorkKeysAreTheControlPlanes: the dashboard may not import the
// controllers' shared layer, so it spells out the keys it reads; they must
// be the ones the control plane writes.
func TestWorkKeysAreTheControlPlanes(t *testing.T) {
	if LabelBindingPermanentID != shared.LabelBindingPermanentID || ExecutionNamespacePrefix() != shared.ExecutionNamespacePrefix() ||
		ClusterLeaseNamespace() != shared.ClusterLeaseNamespace() {
		t.Error("the dashboard's Work label, execution namespace prefix or Lease namespace differ from the control plane's")
	}
}
