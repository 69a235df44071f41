package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// The long-running subcommands (controlplane, crossplane) share their
// logging, kubeconfig loading and health endpoints.

// processLogger returns the process' go-hclog logger at level and routes
// controller-runtime's and client-go's logs through it. controller-runtime
// takes its logger once per process (ctrl.SetLogger fulfils a one-time
// promise; later calls change nothing), so the logger is made on the first
// call and a later one (tests run several commands in one process) moves
// its output and level instead of making another that would hear nothing.
func processLogger(name, level string, out io.Writer) hclog.Logger {
	processLog.out.set(out)
	processLog.once.Do(func() {
		processLog.logger = hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.LevelFromString(level), Output: &processLog.out})
		log := logr.New(&hclogSink{logger: processLog.logger})
		ctrl.SetLogger(log)
		klog.SetLogger(log)
	})
	processLog.logger.SetLevel(hclog.LevelFromString(level))
	return processLog.logger.ResetNamed(name)
}

// processLog is the process-wide logger processLogger makes once.
var processLog struct {
	once   sync.Once
	out    switchWriter
	logger hclog.Logger
}

// switchWriter writes to the writer set last.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// loadKubeconfig reads a kubeconfig file, with an optional context.
func loadKubeconfig(path, context string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context},
	).ClientConfig()
}

// addHealthChecks serves /healthz and /readyz on the manager's probe address.
func addHealthChecks(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add healthz: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add readyz: %w", err)
	}
	return nil
}

// hclogSink is a logr.LogSink writing to go-hclog, so controller-runtime and
// client-go log through the same logger as the rest of the process. logr's
// V-levels map to hclog levels: 0 is Info, 1 Debug, 2 and above Trace.
type hclogSink struct {
	logger hclog.Logger
}

// Init is part of logr.LogSink; hclog needs no call-depth information.
func (s *hclogSink) Init(logr.RuntimeInfo) {}

// Enabled reports whether messages at a V-level are logged.
func (s *hclogSink) Enabled(level int) bool {
	return s.logger.GetLevel() <= hclogLevel(level)
}

// Info logs a message at the hclog level of its V-level.
func (s *hclogSink) Info(level int, msg string, kv ...any) {
	s.logger.Log(hclogLevel(level), msg, kv...)
}

// Error logs a message with its error at hclog's Error level.
func (s *hclogSink) Error(err error, msg string, kv ...any) {
	s.logger.Error(msg, append([]any{"error", err}, kv...)...)
}

// WithValues returns a sink whose messages carry kv.
func (s *hclogSink) WithValues(kv ...any) logr.LogSink {
	return &hclogSink{logger: s.logger.With(kv...)}
}

// WithName returns a sink whose logger name has name appended.
func (s *hclogSink) WithName(name string) logr.LogSink {
	return &hclogSink{logger: s.logger.Named(name)}
}

func hclogLevel(v int) hclog.Level {
	switch {
	case v <= 0:
		return hclog.Info
	case v == 1:
		return hclog.Debug
	default:
		return hclog.Trace
	}
}
