package policy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Specificity says how precisely a resource selector matched a template;
// higher is more specific. It is Karmada's "implicit priority".
type Specificity int

const (
	// NoMatch means the selector does not select the template.
	NoMatch Specificity = iota
	// MatchKind means the selector matched by apiVersion and kind only
	// (Karmada's PriorityMatchAll); an override policy without selectors
	// ranks the same.
	MatchKind
	// MatchLabelSelector means the selector matched by label selector.
	MatchLabelSelector
	// MatchName means the selector matched by name.
	MatchName
)

// ResourceMatches reports whether selector selects tmpl: apiVersion and kind
// must be equal, namespace must be equal when the selector sets one, and
// then a selector with a name matches by name only (its label selector is
// ignored), a selector with a label selector matches by labels, and one
// with neither matches every object of the kind.
func ResourceMatches(selector api.ResourceSelector, tmpl *unstructured.Unstructured) bool {
	return SelectorSpecificity(selector, tmpl) != NoMatch
}

// SelectorSpecificity is how precisely selector matches tmpl, NoMatch if it
// does not.
func SelectorSpecificity(selector api.ResourceSelector, tmpl *unstructured.Unstructured) Specificity {
	if tmpl == nil ||
		tmpl.GetAPIVersion() != selector.APIVersion ||
		tmpl.GetKind() != selector.Kind ||
		(selector.Namespace != "" && tmpl.GetNamespace() != selector.Namespace) {
		return NoMatch
	}
	if selector.Name != "" {
		if selector.Name == tmpl.GetName() {
			return MatchName
		}
		return NoMatch
	}
	if selector.LabelSelector == nil {
		return MatchKind
	}
	sel, err := metav1.LabelSelectorAsSelector(selector.LabelSelector)
	if err != nil || !sel.Matches(labels.Set(tmpl.GetLabels())) {
		return NoMatch
	}
	return MatchLabelSelector
}

// SelectorsSpecificity is the highest specificity of any of selectors for
// tmpl, NoMatch if none matches or there are none.
func SelectorsSpecificity(selectors []api.ResourceSelector, tmpl *unstructured.Unstructured) Specificity {
	best := NoMatch
	for _, s := range selectors {
		if sp := SelectorSpecificity(s, tmpl); sp > best {
			best = sp
		}
	}
	return best
}
