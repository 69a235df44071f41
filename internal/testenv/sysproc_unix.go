//go:build unix && !linux

package testenv

import "syscall"

// sysProcAttr puts a child in its own process group, or its own session when
// detached. Without Pdeathsig outside Linux, a killed test binary can leave
// children behind.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}
