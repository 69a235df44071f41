package interpret_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// BenchmarkCustomCall is the cost of one call of an ordinary,
// Deployment-like customization (the OpenKruise CloneSet example):
// GetReplicas, with the kube library, and AggregateStatus over three
// members.
func BenchmarkCustomCall(b *testing.B) {
	in, err := interpret.New(apitest.ReadInterpreters(b, filepath.Join("..", "..", "examples", "interpreter", "openkruise-cloneset.yaml")))
	if err != nil {
		b.Fatal(err)
	}
	tmpl := obj(b, cloneSet)
	members := []interpret.Member{
		{Cluster: "a", Applied: true, Status: map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "updateRevision": "r1"}},
		{Cluster: "b", Applied: true, Status: map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "updateRevision": "r1"}},
		{Cluster: "c", Applied: true, Status: map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "updateRevision": "r1"}},
	}
	b.Run("GetReplicas", func(b *testing.B) {
		for b.Loop() {
			if n, _, err := in.GetReplicas(tmpl); err != nil || n != 6 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("AggregateStatus", func(b *testing.B) {
		for b.Loop() {
			if _, err := in.AggregateStatus(tmpl, members); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestConcurrentCalls: one Interpreter serves calls from many goroutines
// at once (each runs the compiled script in a state of its own); run
// with -race.
func TestConcurrentCalls(t *testing.T) {
	in, err := interpret.New(apitest.ReadInterpreters(t, filepath.Join("..", "..", "examples", "interpreter", "openkruise-cloneset.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 20 {
				tmpl := obj(t, cloneSet)
				var n int32
				if n, _, err = in.GetReplicas(tmpl); err == nil && n != 6 {
					err = fmt.Errorf("GetReplicas = %d, want 6", n)
				}
				if err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkAggregateFleet is the cost of one status aggregation that
// builds one message per member (messagePerMember) at 2,000 members: its
// strings grow as the square of the members, and it runs within the
// budget its input sizes (madeAllowance).
func BenchmarkAggregateFleet(b *testing.B) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("fleet", api.CustomizationRules{StatusAggregation: lua(messagePerMember)})})
	if err != nil {
		b.Fatal(err)
	}
	tmpl, members := obj(b, widget), fleetStatus(2000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.AggregateStatus(tmpl, members); err != nil {
			b.Fatal(err)
		}
	}
}
