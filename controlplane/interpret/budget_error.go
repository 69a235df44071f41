package interpret

import (
	"errors"
	"strings"
)

// IsBudgetExceeded reports whether err is a call of a customization's
// script that ran out of one of its budgets (instructions, memory, or a
// library call refused as too large): the script, not the object it was
// given, is at fault, so a caller may stop running that script.
func IsBudgetExceeded(err error) bool {
	return errors.Is(err, errBudget)
}

// budgetError is a Lua error whose message reports an exhausted budget:
// the budget and the string library guards raise their refusal as a Lua
// error, which reaches Go as text, so the text is what says it.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

func (e *budgetError) Unwrap() error { return errBudget }

// luaError is the error of a Lua error message, wrapping errBudget when
// the message reports one. A script that raises that text itself only
// marks its own kind broken.
func luaError(msg string) error {
	if strings.Contains(msg, errBudget.Error()) {
		return &budgetError{msg: msg}
	}
	return errors.New(msg)
}
