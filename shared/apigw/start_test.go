package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/rpc"
	"os"
	"testing"
	"time"

	"github.com/tencentyun/scf-go-lib/cloudfunction/messages"
	"github.com/tencentyun/scf-go-lib/functioncontext"
)

// TestLocalServe: the server Start runs under the local runtime is the
// library's own Function: the event decoded, the deadline and the request id
// in the context, the environment applied, a panic reported with ShouldExit,
// an error as the library reports it; on the listener it was given.
func TestLocalServe(t *testing.T) {
	type event struct{ Name string }
	srv, err := rpcServer(func(ctx context.Context, e event) (map[string]string, error) {
		switch e.Name {
		case "panic":
			panic("boom")
		case "fail":
			return nil, errors.New("asked to fail")
		}
		fc, _ := functioncontext.FromContext(ctx)
		dl, _ := ctx.Deadline()
		return map[string]string{"hello": e.Name, "request": fc.RequestID, "env": os.Getenv("APIGW_START_TEST"),
			"deadline": dl.UTC().Format(time.RFC3339)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go srv.Accept(ln)
	c, err := rpc.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Cleanup(func() { os.Unsetenv("APIGW_START_TEST") })

	dl := time.Now().Add(time.Minute).UTC().Truncate(time.Second)
	invoke := func(name string) messages.InvokeResponse {
		t.Helper()
		var resp messages.InvokeResponse
		req := &messages.InvokeRequest{Payload: []byte(`{"Name":"` + name + `"}`), RequestId: "req-1",
			Deadline: messages.InvokeRequest_Timestamp{Seconds: dl.Unix()}, Environment: `{"APIGW_START_TEST":"applied"}`}
		if err := c.Call("Function.Invoke", req, &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := invoke("salon")
	var got map[string]string
	if resp.Error != nil || json.Unmarshal(resp.Payload, &got) != nil {
		t.Fatalf("answer %s, error %+v", resp.Payload, resp.Error)
	}
	if got["hello"] != "salon" || got["request"] != "req-1" || got["env"] != "applied" || got["deadline"] != dl.Format(time.RFC3339) {
		t.Errorf("answer %v", got)
	}
	if resp := invoke("panic"); resp.Error == nil || !resp.Error.ShouldExit || resp.Error.Message != "boom" {
		t.Errorf("panic answered %+v", resp.Error)
	}
	if resp := invoke("fail"); resp.Error == nil || resp.Error.ShouldExit || resp.Error.Message != "asked to fail" {
		t.Errorf("error answered %+v", resp.Error)
	}
	var pong messages.PingResponse
	if err := c.Call("Function.Ping", &messages.PingRequest{}, &pong); err != nil {
		t.Errorf("ping: %v", err)
	}
}
