package override

import "strings"

// podSpecPointers maps the kinds whose pod spec flotilla knows, without a
// predicate, to the JSON pointer of that pod spec. Karmada knows all but
// CronJob; flotilla adds it because a CronJob's pods need the same registry
// mirror as a Deployment's.
var podSpecPointers = map[string]string{
	"Pod":         "/spec",
	"ReplicaSet":  "/spec/template/spec",
	"Deployment":  "/spec/template/spec",
	"StatefulSet": "/spec/template/spec",
	"DaemonSet":   "/spec/template/spec",
	"Job":         "/spec/template/spec",
	"CronJob":     "/spec/jobTemplate/spec/template/spec",
}

// containerLists are the pod spec lists whose entries overriders reach, in
// the order they are visited. Karmada visits only "containers"
// (karmada#4283); init containers are included because a mirrored registry
// or an extra flag is needed there just as much, and names are unique across
// both lists, so a rule can never hit the wrong container.
var containerLists = []string{"containers", "initContainers"}

// containerRef is one container of a well-known workload.
type containerRef struct {
	// pointer is the JSON pointer of the container object.
	pointer string
	// fields is the decoded container.
	fields map[string]any
}

// podContainers lists the containers of a well-known workload kind in
// document order: containers, then init containers. It returns nothing for
// other kinds, which overriders without a predicate leave alone.
func podContainers(obj map[string]any, kind string) []containerRef {
	prefix, ok := podSpecPointers[kind]
	if !ok {
		return nil
	}
	spec, err := getPointer(obj, prefix)
	if err != nil {
		return nil
	}
	specMap, ok := spec.(map[string]any)
	if !ok {
		return nil
	}
	var out []containerRef
	for _, list := range containerLists {
		items, _ := specMap[list].([]any)
		for i, item := range items {
			c, ok := item.(map[string]any)
			if !ok {
				continue
			}
			out = append(out, containerRef{
				pointer: strings.Join([]string{prefix, list, itoa(i)}, "/"),
				fields:  c,
			})
		}
	}
	return out
}
