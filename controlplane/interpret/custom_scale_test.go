package interpret_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// messagePerMember is a status aggregation of the shape many published
// customizations have (source controllers, policy engines, batch jobs):
// every member's condition message is prefixed with its cluster and
// appended to the one condition of the same type, status and reason, so
// each member's append copies every message before it. The strings it
// makes grow as the square of the members, the status it returns as the
// members.
const messagePerMember = `
function AggregateStatus(desiredObj, statusItems)
  if desiredObj.status == nil then desiredObj.status = {} end
  if statusItems == nil then
    desiredObj.status.conditions = {}
    return desiredObj
  end
  local conditions, ready = {}, 0
  for i = 1, #statusItems do
    local item = statusItems[i]
    if item.status ~= nil and item.status.conditions ~= nil then
      for c = 1, #item.status.conditions do
        local cond = item.status.conditions[c]
        cond.message = item.clusterName .. '=' .. cond.message
        local merged = false
        for j = 1, #conditions do
          local have = conditions[j]
          if have.type == cond.type and have.status == cond.status and have.reason == cond.reason then
            have.message = have.message .. ', ' .. cond.message
            merged = true
            break
          end
        end
        if not merged then conditions[#conditions + 1] = cond end
      end
      if item.status.artifact ~= nil then desiredObj.status.artifact = item.status.artifact end
      if item.applied then ready = ready + 1 end
    end
  end
  desiredObj.status.conditions = conditions
  desiredObj.status.readyMembers = ready
  return desiredObj
end`

// fleetStatus is n members' reflected statuses of a source-controller-like
// kind: two conditions with a revision in their message, and an artifact.
func fleetStatus(n int) []interpret.Member {
	out := make([]interpret.Member, n)
	for i := range out {
		rev := fmt.Sprintf("main@sha1:%040x", i)
		msg := "stored artifact for revision '" + rev + "'"
		cond := func(t string) map[string]any {
			return map[string]any{"type": t, "status": "True", "reason": "Succeeded", "message": msg,
				"lastTransitionTime": "2026-11-28T12:00:00Z", "observedGeneration": int64(1)}
		}
		out[i] = interpret.Member{Cluster: fmt.Sprintf("member-%04d", i), Applied: true, Status: map[string]any{
			"observedGeneration": int64(1),
			"conditions":         []any{cond("Ready"), cond("ArtifactInStorage")},
			"artifact": map[string]any{"revision": rev, "digest": "sha256:" + strings.Repeat("0", 64),
				"path": "gitrepository/default/w/" + rev + ".tar.gz", "url": "http://source-controller.flux-system.svc/gitrepository/default/w.tar.gz",
				"lastUpdateTime": "2026-11-28T12:00:00Z", "size": int64(12345)},
		}}
	}
	return out
}

// TestBudgetScalesWithInput: a call's allowance of strings made grows
// with its input (AggregateStatus's statusItems), so a well-behaved
// aggregation that builds one message per member passes at 2,000 members
// (the fixed 32 MiB allowance stopped it: it makes about 380 MB there),
// with the default deadline, which grows with it. Runaway scripts still
// stop, with one member as with 2,000, with an error naming the
// customization, the operation and the object: endless concatenation
// within the ceiling of strings made, a table growing forever within the
// instructions, string.rep within what may be held, and big strings kept
// in a local, a global or an upvalue soon after they pass what a call may
// keep (32 MiB and its input), long before the ceiling.
func TestBudgetScalesWithInput(t *testing.T) {
	runaway := func(body string) string {
		return "function AggregateStatus(desiredObj, statusItems)\n  local first = statusItems[1].clusterName\n" + body + "\n  return desiredObj\nend"
	}
	cases := []struct {
		name    string
		script  string
		members int
		want    string // "" for success, else a part of the budget error
	}{
		{"message per member, 1 member", messagePerMember, 1, ""},
		{"message per member, 2000 members", messagePerMember, 2000, ""},
		{"endless concatenation, 1 member", runaway("  local s = first\n  while true do s = s .. first .. ', ' end"), 1, "bytes made"},
		{"endless concatenation, 2000 members", runaway("  local s = first\n  while true do s = s .. first .. ', ' end"), 2000, "bytes made"},
		{"table growing forever, 1 member", runaway("  local t = {}\n  while true do t[#t + 1] = first .. #t .. ' is a member name' end"), 1, "budget exhausted"},
		{"table growing forever, 2000 members", runaway("  local t = {}\n  while true do t[#t + 1] = first .. #t .. ' is a member name' end"), 2000, "budget exhausted"},
		{"table of doubling strings, 2000 members", runaway("  local t, s = {}, first\n  while true do s = s .. s; t[#t + 1] = s end"), 2000, "budget exhausted"},
		{"table of big strings, 1 member", runaway("  local t, s = {}, string.rep(first, 100000)\n  for i = 1, 1e9 do t[i] = s .. i end"), 1, "bytes made"},
		{"table of big strings, 2000 members", runaway("  local t, s = {}, string.rep(first, 100000)\n  for i = 1, 1e9 do t[i] = s .. i end"), 2000, "kept"},
		{"big strings kept in a global, 2000 members", runaway("  kept = {}\n  local s = string.rep(first, 100000)\n  for i = 1, 1e9 do kept[i] = s .. i end"), 2000, "kept"},
		{"big strings kept in an upvalue, 2000 members", "local kept = {}\n" + runaway("  local s = string.rep(first, 100000)\n  for i = 1, 1e9 do kept[i] = s .. i end"), 2000, "kept"},
		{"string.rep bomb, 1 member", runaway("  local s = string.rep(first, 1e9)"), 1, "string.rep"},
		{"string.rep bomb, 2000 members", runaway("  local s = string.rep(first, 1e9)"), 2000, "string.rep"},
		{"string.rep past what may be held, 2000 members", runaway("  local s = string.rep(first, 4e6)"), 2000, "string.rep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A runaway script is stopped by the counted budgets, the
			// same way on a loaded machine; a well-behaved one runs with
			// the default deadline, which grows with its input.
			var opts []interpret.Option
			if c.want != "" {
				opts = append(opts, interpret.WithCallTimeout(0))
			}
			in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("fleet", api.CustomizationRules{StatusAggregation: lua(c.script)})}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			members := fleetStatus(c.members)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			status, err := in.AggregateStatus(obj(t, widget), members)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s, %d MiB allocated", took, alloc>>20)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				conds, _ := status["conditions"].([]any)
				if len(conds) != 2 || status["readyMembers"] != int64(c.members) {
					t.Fatalf("status: %d conditions, readyMembers %v", len(conds), status["readyMembers"])
				}
				last := fmt.Sprintf("member-%04d=", c.members-1)
				if msg, _ := conds[0].(map[string]any)["message"].(string); !strings.Contains(msg, last) || strings.Count(msg, "=stored artifact") != c.members {
					t.Errorf("condition message does not name every member (%d bytes)", len(msg))
				}
				return
			}
			checkBudgetError(t, err, `customization "fleet"`, "statusAggregation", "example.io/v1 Widget default/w", c.want)
			// Stopped before it made more than the ceiling, and
			// before it kept much more than its allowance (32 MiB and
			// its input) in tables: the strings it made are all kept.
			limit := uint64(interpret.MadeCeiling + 256<<20)
			if c.want == "kept" || c.members == 1 {
				limit = 256 << 20
			}
			if took > 30*time.Second || alloc > limit {
				t.Errorf("stopped after %s and %d MiB, want at most %d MiB", took, alloc>>20, limit>>20)
			}
		})
	}
}
