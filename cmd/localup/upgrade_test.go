//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestUpgradeKeepsTheFleet runs a fleet with the control plane built from
// the previous commit (FLOTILLA_UPGRADE_FROM names another revision), then
// replaces it with this checkout's on the same host, as an upgrade does: no
// Work and no member object is deleted or re-created, a member object whose
// Work did not change is not written, and a template change afterwards
// still propagates.
func TestUpgradeKeepsTheFleet(t *testing.T) {
	from := os.Getenv("FLOTILLA_UPGRADE_FROM")
	if from == "" {
		from = "HEAD~1"
	}
	old, next := buildRevision(t, from), buildBinary(t)
	dir, st := startLocalWith(t, old)
	hub, members := contextClient(t, dir, "host"), map[string]client.Client{"member1": contextClient(t, dir, "member1"), "member2": contextClient(t, dir, "member2")}

	propagateWeb(t, hub)
	waitFor(t, "web divided 2+2 over both members by the previous control plane", func() (bool, string) {
		a, b := deployment(t, members["member1"]), deployment(t, members["member2"])
		return a == "2/2" && b == "2/2", fmt.Sprintf("member1 %s, member2 %s", a, b)
	})
	before := fleetState(t, hub, members)

	t.Logf("upgrade: the control plane of %s stops, this checkout's starts on the same host", from)
	upgraded := time.Now()
	if err := testenv.StopDetached([]testenv.ProcessInfo{*st.Controlplane}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	logf := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	if err := st.startControlplane(t.Context(), next, st.Controlplane.Cmdline[3], nil, logf); err != nil {
		t.Fatalf("start the new control plane: %v\n%s", err, out.String())
	}
	if err := testenv.WriteState(filepath.Join(dir, stateFile), st); err != nil {
		t.Fatal(err)
	}
	// Several resyncs and cluster probes (1s each under localup's timings).
	time.Sleep(8 * time.Second)
	after := fleetState(t, hub, members)
	for key, b := range before {
		a, ok := after[key]
		switch {
		case !ok:
			t.Errorf("%s was deleted by the upgrade", key)
		case a.uid != b.uid:
			t.Errorf("%s was re-created by the upgrade (UID %s, was %s)", key, a.uid, b.uid)
		case a.generation != b.generation && !after[b.work].changed(before[b.work]):
			t.Errorf("%s was written by the upgrade (generation %d, was %d) although its Work %s did not change", key, a.generation, b.generation, b.work)
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			t.Errorf("%s appeared with the upgrade", key)
		}
	}
	t.Logf("upgrade: %d Works and member objects unchanged %s after the old control plane was stopped", len(before), time.Since(upgraded).Round(100*time.Millisecond))

	t.Log("a template change after the upgrade reaches both members")
	var web appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "default", Name: "web"}, &web, func() {
		web.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	})
	waitFor(t, "nginx:1.27 on both members", func() (bool, string) {
		var images []string
		for _, name := range []string{"member1", "member2"} {
			var d appsv1.Deployment
			if err := members[name].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				return false, err.Error()
			}
			images = append(images, d.Spec.Template.Spec.Containers[0].Image)
		}
		return images[0] == "nginx:1.27" && images[1] == "nginx:1.27", fmt.Sprint(images)
	})
}

// observed is what the upgrade check compares of one object.
type observed struct {
	uid        types.UID
	generation int64
	// work is the key of the Work that carries a member object.
	work string
}

func (o observed) changed(was observed) bool { return o.generation != was.generation }

// fleetState is every Work on the host and the web Deployment in each
// member, by "work <namespace>/<name>" and "<member> deployment web".
func fleetState(t *testing.T, hub client.Client, members map[string]client.Client) map[string]observed {
	t.Helper()
	state := map[string]observed{}
	var works workv1.WorkList
	if err := hub.List(t.Context(), &works); err != nil {
		t.Fatal(err)
	}
	webWork := shared.WorkName(api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"})
	workOf := map[string]string{}
	for _, w := range works.Items {
		key := "work " + w.Namespace + "/" + w.Name
		state[key] = observed{uid: w.UID, generation: w.Generation}
		if w.Name == webWork {
			workOf[strings.TrimPrefix(w.Namespace, shared.ExecutionNamespace(""))] = key
		}
	}
	for name, c := range members {
		var d appsv1.Deployment
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if workOf[name] == "" {
			t.Fatalf("no Work of web for %s among %d Works", name, len(works.Items))
		}
		state[name+" deployment web"] = observed{uid: d.UID, generation: d.Generation, work: workOf[name]}
	}
	return state
}

// buildRevision builds the provider binary of a git revision of this
// repository (its files exported with git archive, so the checkout is not
// touched) and returns its path.
func buildRevision(t *testing.T, rev string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	archive := exec.CommandContext(t.Context(), "bash", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "-", root, rev, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("export %s: %v\n%s", rev, err, out)
	}
	return testkit.BuildProvider(t, src)
}
