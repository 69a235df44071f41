package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// A Terraform run reaches each member from many calls: one refresh and one
// plan per manifest, the cluster's own read, the status data sources. A
// member that does not answer used to cost each of them its own timeout, so
// one stopped apiserver made a plan of two manifests take 38 s instead of
// 1 s. The engine therefore remembers, per member connection, that a member
// did not answer (a probe, a status collection or a call that met a
// transport error) and for StatusTTL fails every later call to it at once
// with that error, as it already reuses the member's status for a run. A
// member that answers is probed once per StatusTTL before its first use,
// under the probe's short deadline, so a member that stops answering costs
// the run one probe timeout, not one request timeout per object.

// reachEntry is what the engine last learnt of whether a member answers.
type reachEntry struct {
	fingerprint string
	at          time.Time
	// down is the error that showed the member does not answer; nil when
	// it answered (or answered with an error of its own).
	down error
}

// recentReach returns what is known of the member's connection fingerprint
// from the last StatusTTL.
func (e *Engine) recentReach(name, fingerprint string) (reachEntry, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	entry, ok := e.reach[name]
	return entry, ok && entry.fingerprint == fingerprint && time.Since(entry.at) < e.opts.StatusTTL
}

// noteReach records the outcome of a probe or request: only an error that
// says the member did not answer (api.ErrNotConnected) marks it down; an
// answer, even a refusal, marks it reachable.
func (e *Engine) noteReach(name, fingerprint string, err error) {
	entry := reachEntry{fingerprint: fingerprint, at: time.Now()}
	if errors.Is(err, api.ErrNotConnected) {
		entry.down = err
	}
	e.mu.Lock()
	e.reach[name] = entry
	e.mu.Unlock()
}

// markDown records that a call could not reach the member; an error that
// says so already is kept as it is.
func (e *Engine) markDown(name, fingerprint string, err error) {
	if !errors.Is(err, api.ErrNotConnected) {
		err = fmt.Errorf("cluster %s is %w: %w", name, api.ErrNotConnected, err)
	}
	e.noteReach(name, fingerprint, err)
}

// reachable returns nil when the member answered within the last
// StatusTTL, probing it now when nothing recent is known (one probe for all
// concurrent callers, under the probe's own deadline); otherwise the error
// that showed it does not answer, saying when that was learnt.
func (e *Engine) reachable(ctx context.Context, name string, client *member.Client) error {
	fingerprint := client.Fingerprint()
	if entry, ok := e.recentReach(name, fingerprint); ok {
		return e.remembered(entry)
	}
	ch := e.probes.DoChan(name+"\x00"+fingerprint, func() (any, error) {
		if entry, ok := e.recentReach(name, fingerprint); ok {
			return entry, nil
		}
		// The probe runs apart from the caller that started it: one caller
		// giving up must not be remembered as the member's answer.
		err := client.Probe(context.WithoutCancel(ctx))
		e.noteReach(name, fingerprint, err)
		entry, _ := e.recentReach(name, fingerprint)
		return entry, nil
	})
	select {
	case res := <-ch:
		return e.remembered(res.Val.(reachEntry))
	case <-ctx.Done():
		return fmt.Errorf("cluster %s: probe: %w", name, ctx.Err())
	}
}

// remembered is the error of a member known to be down, saying how long
// ago that was learnt, or nil.
func (e *Engine) remembered(entry reachEntry) error {
	if entry.down == nil {
		return nil
	}
	ago := time.Since(entry.at).Round(time.Second)
	if ago < time.Second {
		return entry.down
	}
	return fmt.Errorf("%w (learnt %s ago; asked again %s after that)", entry.down, ago, e.opts.StatusTTL)
}
