// Command scflocal runs the product's SCF Go functions on this machine the way
// Tencent runs them: each binary under the SCF Go runtime protocol (scfhost),
// behind a local API Gateway and timer built from serverless.yml (localgw).
//
//	scflocal serve  -serverless serverless.yml -bin-dir dist [-addr 127.0.0.1:8080] [-release-every 1m]
//	scflocal invoke -bin dist/reserve/main -event event.json [-timeout 10s] [-serverless serverless.yml]
//
// Each function gets only the environment names serverless.yml declares for it,
// their ${env:NAME} values taken from scflocal's own environment (so the settings
// are exported once, in the shell that starts it), plus the variables SCF itself
// sets (TENCENTCLOUD_*) and SALON_DEV (localgw.PlatformEnv): a setting
// serverless.yml forgets to pass is missing locally too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"salon/infra/localgw"
	"salon/infra/scfhost"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		os.Exit(serve(os.Args[2:]))
	case "invoke":
		os.Exit(invoke(os.Args[2:]))
	case "-h", "-help", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "scflocal: unknown mode %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  scflocal serve  -serverless serverless.yml -bin-dir DIR [-addr 127.0.0.1:8080] [-release-every 1m] [-max-instances 8]
      the local API Gateway and timers for every function DIR/<name>/main of serverless.yml
  scflocal invoke -bin DIR/<fn>/main -event EVENT.json [-timeout 10s] [-serverless serverless.yml] [-name fn]
      one invocation; prints the response payload (or the error) as JSON on stdout,
      exits 1 when the function failed
`)
}

func serve(args []string) int {
	fs := flag.NewFlagSet("scflocal serve", flag.ContinueOnError)
	specPath := fs.String("serverless", "serverless.yml", "the serverless.yml with the functions, routes and timers")
	binDir := fs.String("bin-dir", "", "directory holding <function>/main for each function (required)")
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	addr := fs.String("addr", "127.0.0.1:"+port, "listen address of the local API Gateway")
	every := fs.Duration("release-every", envDuration("RELEASE_EVERY", time.Minute),
		"interval of every enabled timer (the cron is not interpreted locally); default $RELEASE_EVERY or 1m")
	maxInstances := fs.Int("max-instances", scfhost.DefaultMaxInstances, "processes per function at most")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *binDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "scflocal serve: -bin-dir is required and there are no arguments")
		return 2
	}
	if *every <= 0 {
		fmt.Fprintln(os.Stderr, "scflocal serve: -release-every must be positive")
		return 2
	}
	spec, err := localgw.LoadServerless(*specPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scflocal:", err)
		return 2
	}

	host := scfhost.NewHost(os.Stderr)
	defer host.Close()
	registered := 0
	for _, fn := range spec.Functions {
		bin := filepath.Join(*binDir, fn.Name, "main")
		if _, err := os.Stat(bin); err != nil {
			fmt.Fprintf(os.Stderr, "scflocal: WARNING: function %s has no binary (%v); its routes answer 502\n", fn.Name, err)
			continue
		}
		err := host.Register(scfhost.Function{
			Name: fn.Name, Binary: bin, Env: localgw.FunctionEnv(fn, os.LookupEnv),
			Timeout: fn.Timeout, MemoryMB: fn.MemoryMB, MaxInstances: *maxInstances,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "scflocal:", err)
			return 2
		}
		registered++
	}
	if registered == 0 {
		fmt.Fprintf(os.Stderr, "scflocal: no function binaries under %s\n", *binDir)
		return 2
	}

	gw := localgw.NewGateway(spec.Routes, host, os.Stderr)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scflocal:", err)
		return 2
	}
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	timerCtx, stopTimers := context.WithCancel(ctx)
	defer stopTimers()
	var timers sync.WaitGroup
	for _, tt := range spec.Timers {
		if !tt.Enable {
			fmt.Fprintf(os.Stderr, "scflocal: timer %s is disabled in serverless.yml; not running it\n", tt.Name)
			continue
		}
		t := &localgw.Timer{Trigger: tt, Every: *every, Invoker: host, Log: os.Stderr}
		timers.Go(func() { t.Run(timerCtx) })
		fmt.Fprintf(os.Stderr, "scflocal: timer %s invokes %s every %s (cron %q in serverless.yml)\n", tt.Name, tt.Function, *every, tt.Cron)
	}
	fmt.Printf("scflocal: listening on http://%s (%d routes, %d functions, from %s)\n",
		ln.Addr(), len(spec.Routes), registered, spec.Path)

	code := 0
	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "scflocal: stopping")
	case err := <-served:
		fmt.Fprintln(os.Stderr, "scflocal:", err)
		code = 1
	}
	stop() // a second Ctrl-C kills at once; the kernel then kills the children (Pdeathsig)
	stopTimers()
	shutdown, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown) // lets requests in flight finish, for a moment
	host.Close()               // kills every function process; what is still running ends
	_ = srv.Close()
	timers.Wait()
	gw.Wait()
	return code
}

func invoke(args []string) int {
	fs := flag.NewFlagSet("scflocal invoke", flag.ContinueOnError)
	bin := fs.String("bin", "", "the function binary (required)")
	eventPath := fs.String("event", "", "the event JSON file, - for stdin (required)")
	timeout := fs.Duration("timeout", 10*time.Second, "the function timeout")
	memory := fs.Int("memory", scfhost.DefaultMemoryMB, "MemoryLimitInMb")
	name := fs.String("name", "", "the function name (default: the binary's directory name, or its name)")
	specPath := fs.String("serverless", "", "take timeout, memory and environment from this serverless.yml's function")
	requestID := fs.String("request-id", "", "the request id (default: generated)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *bin == "" || *eventPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "scflocal invoke: -bin and -event are required and there are no arguments")
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var event []byte
	var err error
	if *eventPath == "-" {
		event, err = io.ReadAll(os.Stdin)
	} else {
		event, err = os.ReadFile(*eventPath)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scflocal:", err)
		return 2
	}
	if !json.Valid(event) {
		// SCF refuses such an event before any function runs (InvalidParameterValue).
		fmt.Fprintf(os.Stderr, "scflocal: %s is not JSON\n", *eventPath)
		return 2
	}

	fn := scfhost.Function{Name: *name, Binary: *bin, Timeout: *timeout, MemoryMB: *memory, MaxInstances: 1}
	if fn.Name == "" {
		fn.Name = filepath.Base(*bin)
		if fn.Name == "main" {
			fn.Name = filepath.Base(filepath.Dir(*bin))
		}
	}
	if *specPath == "" {
		fmt.Fprintln(os.Stderr, "scflocal: no -serverless: the function gets no settings, only the platform's variables")
	}
	declared := localgw.Function{Name: fn.Name}
	if *specPath != "" {
		spec, err := localgw.LoadServerless(*specPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scflocal:", err)
			return 2
		}
		f, ok := spec.Function(fn.Name)
		if !ok {
			fmt.Fprintf(os.Stderr, "scflocal: %s defines no function %s\n", *specPath, fn.Name)
			return 2
		}
		declared = f
		if !set["timeout"] {
			fn.Timeout = f.Timeout
		}
		if !set["memory"] {
			fn.MemoryMB = f.MemoryMB
		}
	}
	fn.Env = localgw.FunctionEnv(declared, os.LookupEnv)

	host := scfhost.NewHost(os.Stderr)
	defer host.Close()
	if err := host.Register(fn); err != nil {
		fmt.Fprintln(os.Stderr, "scflocal:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		host.Close() // Ctrl-C: end the invocation and its process
	}()

	id := *requestID
	if id == "" {
		id = scfhost.NewRequestID()
	}
	began := time.Now()
	out, ierr, err := host.Invoke(ctx, fn.Name, event, id)
	took := time.Since(began).Round(time.Millisecond)
	switch {
	case err != nil:
		if errors.Is(err, scfhost.ErrClosed) && ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "scflocal: interrupted")
			return 130
		}
		fmt.Fprintln(os.Stderr, "scflocal:", err)
		return 2
	case ierr != nil:
		b, _ := json.Marshal(ierr)
		fmt.Printf("%s\n", b)
		fmt.Fprintf(os.Stderr, "scflocal: %s request %s failed after %s: %s\n", fn.Name, id, took, ierr)
		return 1
	}
	fmt.Printf("%s\n", out)
	fmt.Fprintf(os.Stderr, "scflocal: %s request %s took %s\n", fn.Name, id, took)
	return 0
}

// envDuration reads a Go duration from the environment, or returns def.
func envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scflocal: %s=%q is not a duration; using %s\n", name, v, def)
		return def
	}
	return d
}
