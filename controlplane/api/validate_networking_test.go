package api

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateMultiClusterService(t *testing.T) {
	mcs := func(ns string, spec MultiClusterServiceSpec) *MultiClusterService {
		return &MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: spec}
	}
	cross := []ExposureType{ExposureTypeCrossCluster}
	for _, tc := range []struct {
		name string
		in   *MultiClusterService
		want []string // substrings of the errors, in order; none when valid
	}{
		{"cross cluster, all clusters", mcs("shop", MultiClusterServiceSpec{Types: cross}), nil},
		{"cross cluster, listed clusters", mcs("shop", MultiClusterServiceSpec{Types: cross,
			ProviderClusters: []ClusterSelector{{Name: "a"}, {Name: "b"}}, ConsumerClusters: []ClusterSelector{{Name: "c"}}}), nil},
		{"load balancer refused by name", mcs("shop", MultiClusterServiceSpec{Types: []ExposureType{ExposureTypeLoadBalancer}}),
			[]string{"spec.types[0]: Forbidden: LoadBalancer is not served"}},
		{"load balancer beside cross cluster", mcs("shop", MultiClusterServiceSpec{Types: []ExposureType{ExposureTypeCrossCluster, ExposureTypeLoadBalancer}}),
			[]string{"spec.types[1]: Forbidden: LoadBalancer"}},
		{"unknown type", mcs("shop", MultiClusterServiceSpec{Types: []ExposureType{"NodePort"}}), []string{`spec.types[0]: Unsupported value: "NodePort"`}},
		{"no types", mcs("shop", MultiClusterServiceSpec{}), []string{"spec.types: Required"}},
		{"duplicate type", mcs("shop", MultiClusterServiceSpec{Types: []ExposureType{ExposureTypeCrossCluster, ExposureTypeCrossCluster}}), []string{"spec.types[1]: Duplicate"}},
		{"no namespace", mcs("", MultiClusterServiceSpec{Types: cross}), []string{"metadata.namespace: Required"}},
		{"bad and repeated cluster names", mcs("shop", MultiClusterServiceSpec{Types: cross,
			ProviderClusters: []ClusterSelector{{Name: ""}, {Name: "Bad_Name"}}, ConsumerClusters: []ClusterSelector{{Name: "c"}, {Name: "c"}}}),
			[]string{"spec.providerClusters[0].name: Required", `spec.providerClusters[1].name: Invalid value: "Bad_Name"`, `spec.consumerClusters[1].name: Duplicate value: "c"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateMultiClusterService(tc.in)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors = %v, want %d matching %q", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}
