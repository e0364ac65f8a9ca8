//go:build !linux

package scfhost

import "os/exec"

func setProcAttr(cmd *exec.Cmd) {}

func killProcess(cmd *exec.Cmd, done <-chan struct{}) {
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Kill()
}
