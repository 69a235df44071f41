package interpret

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// GetReplicas returns the desired replica count of a template and what one
// replica requests: Karmada's GetReplicas. It reads spec.<ReplicaField> for
// the kinds with one (1 when unset: Deployment, ReplicaSet and StatefulSet
// replicas, a Job's parallelism), 1 for a bare Pod, and 0 with no
// requirements for every other kind.
func GetReplicas(tmpl *unstructured.Unstructured) (int32, *api.ReplicaRequirements, error) {
	kind := Of(tmpl)
	if !kind.HasReplicas() {
		return 0, nil, nil
	}
	replicas := int64(1)
	if field := kind.ReplicaField; field != "" {
		if v, found, err := unstructured.NestedFieldNoCopy(tmpl.Object, "spec", field); err != nil {
			return 0, nil, fmt.Errorf("spec.%s: %w", field, err)
		} else if found && v != nil {
			n, ok := toInt64(v)
			if !ok || n < 0 || n > 1<<31-1 {
				return 0, nil, fmt.Errorf("spec.%s: want a non-negative integer, got %v", field, v)
			}
			replicas = n
		}
	}
	spec, err := podSpecAt(tmpl, kind.PodSpec)
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
// A container's requests are its effective ones (see effectiveRequests).
func requirements(spec *corev1.PodSpec, namespace string) *api.ReplicaRequirements {
	total := corev1.ResourceList{}
	for i := range spec.Containers {
		addTo(total, effectiveRequests(&spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sidecars, effectiveRequests(c))
			addTo(total, effectiveRequests(c))
			continue
		}
		// A regular init container runs alone next to the sidecars started before it.
		need := corev1.ResourceList{}
		addTo(need, sidecars)
		addTo(need, effectiveRequests(c))
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

// effectiveRequests is what a container will request once its pod is
// created: a resource it limits without requesting is requested at its
// limit. Kubernetes defaults a pod's requests that way, and Karmada's
// AddPodTemplateRequest does the same before estimating, so a limits-only
// workload is placed by the room it will really take, not as if it took none.
func effectiveRequests(c *corev1.Container) corev1.ResourceList {
	if len(c.Resources.Limits) == 0 {
		return c.Resources.Requests
	}
	out := make(corev1.ResourceList, len(c.Resources.Limits)+len(c.Resources.Requests))
	for name, q := range c.Resources.Limits {
		out[name] = q
	}
	for name, q := range c.Resources.Requests {
		out[name] = q
	}
	return out
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

func joinPath(fields []string) string { return strings.Join(fields, ".") }
