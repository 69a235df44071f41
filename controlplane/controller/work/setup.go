package work

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
)

// SetupExecution registers the execution controller with mgr: in the
// control plane, or in a pull-mode agent (agent) for the Works of its own
// cluster.
func SetupExecution(mgr ctrl.Manager, exec *execution.Executor, opts shared.Options, now func() time.Time, events shared.Recorder, agent bool) error {
	e := &workExecution{client: mgr.GetClient(), executor: exec, opts: opts, now: now, slots: newMemberSlots(opts.MemberWorkers), events: events, agent: agent}
	if !agent {
		e.signer = &workSigner{reader: mgr.GetAPIReader(), writer: mgr.GetClient()}
	}
	return e.setup(mgr)
}

// SetupStatus registers the work status controller with mgr, reading
// the members through members and hearing of their applied objects'
// changes through watches (nil: read back every resync only): in the
// control plane, or in a pull-mode agent (agent).
func SetupStatus(mgr ctrl.Manager, exec *execution.Executor, members execution.Connector, watches shared.AppliedWatcher, opts shared.Options, now func() time.Time, agent bool) error {
	s := &workStatus{client: mgr.GetClient(), executor: exec, members: members, watches: watches, opts: opts.WithDefaults(), now: now, slots: newMemberSlots(opts.StatusMemberWorkers()), agent: agent, reads: newReadBacks()}
	return s.setup(mgr)
}
