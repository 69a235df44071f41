package controllertest

import (
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// EventWant is one event expected on the host: on the object of that Kind
// and Name (any name when empty), with the Reason, Type and a note that
// contains Note.
type EventWant struct {
	Kind, Name, Reason, Type, Note string
}

// WaitEvents waits until every wanted event is on the host, in any
// namespace (a cluster-scoped object's events are in default), each
// reported by a controller with an action.
func WaitEvents(t testing.TB, hub client.Client, want []EventWant) {
	t.Helper()
	testkit.Eventually(t, Deadline, fmt.Sprintf("%d events", len(want)), func() (bool, string) {
		var list eventsv1.EventList
		if err := hub.List(t.Context(), &list); err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, w := range want {
			found := false
			for _, e := range list.Items {
				if e.Regarding.Kind == w.Kind && (w.Name == "" || e.Regarding.Name == w.Name) && e.Reason == w.Reason &&
					e.Type == w.Type && strings.Contains(e.Note, w.Note) && e.ReportingController != "" && e.Action != "" {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, fmt.Sprintf("%s %s %s %q", w.Kind, w.Name, w.Reason, w.Note))
			}
		}
		if len(missing) == 0 {
			return true, ""
		}
		var seen []string
		for _, e := range list.Items {
			seen = append(seen, fmt.Sprintf("%s/%s %s: %s", e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note))
		}
		return false, fmt.Sprintf("missing %q; seen %q", missing, seen)
	})
}
