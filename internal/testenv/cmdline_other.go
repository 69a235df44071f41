//go:build !linux

package testenv

import (
	"os/exec"
	"strconv"
	"strings"
)

// cmdline returns the argument vector of a live process as ps shows it, split
// on spaces (no argument this package passes contains one unless its
// directory does).
func cmdline(pid int) ([]string, error) {
	out, err := exec.Command("ps", "-o", "args=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}
