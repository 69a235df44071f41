package testenv

import (
	"os"
	"strconv"
	"strings"
)

// cmdline returns the argument vector of a live process. A zombie has an empty
// one, so it never matches a recorded command line.
func cmdline(pid int) ([]string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"), nil
}
