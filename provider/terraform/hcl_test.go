package terraform

import (
	"regexp"
	"strconv"
	"strings"
)

// quoteHCL returns s as an HCL string literal. Go's quoting is close enough for
// test input that holds no template sequences.
func quoteHCL(s string) string { return strconv.Quote(s) }

// wrappedMessage matches msg in terraform's output, where long diagnostics are
// wrapped: any run of spaces in msg may appear as a line break.
func wrappedMessage(msg string) *regexp.Regexp {
	parts := strings.Fields(msg)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

func regexpMust(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }
