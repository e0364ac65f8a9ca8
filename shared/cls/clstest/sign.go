package clstest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	algorithm  = "TC3-HMAC-SHA256"
	terminator = "tc3_request"
)

// authorization is a parsed header:
// "TC3-HMAC-SHA256 Credential=<id>/<date>/<service>/tc3_request, SignedHeaders=a;b, Signature=<hex>".
type authorization struct {
	secretID      string
	date          string
	service       string
	signedHeaders []string
	signature     string
}

func parseAuthorization(h string) (authorization, *apiError) {
	var a authorization
	bad := func(why string) (authorization, *apiError) {
		return a, reject(CodeInvalidAuthorization, "Authorization header is invalid: %s", why)
	}
	if h == "" {
		return bad("missing")
	}
	alg, rest, ok := strings.Cut(h, " ")
	if !ok || alg != algorithm {
		return bad("algorithm must be " + algorithm)
	}
	var credential, signed string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			a.signature = v
		}
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 4 || scope[0] == "" || scope[3] != terminator {
		return bad("Credential must be <SecretId>/<date>/<service>/" + terminator)
	}
	a.secretID, a.date, a.service = scope[0], scope[1], scope[2]
	if signed == "" || a.signature == "" {
		return bad("SignedHeaders and Signature are required")
	}
	a.signedHeaders = strings.Split(signed, ";")
	if !slices.IsSorted(a.signedHeaders) || !slices.Contains(a.signedHeaders, "content-type") || !slices.Contains(a.signedHeaders, "host") {
		return bad("SignedHeaders must be sorted and include content-type and host")
	}
	return a, nil
}

// verifySignature recomputes the TC3-HMAC-SHA256 signature as the cloud API 3.0
// defines it (https://cloud.tencent.com/document/api/213/30654) and compares.
func verifySignature(r *http.Request, body []byte, a authorization, service, secretID, secretKey string, now time.Time) *apiError {
	if a.secretID != secretID {
		return reject(CodeSecretIDNotFound, "the SecretId is not found")
	}
	tsHeader := r.Header.Get("X-TC-Timestamp")
	ts, err := strconv.ParseInt(tsHeader, 10, 64)
	if err != nil {
		return reject(CodeMissingParameter, "X-TC-Timestamp is missing or not a number")
	}
	signedAt := time.Unix(ts, 0)
	if d := now.Sub(signedAt); d > MaxClockSkew || d < -MaxClockSkew {
		return reject(CodeSignatureExpire, "signature expired: timestamp %d is %v from server time", ts, d.Round(time.Second))
	}
	if want := signedAt.UTC().Format("2006-01-02"); a.date != want {
		return reject(CodeInvalidAuthorization, "credential date %s does not match timestamp date %s", a.date, want)
	}
	if a.service != service {
		return reject(CodeInvalidAuthorization, "credential service %q is not %s", a.service, service)
	}

	var canonicalHeaders strings.Builder
	for _, name := range a.signedHeaders {
		v := r.Header.Get(name)
		if name == "host" {
			v = r.Host
		}
		fmt.Fprintf(&canonicalHeaders, "%s:%s\n", name, strings.ToLower(strings.TrimSpace(v)))
	}
	payloadHash := sha256Hex(body)
	if r.Header.Get("X-TC-Content-SHA256") == "UNSIGNED-PAYLOAD" {
		payloadHash = sha256Hex([]byte("UNSIGNED-PAYLOAD"))
	}
	canonicalRequest := strings.Join([]string{
		r.Method,
		"/", // the cloud API's canonical URI is always "/"
		r.URL.RawQuery,
		canonicalHeaders.String(),
		strings.Join(a.signedHeaders, ";"),
		payloadHash,
	}, "\n")
	stringToSign := strings.Join([]string{
		algorithm,
		tsHeader,
		a.date + "/" + a.service + "/" + terminator,
		sha256Hex([]byte(canonicalRequest)),
	}, "\n")

	secretDate := hmacSHA256([]byte("TC3"+secretKey), a.date)
	secretService := hmacSHA256(secretDate, a.service)
	secretSigning := hmacSHA256(secretService, terminator)
	want := hmacSHA256(secretSigning, stringToSign)

	got, err := hex.DecodeString(a.signature)
	if err != nil || !hmac.Equal(got, want) {
		return reject(CodeSignatureFailure, "the signature does not match")
	}
	if r.URL.Path != "/" {
		return reject(CodeInvalidParameter, "path must be /, got %s", r.URL.Path)
	}
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// TC3Error is a rejection by VerifyTC3, with the cloud API's error code.
type TC3Error struct {
	Code    string
	Message string
}

func (e *TC3Error) Error() string { return e.Code + ": " + e.Message }

// VerifyTC3 checks a cloud API 3.0 request the way the service named by service
// (the credential scope: "cls", "scf", "apigateway", ...) does: the Authorization
// header's form, the SecretId, the timestamp window around now, and the
// TC3-HMAC-SHA256 signature over the method, query, signed headers and body. It
// returns the SecretId the request carried, and a *TC3Error when it is refused.
// Other fakes of Tencent cloud APIs use it so that every one checks signatures.
func VerifyTC3(r *http.Request, body []byte, service, secretID, secretKey string, now time.Time) (string, error) {
	auth, aerr := parseAuthorization(r.Header.Get("Authorization"))
	if aerr != nil {
		return "", &TC3Error{Code: aerr.code, Message: aerr.message}
	}
	if aerr := verifySignature(r, body, auth, service, secretID, secretKey, now); aerr != nil {
		return auth.secretID, &TC3Error{Code: aerr.code, Message: aerr.message}
	}
	return auth.secretID, nil
}
