package execution

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// obj parses a JSON object for the managed view tables.
func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return u
}

// entry is a managedFields entry with FieldsV1 given as JSON.
func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func TestManagedView(t *testing.T) {
	const apply, update = metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	cases := map[string]struct {
		live    string
		entries []metav1.ManagedFieldsEntry
		desired string // empty: no desired object
		want    string
	}{
		"keyed list items by key, defaulted fields left out": {
			live: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u"},"spec":{"dnsPolicy":"ClusterFirst","containers":[
				{"name":"app","image":"nginx","imagePullPolicy":"Always","terminationMessagePath":"/dev/termination-log"},
				{"name":"sidecar","image":"envoy"}]}}`,
			entries: []metav1.ManagedFieldsEntry{
				entry("flotilla", apply, `{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}`),
				entry("injector", update, `{"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}`),
			},
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`,
		},
		"set items by value, atomic lists whole": {
			live: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","finalizers":["a","b"]},"spec":{"containers":[{"name":"app","args":["-v","-x"]}]}}`,
			entries: []metav1.ManagedFieldsEntry{
				entry("flotilla", apply, `{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:args":{},"f:name":{}}}}}`),
			},
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","finalizers":["a"]},"spec":{"containers":[{"name":"app","args":["-v","-x"]}]}}`,
		},
		"a map owned with children keeps only those": {
			live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"mine":"1","theirs":"2"}}}`,
			entries: []metav1.ManagedFieldsEntry{
				entry("flotilla", apply, `{"f:metadata":{"f:labels":{".":{},"f:mine":{}}}}`),
				entry("flotilla", update, `{"f:metadata":{"f:labels":{"f:theirs":{}}}}`),
			},
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"mine":"1"}}}`,
		},
		"fields another manager took show when declared": {
			live: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":5,"paused":false,"template":{"spec":{"containers":[{"name":"app","image":"drift","ports":[{"containerPort":80,"protocol":"TCP"}]}]}}}}`,
			entries: []metav1.ManagedFieldsEntry{
				entry("flotilla", apply, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`),
				entry("kubectl-edit", update, `{"f:spec":{"f:replicas":{},"f:paused":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`),
			},
			desired: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"nginx","ports":[{"containerPort":80}]}]}}}}`,
			want:    `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"app","image":"drift","ports":[{"containerPort":80}]}]}}}}`,
		},
		"a declared field removed from the live object stays absent": {
			live:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`,
			entries: []metav1.ManagedFieldsEntry{entry("flotilla", apply, `{"f:data":{"f:a":{}}}`)},
			desired: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","b":"2"}}`,
			want:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`,
		},
		"no entry of the manager and nothing declared: identity only": {
			live:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"a":"1"}}`,
			entries: []metav1.ManagedFieldsEntry{entry("kubectl", update, `{"f:data":{"f:a":{}}}`)},
			want:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			live := obj(t, tc.live)
			live.SetManagedFields(tc.entries)
			var desired *unstructured.Unstructured
			if tc.desired != "" {
				desired = obj(t, tc.desired)
			}
			got, err := ManagedView(live, "flotilla", desired)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obj(t, tc.want).Object, got.Object); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagedViewRejectsBadFields(t *testing.T) {
	live := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{entry("flotilla", metav1.ManagedFieldsOperationApply, `{"f:data":{"nocolon":{}}}`)})
	if _, err := ManagedView(live, "flotilla", nil); err == nil {
		t.Fatal("a FieldsV1 that does not parse gave no error")
	}
}

func TestManagedViewDoesNotAliasLive(t *testing.T) {
	live := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1"}},"data":{"k":"v"}}`)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{entry("flotilla", metav1.ManagedFieldsOperationApply, `{"f:data":{}}`)})
	before, _ := json.Marshal(live.Object)
	view, err := ManagedView(live, "flotilla", nil)
	if err != nil {
		t.Fatal(err)
	}
	view.Object["data"].(map[string]any)["k"] = "changed"
	view.SetName("other")
	after, _ := json.Marshal(live.Object)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("changing the view changed the live object (-before +after):\n%s", diff)
	}
}
