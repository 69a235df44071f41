package apitest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TemplateWrapper builds a resource template (a plain Kubernetes object) for
// tests, kueue style: MakeDeployment("web", "default").Replicas(3).Obj().
type TemplateWrapper struct {
	obj *unstructured.Unstructured
}

// defaultContainer is the name of the container the workload builders
// create; Image, Command and Args change it.
const defaultContainer = "app"

// MakeTemplate starts a template of any kind with only apiVersion, kind and
// name (and namespace when not empty).
func MakeTemplate(apiVersion, kind, name, namespace string) *TemplateWrapper {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetName(name)
	if namespace != "" {
		obj.SetNamespace(namespace)
	}
	return &TemplateWrapper{obj: obj}
}

// MakeDeployment starts an apps/v1 Deployment with one replica and a
// container "app" running "nginx".
func MakeDeployment(name, namespace string) *TemplateWrapper {
	return makeWorkload("apps/v1", "Deployment", name, namespace, podTemplatePath).Replicas(1)
}

// MakeStatefulSet starts an apps/v1 StatefulSet with one replica and a
// container "app" running "nginx".
func MakeStatefulSet(name, namespace string) *TemplateWrapper {
	return makeWorkload("apps/v1", "StatefulSet", name, namespace, podTemplatePath).
		Replicas(1).Set(name, "spec", "serviceName")
}

// MakeReplicaSet starts an apps/v1 ReplicaSet with one replica and a
// container "app" running "nginx".
func MakeReplicaSet(name, namespace string) *TemplateWrapper {
	return makeWorkload("apps/v1", "ReplicaSet", name, namespace, podTemplatePath).Replicas(1)
}

// MakeDaemonSet starts an apps/v1 DaemonSet with a container "app" running
// "nginx".
func MakeDaemonSet(name, namespace string) *TemplateWrapper {
	return makeWorkload("apps/v1", "DaemonSet", name, namespace, podTemplatePath)
}

// MakeJob starts a batch/v1 Job with parallelism 1 and a container "app"
// running "busybox". Add Completions for a fixed completion count.
func MakeJob(name, namespace string) *TemplateWrapper {
	w := MakeTemplate("batch/v1", "Job", name, namespace)
	w.setPodSpec(podTemplatePath, "busybox")
	return w.Set("Never", append(podTemplatePath, "restartPolicy")...).Parallelism(1)
}

// MakeCronJob starts a batch/v1 CronJob running every minute with a
// container "app" running "busybox".
func MakeCronJob(name, namespace string) *TemplateWrapper {
	w := MakeTemplate("batch/v1", "CronJob", name, namespace).Set("* * * * *", "spec", "schedule")
	w.setPodSpec(cronJobPodPath, "busybox")
	return w.Set("Never", append(cronJobPodPath, "restartPolicy")...)
}

// MakePod starts a v1 Pod with a container "app" running "nginx".
func MakePod(name, namespace string) *TemplateWrapper {
	w := MakeTemplate("v1", "Pod", name, namespace)
	w.setPodSpec(podPath, "nginx")
	return w
}

// MakeConfigMap starts an empty v1 ConfigMap; add entries with Data.
func MakeConfigMap(name, namespace string) *TemplateWrapper {
	return MakeTemplate("v1", "ConfigMap", name, namespace)
}

// Field paths of the pod spec in the kinds the builders make.
var (
	podPath         = []string{"spec"}
	podTemplatePath = []string{"spec", "template", "spec"}
	cronJobPodPath  = []string{"spec", "jobTemplate", "spec", "template", "spec"}
)

func makeWorkload(apiVersion, kind, name, namespace string, podSpec []string) *TemplateWrapper {
	w := MakeTemplate(apiVersion, kind, name, namespace)
	labels := map[string]any{"app": name}
	w.Set(labels, "spec", "selector", "matchLabels")
	w.Set(map[string]any{"app": name}, "spec", "template", "metadata", "labels")
	w.setPodSpec(podSpec, "nginx")
	return w
}

func (w *TemplateWrapper) setPodSpec(path []string, image string) {
	w.Set([]any{map[string]any{"name": defaultContainer, "image": image}}, append(path, "containers")...)
}

// Obj returns the built object. Each call returns a fresh copy.
func (w *TemplateWrapper) Obj() *unstructured.Unstructured {
	return w.obj.DeepCopy()
}

// Set sets any field; value must be valid unstructured content (int64, not
// int, for numbers).
func (w *TemplateWrapper) Set(value any, fields ...string) *TemplateWrapper {
	if err := unstructured.SetNestedField(w.obj.Object, value, fields...); err != nil {
		panic(fmt.Sprintf("apitest: set %v: %v", fields, err))
	}
	return w
}

// Remove deletes a field.
func (w *TemplateWrapper) Remove(fields ...string) *TemplateWrapper {
	unstructured.RemoveNestedField(w.obj.Object, fields...)
	return w
}

// Replicas sets spec.replicas.
func (w *TemplateWrapper) Replicas(n int32) *TemplateWrapper {
	return w.Set(int64(n), "spec", "replicas")
}

// Parallelism sets a Job's spec.parallelism.
func (w *TemplateWrapper) Parallelism(n int32) *TemplateWrapper {
	return w.Set(int64(n), "spec", "parallelism")
}

// Completions sets a Job's spec.completions.
func (w *TemplateWrapper) Completions(n int32) *TemplateWrapper {
	return w.Set(int64(n), "spec", "completions")
}

// Label sets a metadata label.
func (w *TemplateWrapper) Label(key, value string) *TemplateWrapper {
	return w.Set(value, "metadata", "labels", key)
}

// Annotation sets a metadata annotation.
func (w *TemplateWrapper) Annotation(key, value string) *TemplateWrapper {
	return w.Set(value, "metadata", "annotations", key)
}

// UID sets metadata.uid, as the apiserver would.
func (w *TemplateWrapper) UID(uid string) *TemplateWrapper {
	return w.Set(uid, "metadata", "uid")
}

// Data sets a ConfigMap data entry.
func (w *TemplateWrapper) Data(key, value string) *TemplateWrapper {
	return w.Set(value, "data", key)
}

// Image sets the image of the default container "app".
func (w *TemplateWrapper) Image(image string) *TemplateWrapper {
	return w.containerField("containers", defaultContainer, "image", image)
}

// Container adds (or updates the image of) a container.
func (w *TemplateWrapper) Container(name, image string) *TemplateWrapper {
	return w.containerField("containers", name, "image", image)
}

// InitContainer adds (or updates the image of) an init container.
func (w *TemplateWrapper) InitContainer(name, image string) *TemplateWrapper {
	return w.containerField("initContainers", name, "image", image)
}

// Command sets the command of a container, adding the container if needed.
func (w *TemplateWrapper) Command(container string, command ...string) *TemplateWrapper {
	return w.containerField("containers", container, "command", toAnySlice(command))
}

// Args sets the args of a container, adding the container if needed.
func (w *TemplateWrapper) Args(container string, args ...string) *TemplateWrapper {
	return w.containerField("containers", container, "args", toAnySlice(args))
}

// containerField sets one field of the named container in list
// ("containers" or "initContainers"), appending the container if missing.
func (w *TemplateWrapper) containerField(list, name, field string, value any) *TemplateWrapper {
	path := append(append([]string{}, w.podSpecPath()...), list)
	items, _, _ := unstructured.NestedSlice(w.obj.Object, path...)
	for i, item := range items {
		c, ok := item.(map[string]any)
		if ok && c["name"] == name {
			c[field] = value
			items[i] = c
			return w.Set(items, path...)
		}
	}
	return w.Set(append(items, map[string]any{"name": name, field: value}), path...)
}

func (w *TemplateWrapper) podSpecPath() []string {
	switch w.obj.GetKind() {
	case "Pod":
		return podPath
	case "CronJob":
		return cronJobPodPath
	default:
		return podTemplatePath
	}
}

func toAnySlice(in []string) []any {
	out := make([]any, 0, len(in))
	for _, s := range in {
		out = append(out, s)
	}
	return out
}
