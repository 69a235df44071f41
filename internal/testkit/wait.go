package testkit

import (
	"testing"
	"time"
)

// DefaultEvery is how often Eventually checks its condition.
const DefaultEvery = 200 * time.Millisecond

// Eventually waits until f reports true, checking every DefaultEvery, and
// fails the test with f's last reason once within has passed. f returns
// whether the condition holds and, when it does not, why not.
func Eventually(t testing.TB, within time.Duration, what string, f func() (bool, string)) {
	t.Helper()
	EventuallyEvery(t, DefaultEvery, within, what, f)
}

// EventuallyEvery is Eventually with its own period.
func EventuallyEvery(t testing.TB, every, within time.Duration, what string, f func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(within)
	last := ""
	for time.Now().Before(end) {
		ok, why := f()
		if ok {
			return
		}
		last = why
		time.Sleep(every)
	}
	t.Fatalf("%s: not reached within %v: %s", what, within, last)
}
