package cronfederatedhpa

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func at(s string) *metav1.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &metav1.Time{Time: t}
}

func rule(name, schedule string, mods ...func(*api.CronFederatedHPARule)) api.CronFederatedHPARule {
	r := api.CronFederatedHPARule{Name: name, Schedule: schedule, TargetReplicas: ptr.To[int32](3)}
	for _, m := range mods {
		m(&r)
	}
	return r
}

// TestPlan: which rules are due and when each runs next, from the spec and
// the stored status alone.
func TestPlan(t *testing.T) {
	now := at("2026-11-28T10:00:30Z").Time
	for _, tc := range []struct {
		name     string
		rules    []api.CronFederatedHPARule
		stored   []api.ExecutionHistory
		wantNext map[string]*metav1.Time
		wantDue  []string
		wantFail string
	}{
		{name: "a new rule is scheduled, not run", rules: []api.CronFederatedHPARule{rule("a", "*/5 * * * *")},
			wantNext: map[string]*metav1.Time{"a": at("2026-11-28T10:05:00Z")}},
		{name: "a time that came is due, and the next is recorded", rules: []api.CronFederatedHPARule{rule("a", "* * * * *")},
			stored:   []api.ExecutionHistory{{RuleName: "a", NextExecutionTime: at("2026-11-28T10:00:00Z")}},
			wantNext: map[string]*metav1.Time{"a": at("2026-11-28T10:01:00Z")}, wantDue: []string{"a@10:00"}},
		{name: "times missed while down run once", rules: []api.CronFederatedHPARule{rule("a", "* * * * *")},
			stored:   []api.ExecutionHistory{{RuleName: "a", NextExecutionTime: at("2026-11-28T08:00:00Z")}},
			wantNext: map[string]*metav1.Time{"a": at("2026-11-28T10:01:00Z")}, wantDue: []string{"a@08:00"}},
		{name: "a schedule edited is scheduled anew, not run at the old time", rules: []api.CronFederatedHPARule{rule("a", "30 * * * *")},
			stored:   []api.ExecutionHistory{{RuleName: "a", NextExecutionTime: at("2026-11-28T10:00:00Z")}},
			wantNext: map[string]*metav1.Time{"a": at("2026-11-28T10:30:00Z")}},
		{name: "a suspended rule has no next time and never runs", rules: []api.CronFederatedHPARule{rule("a", "* * * * *", func(r *api.CronFederatedHPARule) { r.Suspend = ptr.To(true) })},
			stored:   []api.ExecutionHistory{{RuleName: "a", NextExecutionTime: at("2026-11-28T10:00:00Z")}},
			wantNext: map[string]*metav1.Time{"a": nil}},
		{name: "the time zone decides the hour", rules: []api.CronFederatedHPARule{rule("a", "0 8 * * *", func(r *api.CronFederatedHPARule) { r.TimeZone = ptr.To("Asia/Tokyo") })},
			wantNext: map[string]*metav1.Time{"a": at("2026-11-28T23:00:00Z")}},
		{name: "due rules run oldest first", rules: []api.CronFederatedHPARule{rule("late", "* * * * *"), rule("early", "0 * * * *")},
			stored: []api.ExecutionHistory{
				{RuleName: "late", NextExecutionTime: at("2026-11-28T09:59:00Z")},
				{RuleName: "early", NextExecutionTime: at("2026-11-28T09:00:00Z")},
				{RuleName: "removed", NextExecutionTime: at("2026-11-28T09:00:00Z")}},
			wantNext: map[string]*metav1.Time{"late": at("2026-11-28T10:01:00Z"), "early": at("2026-11-28T11:00:00Z")}, wantDue: []string{"early@09:00", "late@09:59"}},
		{name: "a bad time zone is a failed execution", rules: []api.CronFederatedHPARule{rule("a", "* * * * *", func(r *api.CronFederatedHPARule) { r.TimeZone = ptr.To("Mars/Olympus") })},
			wantNext: map[string]*metav1.Time{"a": nil}, wantFail: `rule a: timeZone: unknown time zone "Mars/Olympus"`},
		{name: "a schedule that never fires is a failed execution", rules: []api.CronFederatedHPARule{rule("a", "0 0 30 2 *")},
			wantNext: map[string]*metav1.Time{"a": nil}, wantFail: "names no time in the next five years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := api.CronFederatedHPASpec{Rules: tc.rules}
			status, dues, bad, _ := plan(spec, api.CronFederatedHPAStatus{ExecutionHistories: tc.stored}, now)
			if len(status.ExecutionHistories) != len(tc.rules) {
				t.Fatalf("histories %+v, want one per rule", status.ExecutionHistories)
			}
			for _, h := range status.ExecutionHistories {
				want, ok := tc.wantNext[h.RuleName]
				got := h.NextExecutionTime
				if !ok || (want == nil) != (got == nil) || (want != nil && !want.Equal(got)) {
					t.Errorf("rule %s: next %v, want %v", h.RuleName, h.NextExecutionTime, want)
				}
			}
			var got []string
			for _, d := range dues {
				got = append(got, d.rule.Name+"@"+d.at.Format("15:04"))
			}
			if strings.Join(got, ",") != strings.Join(tc.wantDue, ",") {
				t.Errorf("due %v, want %v", got, tc.wantDue)
			}
			if tc.wantFail == "" {
				if len(bad) > 0 {
					t.Errorf("unexpected failures %+v", bad)
				}
				return
			}
			f := status.ExecutionHistories[0].FailedExecutions
			if len(bad) != 1 || len(f) != 1 || !strings.Contains(f[0].Message, tc.wantFail) || f[0].ScheduleTime != nil {
				t.Fatalf("failed executions %+v (events %+v), want one with %q", f, bad, tc.wantFail)
			}
			again, _, bad, _ := plan(spec, status, now.Add(time.Minute))
			if len(bad) != 0 || len(again.ExecutionHistories[0].FailedExecutions) != 1 {
				t.Errorf("the same failure recorded again: %+v", again.ExecutionHistories[0].FailedExecutions)
			}
		})
	}
}

// TestRecordTrims: executions are kept newest first up to each limit, and
// a lowered limit trims at once.
func TestRecordTrims(t *testing.T) {
	r := rule("a", "* * * * *", func(r *api.CronFederatedHPARule) {
		r.SuccessfulHistoryLimit, r.FailedHistoryLimit = ptr.To[int32](2), ptr.To[int32](0)
	})
	spec := api.CronFederatedHPASpec{Rules: []api.CronFederatedHPARule{r}}
	status := api.CronFederatedHPAStatus{ExecutionHistories: []api.ExecutionHistory{{RuleName: "a"}}}
	for _, s := range []string{"10:01", "10:02", "10:03"} {
		record(spec, &status, "a", &api.SuccessfulExecution{ScheduleTime: at("2026-11-28T" + s + ":00Z")}, nil)
		record(spec, &status, "a", nil, &api.FailedExecution{Message: s})
	}
	h := status.ExecutionHistories[0]
	if len(h.SuccessfulExecutions) != 2 || !h.SuccessfulExecutions[0].ScheduleTime.Equal(at("2026-11-28T10:03:00Z")) || h.FailedExecutions != nil {
		t.Fatalf("history %+v, want the two newest successes and no failure", h)
	}
	spec.Rules[0].SuccessfulHistoryLimit = ptr.To[int32](1)
	trim(spec, &status)
	if len(status.ExecutionHistories[0].SuccessfulExecutions) != 1 {
		t.Fatalf("lowered limit: %+v", status.ExecutionHistories[0])
	}
}
