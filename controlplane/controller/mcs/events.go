package mcs

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// Reasons of the events the mcs controller records, on the binding and
// its ServiceExport or ServiceImport.
const (
	// EventReasonServiceExported (Normal, or Warning when no cluster
	// exports): which clusters export the Service and why each other
	// cluster of the export's placement does not; recorded when that
	// changes.
	EventReasonServiceExported = "ServiceExported"
	// EventReasonServiceImportRefused (Warning): the import cannot be
	// rendered (its derived name, type or ports); nothing is imported.
	EventReasonServiceImportRefused = "ServiceImportRefused"
	// actionSync is the events' action.
	actionSync = "Sync"
)

// notes remembers the last note recorded per binding, so an unchanged
// export records nothing on every poll.
type notes struct {
	mu   sync.Mutex
	last map[client.ObjectKey]string
}

// changed reports whether note differs from the last one of key, and
// remembers it.
func (n *notes) changed(key client.ObjectKey, note string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		n.last = map[client.ObjectKey]string{}
	}
	if n.last[key] == note {
		return false
	}
	n.last[key] = note
	return true
}

// forget drops what is remembered of key.
func (n *notes) forget(key client.ObjectKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.last, key)
}

// exported records which clusters export rb's Service, and why the others
// of its placement do not, when that changed.
func (r *reconciler) exported(rb *workv1.ResourceBinding, providers []api.TargetCluster, whyNot []string) {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.Name
	}
	note, kind := "exported from no cluster", corev1.EventTypeWarning
	if len(names) > 0 {
		note, kind = "exported from "+strings.Join(names, ", "), corev1.EventTypeNormal
	}
	if len(whyNot) > 0 {
		note += "; " + strings.Join(whyNot, "; ")
	}
	if r.notes.changed(client.ObjectKeyFromObject(rb), note) {
		r.events.Binding(rb, kind, EventReasonServiceExported, actionSync, note)
	}
}

// refused records why an import or export is refused, once per message.
func (r *reconciler) refused(rb *workv1.ResourceBinding, err error) {
	if r.notes.changed(client.ObjectKeyFromObject(rb), err.Error()) {
		r.events.Binding(rb, corev1.EventTypeWarning, EventReasonServiceImportRefused, actionSync, err.Error())
	}
}
