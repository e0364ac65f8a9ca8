package mysqltest

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill a private server whose test process died
// without its cleanup (a timeout, a signal), so none is left running.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
