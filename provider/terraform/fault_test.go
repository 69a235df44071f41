package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// faultConfig declares the members and n ConfigMaps cm-1 … cm-n, each
// propagated by one shared policy to every member, with data v = version.
// Each ConfigMap waits for the previous one (depends_on), so that with
// -parallelism=1 they are applied one after another in order.
func faultConfig(ms []*faultMember, n int, version string) string {
	var b strings.Builder
	b.WriteString(faultClustersHCL(ms, true))
	b.WriteString(`
resource "flotilla_propagation_policy" "all" {
  name               = "all"
  namespace          = "default"
  resource_selectors = [{ api_version = "v1", kind = "ConfigMap" }]
}
`)
	for i := 1; i <= n; i++ {
		dependsOn := ""
		if i > 1 {
			dependsOn = fmt.Sprintf("depends_on = [flotilla_manifest.cm%d]", i-1)
		}
		b.WriteString(configMapHCL(fmt.Sprintf("cm%d", i), fmt.Sprintf("cm-%d", i), version, "all", dependsOn))
	}
	return b.String()
}

// wantConfigMaps is cm-1 … cm-n, all with data v = version.
func wantConfigMaps(n int, version string) map[string]string {
	out := map[string]string{}
	for i := 1; i <= n; i++ {
		out[fmt.Sprintf("cm-%d", i)] = version
	}
	return out
}

// checkStateMatchesMembers lists every member and checks that the state
// records exactly what is there: a cluster recorded in rendered holds the
// manifest's object, and a cluster that holds it is recorded (in rendered, or
// in private state as a cluster the object may exist in, so the next apply
// prunes or re-applies it). An object no manifest in state accounts for is
// an orphan.
func checkStateMatchesMembers(t *testing.T, d *tfDriver, ms []*faultMember) {
	t.Helper()
	recorded := d.manifests()
	holders := map[string][]string{}
	for _, m := range ms {
		for name := range m.mustConfigMaps(t) {
			holders[name] = append(holders[name], m.name)
		}
	}
	for name, rec := range recorded {
		t.Logf("state: %s rendered in %v, may exist in %v, tainted %v; found in %v", name, rec.Rendered, rec.Applied, rec.Tainted, holders[name])
		for _, c := range rec.Rendered {
			if !slices.Contains(holders[name], c) {
				t.Errorf("state records %s as applied in %s, but it is not there", name, c)
			}
		}
		for _, c := range holders[name] {
			if !slices.Contains(rec.Rendered, c) && !slices.Contains(rec.Applied, c) {
				t.Errorf("%s exists in %s, but the state does not record it there", name, c)
			}
		}
	}
	for name, where := range holders {
		if _, ok := recorded[name]; !ok {
			t.Errorf("%s exists in %v, but no manifest in state records it (an orphan)", name, where)
		}
	}
}

// TestFaultMemberStoppedMidApply stops a member's apiserver while terraform
// applies eight manifests to three members one after another, once the first
// object has reached it. The apply fails naming the member and the objects
// it did not get, the state records exactly what reached each member, and
// once the member is back the next apply converges with no orphans.
func TestFaultMemberStoppedMidApply(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	ms := startFaultMembers(t, 3)
	const n = 8
	d.write(faultConfig(ms, n, "1"))
	down := ms[1]

	ctx, cmd, out := d.startApply(t)
	stopped := waitUntil(ctx, func() bool {
		got, err := down.configMaps(t)
		return err == nil && len(got) > 0
	})
	if stopped {
		down.env.StopAPIServer()
		t.Logf("stopped %s's apiserver after its first object appeared", down.name)
	}
	err := cmd.Wait()
	output := out.String()
	t.Logf("terraform apply:\n%s", output)
	if !stopped {
		t.Fatal("no object reached the member before the apply ended")
	}
	if err == nil {
		t.Fatal("terraform apply succeeded although a member stopped in the middle")
	}
	// Every failure names the manifest's object and the member; no other
	// member is reported as failed.
	failure := regexp.MustCompile(`Apply of ConfigMap default/cm-\d+ failed in some clusters|The plan no longer holds`)
	if !failure.MatchString(output) {
		t.Errorf("the apply's error names no object")
	}
	if !strings.Contains(output, down.name+": ") && !strings.Contains(output, "cluster "+down.name) {
		t.Errorf("the apply's error does not name cluster %s", down.name)
	}
	for _, other := range []*faultMember{ms[0], ms[2]} {
		if regexp.MustCompile(`(?m)^[│\s]*` + other.name + `: (Failed|Skipped)`).MatchString(output) {
			t.Errorf("cluster %s is reported as failed, but only %s stopped", other.name, down.name)
		}
	}

	if err := down.env.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	// What reached the stopped member is there now; the state must say so.
	checkStateMatchesMembers(t, d, ms)
	missing := 0
	for name := range wantConfigMaps(n, "1") {
		if _, ok := down.mustConfigMaps(t)[name]; !ok {
			missing++
		}
	}
	if missing == 0 {
		t.Errorf("every object reached %s although its apiserver stopped during the apply", down.name)
	}

	d.mustRun("apply", "-auto-approve", "-no-color")
	checkNoOrphans(t, ms, wantConfigMaps(n, "1"))
	d.expectEmptyPlan()
}

// TestFaultProviderKilledMidApply kills the provider process (SIGKILL) while
// terraform applies eight manifests, once the first object has reached a
// member. Terraform fails; objects applied but not yet recorded are adopted
// by the next apply (they carry this fleet's ownership labels), which
// converges with no orphans.
func TestFaultProviderKilledMidApply(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	ms := startFaultMembers(t, 3)
	const n = 8
	d.write(faultConfig(ms, n, "1"))

	ctx, cmd, out := d.startApply(t)
	killed := waitUntil(ctx, func() bool {
		for _, m := range ms {
			if got, err := m.configMaps(t); err == nil && len(got) > 0 {
				return killChild(t, cmd.Process.Pid)
			}
		}
		return false
	})
	err := cmd.Wait()
	t.Logf("terraform apply:\n%s", out.String())
	if !killed {
		t.Fatal("the provider process was not found while objects were being applied")
	}
	if err == nil {
		t.Fatal("terraform apply succeeded although its provider was killed")
	}
	recorded := d.manifests()
	var unrecorded []string
	for _, m := range ms {
		for name := range m.mustConfigMaps(t) {
			if _, ok := recorded[name]; !ok {
				unrecorded = append(unrecorded, m.name+"/"+name)
			}
		}
	}
	t.Logf("after the kill: %d manifests in state; applied but not recorded: %v", len(recorded), unrecorded)
	if len(recorded) == n {
		t.Errorf("all %d manifests were recorded although the provider was killed during the apply", n)
	}

	d.mustRun("apply", "-auto-approve", "-no-color")
	checkNoOrphans(t, ms, wantConfigMaps(n, "1"))
	if got := d.manifests(); len(got) != n {
		t.Errorf("state holds %d manifests after the second apply, want %d", len(got), n)
	}
	d.expectEmptyPlan()
}

// TestFaultMemberStallsMidApply puts a proxy in front of one member and
// stalls it (no byte moves, on open or new connections) while terraform
// applies an update: the first manifest goes to m1 only, and once it is
// there the proxy stalls, so the second manifest's write to m3 hangs. The
// apply must end with an error naming m3 and the object within the
// manifest's update timeout, with m1 and m2 updated and recorded; once the
// member answers again, the next apply converges. The provider writes to
// members concurrently (the default apply_parallelism): with
// apply_parallelism = 1 a stalled member holds its slot until the timeout
// and the members queued behind it fail too.
func TestFaultMemberStallsMidApply(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	ms := startFaultMembers(t, 3)
	slow := ms[2]
	proxy := startStallProxy(t, hostPort(t, slow.env.Host))
	slow.host = "https://" + proxy.addr()
	const timeout = 15 * time.Second
	// The second manifest waits behind a gate, a built-in terraform_data
	// whose local-exec waits for a file the test writes once it has stalled
	// m3: the stall always falls between the two manifests' writes, however
	// fast the first one ends (a poll alone lost that race).
	gate := filepath.Join(t.TempDir(), "stalled")
	config := func(version string) string {
		wait := fmt.Sprintf("[ %s = 1 ] || while [ ! -e %s ]; do sleep 0.05; done", version, gate)
		return faultClustersHCL(ms, false) + policyHCL("first", "default", "v1", "ConfigMap", []string{"m1"}, "") + `
resource "flotilla_propagation_policy" "second" {
  name               = "second"
  namespace          = "default"
  resource_selectors = [{ api_version = "v1", kind = "ConfigMap", name = "second" }]
}
` + fmt.Sprintf(`
resource "terraform_data" "gate" {
  triggers_replace = [%q]
  depends_on       = [flotilla_manifest.first]
  provisioner "local-exec" {
    command = %q
  }
}
`, version, wait) + configMapHCL("first", "first", version, "first", "") +
			configMapHCL("second", "second", version, "second", fmt.Sprintf("timeouts {\n    update = %q\n  }\n  depends_on = [terraform_data.gate]", timeout.String()))
	}
	d.write(config("1"))
	d.mustRun("apply", "-auto-approve", "-no-color")

	d.write(config("2"))
	ctx, cmd, out := d.startApply(t)
	var stalledAt time.Time
	if waitUntil(ctx, func() bool {
		got, err := ms[0].configMaps(t)
		return err == nil && got["first"] == "2"
	}) {
		proxy.stall()
		stalledAt = time.Now()
		t.Logf("stalled %s once the first manifest reached m1", slow.name)
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err := cmd.Wait()
	elapsed := time.Since(stalledAt)
	output := out.String()
	t.Logf("terraform apply (ended %s after the stall, update timeout %s):\n%s", elapsed.Round(time.Second), timeout, output)
	if stalledAt.IsZero() {
		t.Fatal("the first manifest never reached m1")
	}
	if err == nil {
		t.Fatal("terraform apply succeeded although a member stalled")
	}
	if !strings.Contains(output, "Apply of ConfigMap default/second failed in some clusters") ||
		!regexp.MustCompile(`(?m)^[│\s]*`+slow.name+`: Failed: .*(deadline|timeout|Timeout)`).MatchString(output) {
		t.Errorf("the apply's error does not say that %s timed out applying default/second", slow.name)
	}
	// A hang would run into the test's own deadline; the apply must give up
	// on the stalled member once the manifest's timeout has passed.
	if elapsed > 10*timeout {
		t.Errorf("the apply ended %s after the stall; the update timeout is %s", elapsed, timeout)
	}
	for _, m := range ms[:2] {
		if got := m.mustConfigMaps(t)["second"]; got != "2" {
			t.Errorf("%s has second v=%q, want 2: a stalled member held back the others", m.name, got)
		}
	}
	if rec := d.manifests()["second"]; !sameSet(rec.Rendered, []string{"m1", "m2"}) {
		t.Errorf("state records second as applied in %v, want [m1 m2]", rec.Rendered)
	}

	proxy.pass()
	if got := slow.mustConfigMaps(t)["second"]; got != "1" && got != "2" {
		t.Errorf("%s has second v=%q", slow.name, got)
	}
	d.mustRun("apply", "-auto-approve", "-no-color")
	checkNoOrphans(t, ms[1:], map[string]string{"second": "2"})
	checkNoOrphans(t, ms[:1], map[string]string{"first": "2", "second": "2"})
	d.expectEmptyPlan()
}
