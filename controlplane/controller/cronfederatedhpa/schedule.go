package cronfederatedhpa

import (
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// due is a rule whose scheduled time has come.
type due struct {
	rule api.CronFederatedHPARule
	at   time.Time
}

// invalid is a rule that cannot be scheduled, and why.
type invalid struct {
	rule, message string
}

// plan is the pure part of a reconcile: from the spec and the status
// stored, the status with each rule's next execution time, a failed
// execution for each rule that cannot be scheduled (recorded once, not on
// every pass), the histories of removed rules dropped; the rules due at
// now, oldest first; and the earliest next time (zero: none).
//
// A recorded next time is kept while it is one the rule's schedule still
// names, so a rule edited to another schedule is scheduled anew rather
// than run at its old time. A next time that passed is due once, however
// many of the rule's times passed since (a control plane that was down
// does not replay them).
func plan(spec api.CronFederatedHPASpec, stored api.CronFederatedHPAStatus, now time.Time) (api.CronFederatedHPAStatus, []due, []invalid, time.Time) {
	var out api.CronFederatedHPAStatus
	var dues []due
	var bad []invalid
	var earliest time.Time
	for _, rule := range spec.Rules {
		h := api.ExecutionHistory{RuleName: rule.Name}
		if i := slices.IndexFunc(stored.ExecutionHistories, func(e api.ExecutionHistory) bool { return e.RuleName == rule.Name }); i >= 0 {
			h = *stored.ExecutionHistories[i].DeepCopy()
		}
		sched, loc, err := readRule(rule, now)
		switch {
		case ptr.Deref(rule.Suspend, false):
			h.NextExecutionTime = nil
		case err != nil:
			h.NextExecutionTime = nil
			msg := err.Error()
			if len(h.FailedExecutions) == 0 || h.FailedExecutions[0].ScheduleTime != nil || h.FailedExecutions[0].Message != msg {
				h.FailedExecutions = slices.Insert(h.FailedExecutions, 0, api.FailedExecution{ExecutionTime: &metav1.Time{Time: now}, Message: msg})
				bad = append(bad, invalid{rule: rule.Name, message: msg})
			}
		default:
			next := h.NextExecutionTime
			if next == nil || !firesAt(sched, next.In(loc)) {
				next = &metav1.Time{Time: sched.Next(now.In(loc))}
			} else if !now.Before(next.Time) {
				dues = append(dues, due{rule: rule, at: next.Time})
				next = &metav1.Time{Time: sched.Next(now.In(loc))}
			}
			h.NextExecutionTime = next
			if earliest.IsZero() || next.Time.Before(earliest) {
				earliest = next.Time
			}
		}
		out.ExecutionHistories = append(out.ExecutionHistories, h)
	}
	slices.SortStableFunc(dues, func(a, b due) int { return a.at.Compare(b.at) })
	trim(spec, &out)
	return out, dues, bad, earliest
}

// readRule parses a rule's schedule and time zone, with the webhook's
// functions; a schedule that names no time in the next five years (such
// as 30 February) cannot be scheduled either.
func readRule(rule api.CronFederatedHPARule, now time.Time) (cron.Schedule, *time.Location, error) {
	sched, err := api.ParseCronSchedule(rule.Schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("rule %s: schedule %q: %w", rule.Name, rule.Schedule, err)
	}
	loc, err := api.LoadTimeZone(rule.TimeZone)
	if err != nil {
		return nil, nil, fmt.Errorf("rule %s: timeZone: %w", rule.Name, err)
	}
	if sched.Next(now.In(loc)).IsZero() {
		return nil, nil, fmt.Errorf("rule %s: schedule %q names no time in the next five years", rule.Name, rule.Schedule)
	}
	return sched, loc, nil
}

// firesAt reports whether t is one of the schedule's times.
func firesAt(sched cron.Schedule, t time.Time) bool {
	return sched.Next(t.Add(-time.Second)).Equal(t)
}

// record adds an execution to the rule's history, newest first, and trims
// the history to the rule's limits.
func record(spec api.CronFederatedHPASpec, status *api.CronFederatedHPAStatus, rule string, ok *api.SuccessfulExecution, failed *api.FailedExecution) {
	for i := range status.ExecutionHistories {
		h := &status.ExecutionHistories[i]
		if h.RuleName != rule {
			continue
		}
		if ok != nil {
			h.SuccessfulExecutions = slices.Insert(h.SuccessfulExecutions, 0, *ok)
		}
		if failed != nil {
			h.FailedExecutions = slices.Insert(h.FailedExecutions, 0, *failed)
		}
	}
	trim(spec, status)
}

// trim keeps each rule's newest executions up to its limits, so a limit
// lowered takes effect at once.
func trim(spec api.CronFederatedHPASpec, status *api.CronFederatedHPAStatus) {
	for i := range status.ExecutionHistories {
		h := &status.ExecutionHistories[i]
		j := slices.IndexFunc(spec.Rules, func(r api.CronFederatedHPARule) bool { return r.Name == h.RuleName })
		if j < 0 {
			continue
		}
		r := spec.Rules[j]
		if n := int(ptr.Deref(r.SuccessfulHistoryLimit, api.DefaultSuccessfulHistoryLimit)); len(h.SuccessfulExecutions) > n {
			h.SuccessfulExecutions = h.SuccessfulExecutions[:max(n, 0)]
		}
		if n := int(ptr.Deref(r.FailedHistoryLimit, api.DefaultFailedHistoryLimit)); len(h.FailedExecutions) > n {
			h.FailedExecutions = h.FailedExecutions[:max(n, 0)]
		}
		if len(h.SuccessfulExecutions) == 0 {
			h.SuccessfulExecutions = nil
		}
		if len(h.FailedExecutions) == 0 {
			h.FailedExecutions = nil
		}
	}
}
