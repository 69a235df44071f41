package render

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// targets builds the scheduling result: name/replicas pairs in order.
func targets(pairs ...any) []Target {
	var out []Target
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Target{Cluster: apitest.MakeCluster(pairs[i].(string)).Obj(), Replicas: int32(pairs[i+1].(int))})
	}
	return out
}

// mustRender renders or fails the test.
func mustRender(t testing.TB, in Input) map[string]Work {
	t.Helper()
	works, err := Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return works
}

// divided is an Input with Divided scheduling in fleet "prod".
func divided(tmpl *unstructured.Unstructured, clusters []Target) Input {
	return Input{Template: tmpl, Clusters: clusters, Fleet: "prod", ReplicaScheduling: api.ReplicaSchedulingTypeDivided}
}

// field reads a field of a rendered object; absent reads as nil.
func field(t testing.TB, obj *unstructured.Unstructured, fields ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil {
		t.Fatalf("read %v: %v", fields, err)
	}
	return v
}
