package cli

import (
	"errors"
	"flag"
)

// parseFailed is the exit code of a command whose flags did not parse: 0
// when the user asked for -h or -help (the flag package has printed the
// usage), code otherwise (it has printed the error and the usage).
func parseFailed(err error, code int) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return code
}
