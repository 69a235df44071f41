package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
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

// apiGroupsFlag defines --api-groups on fs, the family of API groups the
// command's process speaks (apis.Groups); what says what the command does
// with them, and tail adds to the help text.
func apiGroupsFlag(fs *flag.FlagSet, what, tail string) *string {
	return fs.String("api-groups", string(apis.FlotillaGroups), "`family` of API groups "+what+": flotilla (cluster.flotilla.io, policy.flotilla.io, ...; Works in flotilla-es-<cluster>) or karmada (Karmada's own cluster.karmada.io, policy.karmada.io, ..., so Karmada's YAML applies unchanged; Works in karmada-es-<cluster>)"+tail)
}

// useAPIGroups parses the --api-groups value s and makes it this process'
// API groups (apis.Use), the one place a command chooses them; it must run
// before anything builds a scheme or a client. It reports a bad value on
// stderr and returns false.
func useAPIGroups(s string, stderr io.Writer) bool {
	groups, err := apis.ParseGroups(s)
	if err != nil {
		fmt.Fprintf(stderr, "--api-groups: %v\n", err)
		return false
	}
	apis.Use(groups)
	return true
}
