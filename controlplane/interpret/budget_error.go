package interpret

import "errors"

// errBudget is what every exhausted limit of a customization's call wraps:
// its instructions, the memory its strings take, the size of its result
// when converted to Go, and the wall-clock deadline.
var errBudget = errors.New("budget exhausted")

// IsBudgetExceeded reports whether err is a customization's call (or the
// load of its script) that ran out of its instruction, memory, result
// conversion or deadline budget, as opposed to a script that failed or
// returned a wrong result. A caller that sees one marks the customization's
// kind broken rather than retrying: the same script on the same object runs
// out again.
func IsBudgetExceeded(err error) bool { return errors.Is(err, errBudget) }

// exhausted is a script's error message from a call that ran out of a
// budget; it keeps the message, which names the line, and is errBudget.
type exhausted struct{ msg string }

func (e *exhausted) Error() string { return e.msg }

func (e *exhausted) Unwrap() error { return errBudget }
