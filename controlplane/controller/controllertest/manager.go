package controllertest

import (
	"context"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Options are the control plane's options for a test fleet: short probe,
// threshold, eviction and resync periods, so failover happens in seconds.
func Options(fleet string) shared.Options {
	return shared.Options{
		Fleet:            fleet,
		ProbeInterval:    300 * time.Millisecond,
		FailureThreshold: time.Second,
		SuccessThreshold: time.Second,
		NoExecuteAfter:   2 * time.Second,
		Resync:           time.Second,
	}
}

// SetupControlPlane is a setup step for StartManager that runs the control
// plane's reconcilers with opts.
func SetupControlPlane(opts shared.Options) func(manager.Manager) error {
	return func(mgr manager.Manager) error { return controller.Setup(mgr, opts) }
}

// StartManager runs a controller-runtime manager of cfg with opts, after the
// setup steps, until the returned stop is called or the test ends. Metrics
// and health probes listen nowhere and controller names may repeat (a test
// starts a second manager after stopping the first). stop waits until the
// manager has stopped; a manager that stopped with an error fails the test,
// with the goroutines still running, so a runnable that did not stop shows
// where it is.
func StartManager(t testing.TB, cfg *rest.Config, opts ctrl.Options, setup ...func(manager.Manager) error) (stop func()) {
	t.Helper()
	if opts.Metrics.BindAddress == "" {
		opts.Metrics = metricsserver.Options{BindAddress: "0"}
	}
	if opts.HealthProbeBindAddress == "" {
		opts.HealthProbeBindAddress = "0"
	}
	opts.Controller.SkipNameValidation = ptr.To(true)
	if opts.Cache.DefaultTransform == nil {
		// As the controlplane command's cache does.
		opts.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range setup {
		if err := s(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				var stacks strings.Builder
				_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
				t.Errorf("manager: %v\ngoroutines:\n%s", err, stacks.String())
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
