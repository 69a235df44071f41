package apitest

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// apiVersions is the version the builders give each kind.
var apiVersions = map[string]string{
	"Deployment":              "apps/v1",
	"ReplicaSet":              "apps/v1",
	"StatefulSet":             "apps/v1",
	"DaemonSet":               "apps/v1",
	"Job":                     "batch/v1",
	"CronJob":                 "batch/v1",
	"Pod":                     "v1",
	"Service":                 "v1",
	"PersistentVolume":        "v1",
	"PersistentVolumeClaim":   "v1",
	"ConfigMap":               "v1",
	"Ingress":                 "networking.k8s.io/v1",
	"PodDisruptionBudget":     "policy/v1",
	"HorizontalPodAutoscaler": "autoscaling/v2",
}

// ObjWrapper builds a live object as a member would return it, kueue style:
// MakeObj("Deployment").Generation(2).Spec("replicas", 3).Status("availableReplicas", 2).Obj().
type ObjWrapper struct {
	obj *unstructured.Unstructured
}

// MakeObj starts an object of a kind from apiVersions named default/web.
func MakeObj(kind string) *ObjWrapper {
	apiVersion, ok := apiVersions[kind]
	if !ok {
		panic("MakeObj: no apiVersion for " + kind)
	}
	return MakeObjOf(apiVersion, kind)
}

// MakeObjOf starts an object of any apiVersion and kind named default/web.
func MakeObjOf(apiVersion, kind string) *ObjWrapper {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace("default")
	obj.SetName("web")
	return &ObjWrapper{obj: obj}
}

// MakeLiveDeployment starts a Deployment with spec.replicas and generation 1.
func MakeLiveDeployment(replicas int) *ObjWrapper {
	return MakeObj("Deployment").Generation(1).Spec("replicas", replicas)
}

// Generation sets metadata.generation.
func (w *ObjWrapper) Generation(g int64) *ObjWrapper {
	w.obj.SetGeneration(g)
	return w
}

// Spec sets the spec field at a dotted path.
func (w *ObjWrapper) Spec(path string, value any) *ObjWrapper {
	return w.set(value, append([]string{"spec"}, strings.Split(path, ".")...)...)
}

// Status sets status fields from path/value pairs; paths are dotted.
func (w *ObjWrapper) Status(pairs ...any) *ObjWrapper {
	for i := 0; i < len(pairs); i += 2 {
		w.set(pairs[i+1], append([]string{"status"}, strings.Split(pairs[i].(string), ".")...)...)
	}
	return w
}

// Observed sets status.observedGeneration to metadata.generation.
func (w *ObjWrapper) Observed() *ObjWrapper {
	return w.Status("observedGeneration", w.obj.GetGeneration())
}

// Condition appends a status condition.
func (w *ObjWrapper) Condition(conditionType, status, reason, message string) *ObjWrapper {
	list, _, _ := unstructured.NestedSlice(w.obj.Object, "status", "conditions")
	c := map[string]any{"type": conditionType, "status": status}
	if reason != "" {
		c["reason"] = reason
	}
	if message != "" {
		c["message"] = message
	}
	return w.set(append(list, c), "status", "conditions")
}

// Obj returns the object.
func (w *ObjWrapper) Obj() *unstructured.Unstructured { return w.obj }

func (w *ObjWrapper) set(value any, path ...string) *ObjWrapper {
	if err := unstructured.SetNestedField(w.obj.Object, JSONValue(value), path...); err != nil {
		panic(fmt.Sprintf("set %v: %v", path, err))
	}
	return w
}

// JSONValue turns Go ints into the int64 unstructured objects hold.
func JSONValue(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = JSONValue(e)
		}
		return out
	default:
		return v
	}
}
