package override

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

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
//
// The kinds and their pod spec paths are the interpreter's
// (interpret.PodSpecPointer), matched by group and kind. Karmada matches
// the kind alone; flotilla does not reach into a custom resource that
// happens to be called "Deployment". Karmada knows all but CronJob;
// flotilla adds it because a CronJob's pods need the same registry mirror
// as a Deployment's.
func podContainers(obj map[string]any, kind schema.GroupKind) []containerRef {
	prefix := interpret.PodSpecPointer(kind)
	if prefix == "" {
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
