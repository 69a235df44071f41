package interpret

import (
	"errors"
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// kubeLibName is the module scripts require for Karmada's helpers.
const kubeLibName = "kube"

// kubeModule is Karmada's kube library: the helpers customizations written
// for Karmada call, with the same names, arguments and results.
func kubeModule(L *lua.LState) *lua.LTable {
	return L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"resourceAdd":             kubeResourceAdd,
		"accuratePodRequirements": kubeAccuratePodRequirements,
		"getPodDependencies":      kubeGetPodDependencies,
		"getResourceQuantity":     kubeGetResourceQuantity,
	})
}

// kubeResourceAdd adds quantities ("100m", "1Gi"; nil counts as zero) and
// returns the sum as a quantity string.
func kubeResourceAdd(L *lua.LState) int {
	sum := resource.Quantity{}
	for i := 1; i <= L.GetTop(); i++ {
		sum.Add(luaQuantity(L, i))
	}
	L.Push(lua.LString(sum.String()))
	return 1
}

// kubeGetResourceQuantity is a quantity as a number ("500m" is 0.5).
func kubeGetResourceQuantity(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("getResourceQuantity takes one argument, got %d", L.GetTop())
	}
	q := luaQuantity(L, 1)
	f := q.AsApproximateFloat64()
	if f < 0 || math.IsInf(f, 0) {
		L.RaiseError("getResourceQuantity: %s is negative or too large", q.String())
	}
	L.Push(lua.LNumber(f))
	return 1
}

// kubeAccuratePodRequirements is what one replica of a pod template
// requests: {resourceRequest, nodeClaim, namespace, priorityClassName}, as
// flotilla computes it for built-in workloads.
func kubeAccuratePodRequirements(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("accuratePodRequirements takes one argument, a pod template, got %d", L.GetTop())
	}
	tmpl := luaPodTemplate(L, 1, "accuratePodRequirements")
	req := requirements(&tmpl.Spec, tmpl.Namespace)
	pushJSON(L, req, "accuratePodRequirements")
	return 1
}

// kubeGetPodDependencies lists what a pod template in a namespace (default
// when nil) refers to: [{apiVersion, kind, namespace, name}].
func kubeGetPodDependencies(L *lua.LState) int {
	if L.GetTop() != 2 {
		L.RaiseError("getPodDependencies takes two arguments, a pod template and a namespace, got %d", L.GetTop())
	}
	tmpl := luaPodTemplate(L, 1, "getPodDependencies")
	ns := "default"
	if L.Get(2) != lua.LNil {
		ns = L.CheckString(2)
	}
	deps := podDependencies(&tmpl.Spec, ns)
	out := L.CreateTable(len(deps), 0)
	for _, d := range deps {
		t := L.CreateTable(0, 4)
		t.RawSetString("apiVersion", lua.LString("v1"))
		t.RawSetString("kind", lua.LString(d.Kind))
		t.RawSetString("namespace", lua.LString(d.Namespace))
		t.RawSetString("name", lua.LString(d.Name))
		out.Append(t)
	}
	L.Push(out)
	return 1
}

func luaQuantity(L *lua.LState, i int) resource.Quantity {
	switch v := L.Get(i).(type) {
	case *lua.LNilType:
		return resource.Quantity{}
	case lua.LString:
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			L.ArgError(i, fmt.Sprintf("%q is not a quantity: %v", string(v), err))
		}
		return q
	case lua.LNumber:
		return *resource.NewMilliQuantity(int64(float64(v)*1000), resource.DecimalSI)
	}
	L.TypeError(i, lua.LTString)
	return resource.Quantity{}
}

func luaPodTemplate(L *lua.LState, i int, fn string) *corev1.PodTemplateSpec {
	// The conversion is work in proportion to the table, charged to the
	// call's steps: a script calling this in a loop on a large table runs
	// out of instructions, not of time.
	// The conversion's own budget is checked first: it is the one that
	// decides, the same way on any machine.
	conv := newConversion()
	v, err := conv.fromLua(L.CheckTable(i), 0)
	b := budgetOf(L)
	if err != nil && errors.Is(err, errBudget) {
		b.exhaust(L, "%s: the pod template: %s", fn, strings.TrimPrefix(err.Error(), errBudget.Error()+": "))
	}
	if cerr := b.charge(conv.values); cerr != nil {
		b.check(L)
	}
	if err != nil {
		L.RaiseError("%s: the pod template: %v", fn, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		L.RaiseError("%s: the pod template is an array, not an object", fn)
	}
	tmpl := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fixEmpty(m).(map[string]any), tmpl); err != nil {
		L.RaiseError("%s: the pod template: %v", fn, err)
	}
	return tmpl
}

func pushJSON(L *lua.LState, v any, fn string) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err == nil {
		var lv lua.LValue
		if lv, err = toLua(L, m); err == nil {
			L.Push(lv)
			return
		}
	}
	L.RaiseError("%s: %v", fn, err)
}
