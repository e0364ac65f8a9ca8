package apigw

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net"
	"net/rpc"
	"os"
	"reflect"
	"unsafe"

	"github.com/tencentyun/scf-go-lib/cloudfunction"
)

// ListenHostEnv names the variable with which the local runtime
// (infra/scfhost) asks a function to listen on one address only. SCF never
// sets it: there the function starts exactly as cloudfunction.Start starts it.
const ListenHostEnv = "SALON_LISTEN_HOST"

// Start is what each function's main calls with its handler: on SCF,
// cloudfunction.Start itself. scf-go-lib listens on 0.0.0.0 (SCF's runtime
// reaches the function that way, and the library offers no other address), so
// on a developer's machine every function would be reachable from the
// network; with ListenHostEnv set, the same library Function (the same
// Invoke: deadline, environment, panics) is served on that host only.
func Start[In, Out any](h func(context.Context, In) (Out, error)) {
	host := os.Getenv(ListenHostEnv)
	if host == "" {
		cloudfunction.Start(h)
		return
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, os.Getenv("_LAMBDA_SERVER_PORT")))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := rpcServer(h)
	if err != nil {
		log.Fatal(err)
	}
	srv.Accept(ln)
	log.Fatal("accept should not have returned")
}

// rpcServer is the net/rpc server the runtime calls: the library's Function,
// registered under its own name, around h.
func rpcServer[In, Out any](h func(context.Context, In) (Out, error)) (*rpc.Server, error) {
	fn := new(cloudfunction.Function)
	// The library sets its handler only inside StartHandler, which also
	// listens on 0.0.0.0; set the same field here. A library without it is
	// refused, never served half-built.
	field := reflect.ValueOf(fn).Elem().FieldByName("handler")
	if !field.IsValid() || !reflect.TypeOf(jsonHandler[In, Out](nil)).AssignableTo(field.Type()) {
		return nil, errors.New("apigw: scf-go-lib's Function has no handler field of type Handler; serve it with cloudfunction.Start")
	}
	reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Set(reflect.ValueOf(jsonHandler[In, Out](h)))
	srv := rpc.NewServer()
	if err := srv.RegisterName("Function", fn); err != nil {
		return nil, err
	}
	return srv, nil
}

// jsonHandler decodes the event and encodes the answer the way the library's
// own wrapper of a func(context.Context, In) (Out, error) does.
type jsonHandler[In, Out any] func(context.Context, In) (Out, error)

func (h jsonHandler[In, Out]) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var in In
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, err
	}
	out, err := h(ctx, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
