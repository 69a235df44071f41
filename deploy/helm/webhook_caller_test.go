package helm

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestChartWebhookCallerChecks: the chart admits to the webhook port only
// the kube-apiserver's source given in the values (the metrics and health
// ports stay open), hands the replicas the CA of the apiserver's webhook
// client certificate from a ConfigMap, and turns the check off only when
// told to.
func TestChartWebhookCallerChecks(t *testing.T) {
	ca := testkit.NewClientCA(t, "webhook-client-ca")
	objs := renderChart(t, releaseName, append(hostValues(t, ca),
		"--set-json", `webhook.networkPolicy.apiserver.namespaceSelector={"kubernetes.io/metadata.name":"kube-system"}`,
		"--set-json", `webhook.networkPolicy.apiserver.podSelector={"component":"kube-apiserver"}`,
		"--set-json", `webhook.clientAuth.allowedNames=["kube-apiserver-webhook-client","apiserver-2"]`)...)

	np := into[networkingv1.NetworkPolicy](t, one(t, objs, "NetworkPolicy"))
	d := into[appsv1.Deployment](t, one(t, objs, "Deployment"))
	if diff := cmp.Diff(d.Spec.Selector.MatchLabels, np.Spec.PodSelector.MatchLabels); diff != "" {
		t.Errorf("NetworkPolicy podSelector (-Deployment +policy):\n%s", diff)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes %v, want Ingress only", np.Spec.PolicyTypes)
	}
	port := func(name string) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString(name))}
	}
	want := []networkingv1.NetworkPolicyIngressRule{
		{Ports: []networkingv1.NetworkPolicyPort{port("webhook")}, From: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: apiserverCIDR}},
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"component": "kube-apiserver"}}},
		}},
		{Ports: []networkingv1.NetworkPolicyPort{port("metrics"), port("health")}},
	}
	if diff := cmp.Diff(want, np.Spec.Ingress); diff != "" {
		t.Errorf("NetworkPolicy ingress (-want +got):\n%s", diff)
	}
	// Every port the pod listens on is named by a rule, so none is closed by accident.
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		if !slices.ContainsFunc(np.Spec.Ingress, func(r networkingv1.NetworkPolicyIngressRule) bool {
			return slices.ContainsFunc(r.Ports, func(pp networkingv1.NetworkPolicyPort) bool { return pp.Port.StrVal == p.Name })
		}) {
			t.Errorf("container port %s is in no rule of the NetworkPolicy", p.Name)
		}
	}

	cm := into[corev1.ConfigMap](t, one(t, objs, "ConfigMap"))
	if strings.TrimSpace(cm.Data["ca.crt"]) != strings.TrimSpace(string(ca.PEM)) {
		t.Errorf("ConfigMap %s ca.crt is not the given CA bundle:\n%s", cm.Name, cm.Data["ca.crt"])
	}
	pod := d.Spec.Template.Spec
	args := pod.Containers[0].Args
	caPath, _ := flagValue(args, "webhook-client-ca")
	names, _ := flagValue(args, "webhook-client-names")
	if names != "kube-apiserver-webhook-client,apiserver-2" {
		t.Errorf("--webhook-client-names = %q, want the allowed names", names)
	}
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Name && strings.HasPrefix(caPath, m.MountPath+"/") {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("--webhook-client-ca=%s is not in a mount of the ConfigMap %s", caPath, cm.Name)
	}

	// An existing ConfigMap is mounted instead of the chart's.
	existing := renderChart(t, releaseName, "--set", "webhook.clientAuth.caConfigMap=apiserver-webhook-ca",
		"--set", "webhook.networkPolicy.apiserver.cidrs={"+apiserverCIDR+"}")
	if n := len(pick(existing, "ConfigMap")); n != 0 {
		t.Errorf("with caConfigMap the chart renders %d ConfigMaps", n)
	}
	ed := into[appsv1.Deployment](t, one(t, existing, "Deployment"))
	if !slices.ContainsFunc(ed.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.ConfigMap != nil && v.ConfigMap.Name == "apiserver-webhook-ca"
	}) {
		t.Errorf("caConfigMap apiserver-webhook-ca is not mounted")
	}

	// Turned off by name, the check is off in the process too; the
	// NetworkPolicy stays unless turned off as well.
	off := renderChart(t, releaseName, "--set", "webhook.clientAuth.enabled=false", "--set", "webhook.networkPolicy.enabled=false")
	oargs := into[appsv1.Deployment](t, one(t, off, "Deployment")).Spec.Template.Spec.Containers[0].Args
	if v, _ := flagValue(oargs, "webhook-client-auth"); v != "false" {
		t.Errorf("clientAuth.enabled=false: --webhook-client-auth = %q, want false", v)
	}
	if _, ok := flagValue(oargs, "webhook-client-ca"); ok || len(pick(off, "ConfigMap")) != 0 || len(pick(off, "NetworkPolicy")) != 0 {
		t.Errorf("clientAuth and networkPolicy off: still a client CA flag, ConfigMap or NetworkPolicy")
	}
}
