//go:build linux

package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestKubectlFlotillaKarmadaClusters: on a host whose control plane serves
// Karmada's groups (cluster.karmada.io only), the plugin finds the members
// among the cluster.karmada.io Clusters, skipping Pull ones as it does in
// flotilla's groups; on a host serving neither family it says so, naming
// both groups.
func TestKubectlFlotillaKarmadaClusters(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	hub := plainClient(t, host.RESTConfig())
	o := getOptions{timeout: 10 * time.Second, stderr: &bytes.Buffer{}}

	_, err := o.clusterNames(host.RESTConfig())
	for _, want := range []string{"clusters.cluster.flotilla.io", "clusters.cluster.karmada.io"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("on a host serving no Clusters: %v, want an error naming %s", err, want)
		}
	}

	crd := &apiextensionsv1.CustomResourceDefinition{}
	testkit.MustYAML(t, crd, `
metadata: {name: clusters.cluster.karmada.io}
spec:
  group: cluster.karmada.io
  names: {kind: Cluster, listKind: ClusterList, plural: clusters, singular: cluster}
  scope: Cluster
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)
	testkit.MustCreate(t, hub, crd)
	for name, mode := range map[string]string{"west": "Push", "east": "Push", "edge": "Pull"} {
		cl := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"syncMode": mode}}}
		cl.SetAPIVersion("cluster.karmada.io/v1alpha1")
		cl.SetKind("Cluster")
		cl.SetName(name)
		waitFor(t, "create cluster.karmada.io Cluster "+name, func() (bool, string) {
			err := hub.Create(t.Context(), cl.DeepCopy())
			return err == nil, errString(err)
		})
	}
	names, err := o.clusterNames(host.RESTConfig())
	if err != nil || !slices.Equal(names, []string{"east", "west"}) {
		t.Errorf("clusters on a Karmada-mode host: %v, %v; want [east west]", names, err)
	}
	if got := o.stderr.(*bytes.Buffer).String(); !strings.Contains(got, "cluster edge skipped: Pull mode") {
		t.Errorf("the Pull cluster is not named as skipped: %q", got)
	}

	// The Cluster verbs write the family the host serves.
	if code, out, errOut := pluginRun(host, "", "cordon", "west"); code != 0 {
		t.Fatalf("cordon on a Karmada-mode host: exit %d: %s%s", code, out, errOut)
	}
	west := &unstructured.Unstructured{}
	west.SetAPIVersion("cluster.karmada.io/v1alpha1")
	west.SetKind("Cluster")
	if err := hub.Get(t.Context(), client.ObjectKey{Name: "west"}, west); err != nil {
		t.Fatal(err)
	}
	taints, _, _ := unstructured.NestedSlice(west.Object, "spec", "taints")
	if len(taints) != 1 || taints[0].(map[string]any)["key"] != api.TaintClusterUnschedulable {
		t.Errorf("cluster.karmada.io Cluster west after cordon: taints %v, want %s", taints, api.TaintClusterUnschedulable)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
