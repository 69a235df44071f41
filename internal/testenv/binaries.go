package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Version names the pinned binary set: kube-apiserver, kube-controller-manager
// and kube-scheduler, then etcd, then kwok. scripts/testenv.sh builds the same
// set into the same default directory; change both together.
const Version = "v1.35.4-v3.5.21-v0.7.0"

// DirEnv is the environment variable that overrides BinDir.
const DirEnv = "FLOTILLA_TESTENV_DIR"

const (
	binAPIServer = "kube-apiserver"
	binKCM       = "kube-controller-manager"
	binScheduler = "kube-scheduler"
	binEtcd      = "etcd"
	binKwok      = "kwok"
)

// BinDir returns the directory holding the pinned binaries: $FLOTILLA_TESTENV_DIR
// when set, else $HOME/.cache/flotilla/testenv/<Version>.
func BinDir() (string, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the testenv binaries: %w (set %s)", err, DirEnv)
	}
	return filepath.Join(home, ".cache", "flotilla", "testenv", Version), nil
}

// ErrBinariesMissing is wrapped by the error StartFleet returns when a pinned
// binary is absent.
var ErrBinariesMissing = errors.New("testenv binaries missing")

// checkBinaries reports every binary that mode needs but dir lacks, naming the
// command that builds them.
func checkBinaries(dir string, mode Mode) error {
	need := []string{binEtcd, binAPIServer}
	if mode == Full {
		need = append(need, binKCM, binScheduler, binKwok)
	}
	var missing []string
	for _, b := range need {
		info, err := os.Stat(filepath.Join(dir, b))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %v not found in %s; run `make testenv` to build them (or set %s)",
		ErrBinariesMissing, missing, dir, DirEnv)
}
