package testenv

import "syscall"

// sysProcAttr puts a child in its own process group so terminal signals reach
// only the test binary, and kills it if the test binary dies. A detached child
// gets its own session instead and outlives its parent.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
