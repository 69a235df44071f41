//go:build !unix

package testenv

import "syscall"

// sysProcAttr has nothing to set on platforms the pinned binaries do not run on.
func sysProcAttr(bool) *syscall.SysProcAttr { return nil }
