package cli

import (
	"io"
	"os"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestMain makes the process logger before any test runs. controller-runtime
// binds its root logger once: to a discarding sink when nothing set one
// within 30 s of its first use, after which a later SetLogger no longer
// reaches the loggers already made. A test that runs reconcilers in-process
// for longer than that without a command's logger would silence every
// later test's controller-runtime and client-go logs, the credential scan of
// TestControlplaneLogsNoCredentials among them. Each command still sets the
// logger's writer and level (processLogger switches both). It also removes
// the provider binary the process tests share (testkit.SharedProvider)
// once every test has run.
func TestMain(m *testing.M) {
	processLogger("flotilla", "error", io.Discard)
	code := m.Run()
	testkit.RemoveSharedProvider()
	os.Exit(code)
}
