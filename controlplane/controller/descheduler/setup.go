package descheduler

import (
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup adds the descheduler to mgr. It runs on the leader only, every
// opts.DeschedulingInterval, over the members' informers in ms.
func Setup(mgr ctrl.Manager, ms *shared.Members, opts shared.Options, now func() time.Time, events shared.Recorder) error {
	opts = opts.WithDefaults()
	d := &descheduler{client: mgr.GetClient(), members: ms, opts: opts, now: now, events: events,
		log: mgr.GetLogger().WithName("descheduler")}
	if err := mgr.Add(d); err != nil {
		return fmt.Errorf("add descheduler: %w", err)
	}
	return nil
}
