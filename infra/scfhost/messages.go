package scfhost

// The wire messages of the SCF Go runtime protocol: net/rpc with its default gob
// codec, methods Function.Ping and Function.Invoke. These are copies of
// github.com/tencentyun/scf-go-lib/cloudfunction/messages (commit 13c9a7e). Gob
// matches struct fields by name, not by type name, so the host does not need to
// import the library the functions are built with; keep the field names and
// types exactly as they are there.

type pingRequest struct{}

type pingResponse struct{}

type invokeRequestTimestamp struct {
	Seconds int64
	Nanos   int64
}

type invokeRequest struct {
	Payload               []byte
	RequestId             string
	TraceId               string
	Deadline              invokeRequestTimestamp
	InvokedFunctionUnique string
	ClientContext         []byte
	Namespace             string
	FunctionName          string
	FunctionVersion       string
	MemoryLimitInMb       int32
	TimeLimitInMs         int32
	Environment           string // a JSON object of string to string; the runtime os.Setenvs each pair on every invoke
	TencentcloudRegion    string
	TencentcloudAppID     string
	TencentcloudUin       string
	FunctionTrace         string
}

type invokeResponse struct {
	Payload []byte
	Error   *invokeResponseError
}

type invokeResponseError struct {
	Message    string
	Type       string
	StackTrace []*invokeResponseErrorStackFrame
	ShouldExit bool // set after a panic: the runtime asks to be recycled
}

type invokeResponseErrorStackFrame struct {
	Path  string
	Line  int32
	Label string
}
