package cli

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
)

func pluginPromote(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("promote", stderr)
	o := getOptions{stderr: stderr}
	o.hostFlags(fs)
	o.memberFlags(fs, "the member `name` where the object runs (required)")
	namespacedPolicy := fs.Bool("namespaced-policy", false, "make a PropagationPolicy in the object's namespace rather than a ClusterPropagationPolicy "+
		"(it adopts the member's object only if the control plane runs with --allow-namespaced-overwrite)")
	pos, _, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 2 || o.clusters == "" || strings.Contains(o.clusters, ",") {
		fmt.Fprintln(stderr, "kubectl flotilla promote: name a resource, one object and its cluster with -C")
		return 2
	}
	policy, err := o.promote(pos[0], pos[1], *namespacedPolicy)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s %s/%s promoted from cluster %s: template and %s created on the host\n",
		pos[0], o.namespace, pos[1], o.clusters, policy)
	return 0
}

// promote takes a namespaced object running in a member under flotilla's
// management, as `karmadactl promote` does: it reads the object from the
// member through the proxy (as the user), creates a policy that places it
// on that cluster only with conflictResolution Overwrite, then the
// template, both on the host as the user. The execution then adopts the
// member's object in place (server-side apply over it, marked adopted), so
// it is never deleted and re-created there. A template that cannot be
// created takes its new policy with it.
func (o getOptions) promote(resource, name string, namespacedPolicy bool) (string, error) {
	host, err := o.hostConfig()
	if err != nil {
		return "", err
	}
	cluster := o.clusters
	cfg := memberConfig(host, cluster, o.timeout)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", err
	}
	if _, err := getRaw(hc, cfg.Host+"/version", "application/json"); err != nil {
		return "", fmt.Errorf("cluster %s: %w", cluster, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	gvr, namespaced, err := resolveResource(dc, resource)
	if err != nil {
		return "", fmt.Errorf("cluster %s: %w", cluster, err)
	}
	if !namespaced {
		return "", fmt.Errorf("cluster %s: %s %s is cluster-scoped: promote takes namespaced objects (a ClusterPropagationPolicy is not made)", cluster, gvr.GroupResource(), name)
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	body, err := getRaw(hc, cfg.Host+path.Join(p, "namespaces", o.namespace, gvr.Resource, name), "application/json")
	if err != nil {
		return "", fmt.Errorf("cluster %s: %s %s/%s: %w", cluster, gvr.GroupResource(), o.namespace, name, err)
	}
	var live unstructured.Unstructured
	if err := live.UnmarshalJSON(body); err != nil {
		return "", fmt.Errorf("cluster %s: decode: %w", cluster, err)
	}
	if ref := metav1.GetControllerOf(&live); ref != nil {
		return "", fmt.Errorf("cluster %s: %s %s/%s is controlled by %s %s: promote its owner", cluster, gvr.GroupResource(), o.namespace, name, ref.Kind, ref.Name)
	}
	template := promotedTemplate(&live)

	hostDC, err := dynamic.NewForConfig(host)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	spec := api.PropagationSpec{
		ResourceSelectors:  []api.ResourceSelector{{APIVersion: live.GetAPIVersion(), Kind: live.GetKind(), Namespace: o.namespace, Name: name}},
		Placement:          api.Placement{ClusterAffinity: &api.ClusterAffinity{ClusterNames: []string{cluster}}},
		ConflictResolution: api.ConflictOverwrite,
	}
	// A ClusterPropagationPolicy by default: the control plane lets a
	// namespaced policy's Overwrite adopt only with
	// --allow-namespaced-overwrite, since adoption takes over an object
	// someone else made; whoever may write cluster-wide policies may.
	g, err := hostGroups(ctx, hostDC)
	if err != nil {
		return "", err
	}
	policyGVR := hostResource(g, "policy", "ClusterPropagationPolicy", "clusterpropagationpolicies")
	var policy any = &policyv1.ClusterPropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyGVR.GroupVersion().String(), Kind: "ClusterPropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(o.namespace + "-" + name + "-" + live.GetKind())},
		Spec:       spec,
	}
	policyKind := "ClusterPropagationPolicy"
	var policies dynamic.ResourceInterface = hostDC.Resource(policyGVR)
	if namespacedPolicy {
		policyGVR = hostResource(g, "policy", "PropagationPolicy", "propagationpolicies")
		policy = &policyv1.PropagationPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyGVR.GroupVersion().String(), Kind: "PropagationPolicy"},
			ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: strings.ToLower(name + "-" + live.GetKind())},
			Spec:       spec,
		}
		policyKind = "PropagationPolicy"
		policies = hostDC.Resource(policyGVR).Namespace(o.namespace)
	}
	policyObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(policy)
	if err != nil {
		return "", err
	}
	policyU := &unstructured.Unstructured{Object: policyObj}
	policyName := policyKind + " " + policyU.GetName()
	if _, err := policies.Create(ctx, policyU, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("host: %s already exists: is %s %s/%s already promoted?", policyName, gvr.GroupResource(), o.namespace, name)
		}
		return "", fmt.Errorf("host: create %s: %w", policyName, err)
	}
	if _, err := hostDC.Resource(gvr).Namespace(o.namespace).Create(ctx, template, metav1.CreateOptions{}); err != nil {
		// Nothing half-done: the policy goes with the template it was for.
		if derr := policies.Delete(context.Background(), policyU.GetName(), metav1.DeleteOptions{}); derr != nil && !apierrors.IsNotFound(derr) {
			return "", fmt.Errorf("host: create %s %s/%s: %w (and %s is left: %v)", gvr.GroupResource(), o.namespace, name, err, policyName, derr)
		}
		return "", fmt.Errorf("host: create %s %s/%s: %w", gvr.GroupResource(), o.namespace, name, err)
	}
	return policyName, nil
}

// promotedTemplate is live as a template: without what the member's
// apiserver and controllers wrote (identity, versions, managed fields,
// status, the deployment controller's revision, a Service's allocated IPs)
// and without flotilla's cluster annotation.
func promotedTemplate(live *unstructured.Unstructured) *unstructured.Unstructured {
	t := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": live.GetAPIVersion(), "kind": live.GetKind(),
		"metadata": map[string]any{"name": live.GetName(), "namespace": live.GetNamespace()},
	}}
	for k, v := range live.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" && k != "status" {
			t.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	if l := live.GetLabels(); len(l) > 0 {
		t.SetLabels(l)
	}
	annotations := map[string]string{}
	for k, v := range live.GetAnnotations() {
		if k == ClusterAnnotation || k == "kubectl.kubernetes.io/last-applied-configuration" || strings.HasPrefix(k, "deployment.kubernetes.io/") {
			continue
		}
		annotations[k] = v
	}
	if len(annotations) > 0 {
		t.SetAnnotations(annotations)
	}
	if live.GetKind() == "Service" && live.GroupVersionKind().Group == "" {
		unstructured.RemoveNestedField(t.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(t.Object, "spec", "clusterIPs")
	}
	return t
}
