package scfhost

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFunctionListensOnLoopbackOnly: a function process started by the host
// listens on 127.0.0.1 only, not on every interface as the SCF runtime
// library does by itself; the kernel's socket table says so.
func TestFunctionListensOnLoopbackOnly(t *testing.T) {
	h, _ := newHost(t, Function{Name: "slots", Binary: buildFn(t), Timeout: 5 * time.Second})
	var out echoOut
	if ierr := invoke(t, h, "slots", `{"op":"echo"}`, "req-1", &out); ierr != nil {
		t.Fatal(ierr)
	}
	port, err := strconv.Atoi(out.Env["_LAMBDA_SERVER_PORT"])
	if err != nil {
		t.Fatalf("the function has no _LAMBDA_SERVER_PORT: %v", out.Env)
	}
	var listening []string
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", out.PID, table))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, p, _ := strings.Cut(f[1], ":")
			if n, _ := strconv.ParseInt(p, 16, 32); int(n) == port {
				listening = append(listening, table+" "+addr)
			}
		}
	}
	if len(listening) != 1 || listening[0] != "tcp 0100007F" {
		t.Errorf("port %d listens on %v, want only 127.0.0.1 (tcp 0100007F)", port, listening)
	}
}
