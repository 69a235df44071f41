package plan

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// podTemplatePath is where each workload kind keeps its pod template; a kind
// absent here has no replicas and goes whole to every selected cluster.
var podTemplatePath = map[string][]string{
	"apps/Deployment":  {"spec", "template"},
	"apps/ReplicaSet":  {"spec", "template"},
	"apps/StatefulSet": {"spec", "template"},
	"batch/Job":        {"spec", "template"},
}

// Replicas returns the desired replica count of a template and what one
// replica requests, as Karmada's default resource interpreter does:
// spec.replicas for Deployment, ReplicaSet and StatefulSet (1 when unset),
// spec.parallelism for Job (1 when unset), 1 for a bare Pod, and 0 with no
// requirements for every other kind.
func Replicas(tmpl *unstructured.Unstructured) (int32, *api.ReplicaRequirements, error) {
	gvk := tmpl.GroupVersionKind()
	key := gvk.Group + "/" + gvk.Kind
	if gvk.Group == "" && gvk.Kind == "Pod" {
		spec, err := podSpecAt(tmpl, []string{"spec"})
		if err != nil {
			return 0, nil, err
		}
		return 1, requirements(spec, tmpl.GetNamespace()), nil
	}
	tplPath, ok := podTemplatePath[key]
	if !ok {
		return 0, nil, nil
	}
	field := "replicas"
	if key == "batch/Job" {
		field = "parallelism"
	}
	replicas := int64(1)
	if v, found, err := unstructured.NestedFieldNoCopy(tmpl.Object, "spec", field); err != nil {
		return 0, nil, fmt.Errorf("spec.%s: %w", field, err)
	} else if found && v != nil {
		n, ok := toInt64(v)
		if !ok || n < 0 || n > 1<<31-1 {
			return 0, nil, fmt.Errorf("spec.%s: want a non-negative integer, got %v", field, v)
		}
		replicas = n
	}
	spec, err := podSpecAt(tmpl, append(append([]string{}, tplPath...), "spec"))
	if err != nil {
		return 0, nil, err
	}
	return int32(replicas), requirements(spec, tmpl.GetNamespace()), nil
}

func podSpecAt(tmpl *unstructured.Unstructured, fields []string) (*corev1.PodSpec, error) {
	raw, found, err := unstructured.NestedMap(tmpl.Object, fields...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", joinPath(fields), err)
	}
	spec := &corev1.PodSpec{}
	if !found {
		return spec, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, spec); err != nil {
		return nil, fmt.Errorf("%s: %w", joinPath(fields), err)
	}
	return spec, nil
}

// requirements is what one pod of spec requests: the sum over containers,
// raised to any larger init container (sidecars, restartPolicy Always, add
// to the sum), plus the pod overhead, with the node constraints of the pod.
func requirements(spec *corev1.PodSpec, namespace string) *api.ReplicaRequirements {
	total := corev1.ResourceList{}
	for _, c := range spec.Containers {
		addTo(total, c.Resources.Requests)
	}
	sidecars := corev1.ResourceList{}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sidecars, c.Resources.Requests)
			addTo(total, c.Resources.Requests)
			continue
		}
		// A regular init container runs alone next to the sidecars started before it.
		need := corev1.ResourceList{}
		addTo(need, sidecars)
		addTo(need, c.Resources.Requests)
		for name, q := range need {
			if cur, ok := total[name]; !ok || q.Cmp(cur) > 0 {
				total[name] = q.DeepCopy()
			}
		}
	}
	addTo(total, spec.Overhead)
	req := &api.ReplicaRequirements{Namespace: namespace, PriorityClassName: spec.PriorityClassName}
	if len(total) > 0 {
		req.ResourceRequest = total
	}
	if len(spec.NodeSelector) > 0 || len(spec.Tolerations) > 0 || hardAffinity(spec) != nil {
		req.NodeClaim = &api.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations, HardNodeAffinity: hardAffinity(spec)}
	}
	return req
}

func hardAffinity(spec *corev1.PodSpec) *corev1.NodeSelector {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
		return nil
	}
	return spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

func addTo(dst, src corev1.ResourceList) {
	for name, q := range src {
		sum, ok := dst[name]
		if !ok {
			sum = resource.Quantity{}
		}
		sum.Add(q)
		dst[name] = sum
	}
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

func joinPath(fields []string) string { return strings.Join(fields, ".") }
