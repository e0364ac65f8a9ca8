package scfhost

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the function in its own process group, so a Ctrl-C in the
// terminal reaches the host (which then kills its children) and not the functions
// directly, and asks the kernel to kill it if the host dies without cleaning up.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killProcess kills the process and anything it started in its group.
func killProcess(cmd *exec.Cmd, done <-chan struct{}) {
	select {
	case <-done: // already reaped: its pid may belong to someone else now
		return
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
