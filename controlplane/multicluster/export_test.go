package multicluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func memberService(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": "shop", "name": "web"},
		"spec":     spec,
	}}
}

func TestServiceOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec map[string]any
		want ExportedService
		why  string
	}{
		{name: "ports sorted, protocol defaulted", spec: map[string]any{"ports": []any{
			map[string]any{"name": "metrics", "port": int64(9090), "appProtocol": "http"},
			map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"},
		}}, want: ExportedService{Cluster: "east", Ports: []string{"http:80/TCP", "metrics:9090/TCP (http)"}}},
		{name: "headless", spec: map[string]any{"clusterIP": "None", "ports": []any{map[string]any{"port": int64(53), "protocol": "UDP"}}},
			want: ExportedService{Cluster: "east", Headless: true, Ports: []string{":53/UDP"}}},
		{name: "ExternalName", spec: map[string]any{"type": "ExternalName", "externalName": "db.example.com"},
			why: "cluster east: Service shop/web is of type ExternalName, which has no endpoints to export"},
		{name: "undecodable", spec: map[string]any{"ports": "80"}, why: "cluster east: Service shop/web does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := ServiceOf("east", memberService(tc.spec))
			if !strings.HasPrefix(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("why %q, want %q", why, tc.why)
			}
			if tc.why == "" {
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestExportConditions(t *testing.T) {
	http80 := []string{"http:80/TCP"}
	east := ExportedService{Cluster: "east", Ports: http80}
	for _, tc := range []struct {
		name      string
		exporting []ExportedService
		whyNot    []string
		want      []metav1.Condition
	}{
		{
			name:      "two clusters agree, a third runs no Service",
			exporting: []ExportedService{east, {Cluster: "west", Ports: http80}},
			whyNot:    []string{"cluster south runs no Service shop/web"},
			want: []metav1.Condition{
				{Type: "Valid", Status: "True", Reason: "Exported", Message: "exported from east, west; cluster south runs no Service shop/web"},
				{Type: "Conflict", Status: "False", Reason: "NoConflict", Message: "the exporting clusters' Services agree on their ports and type"},
			},
		},
		{
			name:   "no cluster exports",
			whyNot: []string{"cluster east is not ready, its endpoints are withdrawn"},
			want: []metav1.Condition{
				{Type: "Valid", Status: "False", Reason: "NoExportingCluster", Message: "exported from no cluster; cluster east is not ready, its endpoints are withdrawn"},
				{Type: "Conflict", Status: "False", Reason: "NoConflict", Message: "the exporting clusters' Services agree on their ports and type"},
			},
		},
		{
			name: "propagated nowhere",
			want: []metav1.Condition{
				{Type: "Valid", Status: "False", Reason: "NoExportingCluster", Message: "exported from no cluster: the export is propagated to no cluster"},
				{Type: "Conflict", Status: "False", Reason: "NoConflict", Message: "the exporting clusters' Services agree on their ports and type"},
			},
		},
		{
			name:      "ports differ, named by cluster",
			exporting: []ExportedService{east, {Cluster: "north", Ports: []string{"http:8080/TCP"}}, {Cluster: "west", Ports: http80}},
			want: []metav1.Condition{
				{Type: "Valid", Status: "True", Reason: "Exported", Message: "exported from east, north, west"},
				{Type: "Conflict", Status: "True", Reason: "PortConflict", Message: "ports differ: [http:80/TCP] in east, west; [http:8080/TCP] in north" +
					" (a consumer's derived Service takes its ports and type from its ServiceImport)"},
			},
		},
		{
			name:      "headless in one cluster only",
			exporting: []ExportedService{east, {Cluster: "west", Headless: true, Ports: http80}},
			want: []metav1.Condition{
				{Type: "Valid", Status: "True", Reason: "Exported", Message: "exported from east, west"},
				{Type: "Conflict", Status: "True", Reason: "TypeConflict", Message: "type differs: with a cluster IP in east; headless in west" +
					" (a consumer's derived Service takes its ports and type from its ServiceImport)"},
			},
		},
		{
			name:      "both differ: the port conflict is the reason",
			exporting: []ExportedService{east, {Cluster: "west", Headless: true}},
			want: []metav1.Condition{
				{Type: "Valid", Status: "True", Reason: "Exported", Message: "exported from east, west"},
				{Type: "Conflict", Status: "True", Reason: "PortConflict", Message: "ports differ: [http:80/TCP] in east; [] in west; type differs: with a cluster IP in east; headless in west" +
					" (a consumer's derived Service takes its ports and type from its ServiceImport)"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, ExportConditions(tc.exporting, tc.whyNot)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
