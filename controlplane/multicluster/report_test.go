package multicluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestReportRoundTrip: what an agent reports of a member slice is read
// back by the host as that slice (what Collect keeps) and the Service it
// described; a report of another Service, not the agent's, or with an
// annotation that does not decode is refused, naming the cluster and the
// report.
func TestReportRoundTrip(t *testing.T) {
	svc := types.NamespacedName{Namespace: "shop", Name: "web"}
	member := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "web-a", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To("node-1"), TargetRef: nil}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	rs := ReportedService{Exported: true, Headless: true, Ports: []string{"metrics:9090/TCP", "http:80/TCP"}}
	report := Report("flotilla-mcs-edge", member, rs)
	if report.Namespace != "flotilla-mcs-edge" || report.Labels[discoveryv1.LabelManagedBy] != ReportedBy || Ours(report) {
		t.Fatalf("report %s/%s labels %v: want the report space, managed by %s, never taken for a collected slice", report.Namespace, report.Name, report.Labels, ReportedBy)
	}
	s, got, exported, why := FromReport("edge", svc, report)
	if why != "" {
		t.Fatal(why)
	}
	if why := ExportedSlice(svc, s); why != "" {
		t.Fatalf("the read-back slice is not exportable: %s", why)
	}
	if d := cmp.Diff(ExportedService{Cluster: "edge", Headless: true, Ports: []string{"http:80/TCP", "metrics:9090/TCP"}}, got); d != "" || !exported {
		t.Errorf("service (-want +got):\n%s exported %v", d, exported)
	}
	if s.Endpoints[0].NodeName != nil || !cmp.Equal(s.Endpoints[0].Addresses, []string{"10.0.0.1"}) {
		t.Errorf("endpoint %+v: want the address, no node name", s.Endpoints[0])
	}
	if !SameReport(report, Report("flotilla-mcs-edge", member, rs)) || SameReport(report, Report("flotilla-mcs-edge", member, ReportedService{Exported: false})) {
		t.Error("SameReport does not tell the Service's description apart")
	}
	for _, tc := range []struct {
		name   string
		change func(*discoveryv1.EndpointSlice)
		want   string
	}{
		{"another Service", func(r *discoveryv1.EndpointSlice) { r.Labels[LabelServiceName] = "db" }, "cluster edge: report flotilla-mcs-edge/shop.web-a-"},
		{"another namespace", func(r *discoveryv1.EndpointSlice) { r.Labels[LabelServiceNamespace] = "tenant-b" }, "is not a report of Service shop/web"},
		{"collected, not reported", func(r *discoveryv1.EndpointSlice) { r.Labels[discoveryv1.LabelManagedBy] = ManagedBy }, "is not a report of Service shop/web"},
		{"bad annotation", func(r *discoveryv1.EndpointSlice) { r.Annotations[AnnotationReportedService] = "{" }, "annotation mcs.flotilla.io/reported-service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := report.DeepCopy()
			tc.change(r)
			if _, _, _, why := FromReport("edge", svc, r); !strings.Contains(why, tc.want) {
				t.Errorf("why %q, want one containing %q", why, tc.want)
			}
		})
	}
}
