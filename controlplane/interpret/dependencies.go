package interpret

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DependencyKinds are the kinds GetDependencies names, all in core/v1.
var DependencyKinds = []string{"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"}

// Dependency names an object in the template's namespace that a workload's
// pods use: a ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim.
type Dependency struct {
	// Kind is one of ConfigMap, Secret, ServiceAccount, PersistentVolumeClaim.
	Kind string
	// Namespace is the workload's namespace.
	Namespace string
	// Name is the referenced object's name.
	Name string
}

// GetDependencies lists, sorted and without repeats, what the pods of a
// workload template refer to, as Karmada's GetDependencies does for
// propagateDeps: volumes (including projected ones), env and envFrom of
// every container, image pull secrets, and a service account other than
// "default". An Ingress depends on its TLS Secrets (Karmada's
// getIngressDependencies). Other kinds without pods have none.
func GetDependencies(tmpl *unstructured.Unstructured) ([]Dependency, error) {
	if tmpl.GroupVersionKind().GroupKind() == ingressKind {
		return ingressDependencies(tmpl)
	}
	kind := Of(tmpl)
	if !kind.Dependencies {
		return nil, nil
	}
	spec, err := podSpecAt(tmpl, kind.PodSpec)
	if err != nil {
		return nil, err
	}
	return podDependencies(spec, tmpl.GetNamespace()), nil
}

// podDependencies lists, sorted and without repeats, what a pod spec in
// namespace ns refers to.
func podDependencies(spec *corev1.PodSpec, ns string) []Dependency {
	seen := map[Dependency]bool{}
	add := func(kind, name string) {
		if name != "" {
			seen[Dependency{Kind: kind, Namespace: ns, Name: name}] = true
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add("ConfigMap", v.ConfigMap.Name)
		case v.Secret != nil:
			add("Secret", v.Secret.SecretName)
		case v.PersistentVolumeClaim != nil:
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add("ConfigMap", s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add("Secret", s.Secret.Name)
				}
			}
		}
	}
	containers := append(append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...), ephemeral(spec)...)
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				add("ConfigMap", e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add("Secret", e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add("ConfigMap", r.Name)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add("Secret", r.Name)
			}
		}
	}
	for _, s := range spec.ImagePullSecrets {
		add("Secret", s.Name)
	}
	if spec.ServiceAccountName != "" && spec.ServiceAccountName != "default" {
		add("ServiceAccount", spec.ServiceAccountName)
	}
	return sortedDependencies(seen)
}

// ingressDependencies lists the Secrets an Ingress's spec.tls names, in
// its namespace.
func ingressDependencies(tmpl *unstructured.Unstructured) ([]Dependency, error) {
	tls, _, err := unstructured.NestedSlice(tmpl.Object, "spec", "tls")
	if err != nil {
		return nil, fmt.Errorf("spec.tls: %w", err)
	}
	seen := map[Dependency]bool{}
	for i, t := range tls {
		entry, ok := t.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.tls[%d]: not an object", i)
		}
		if name, _ := entry["secretName"].(string); name != "" {
			seen[Dependency{Kind: "Secret", Namespace: tmpl.GetNamespace(), Name: name}] = true
		}
	}
	return sortedDependencies(seen), nil
}

// sortedDependencies lists a set of dependencies by kind, then name.
func sortedDependencies(seen map[Dependency]bool) []Dependency {
	out := make([]Dependency, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func ephemeral(spec *corev1.PodSpec) []corev1.Container {
	out := make([]corev1.Container, 0, len(spec.EphemeralContainers))
	for _, c := range spec.EphemeralContainers {
		out = append(out, corev1.Container{Env: c.Env, EnvFrom: c.EnvFrom})
	}
	return out
}
