//go:build !linux

package mysqltest

import "os/exec"

// setProcAttr does nothing here: only Linux can tie a child's life to its parent.
func setProcAttr(cmd *exec.Cmd) {}
