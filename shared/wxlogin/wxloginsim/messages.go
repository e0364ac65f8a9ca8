package wxloginsim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// TokenTTL is how long an access token lives, as WeChat's expires_in says.
const TokenTTL = 7200 * time.Second

// maxMessages is how many accepted messages the simulator keeps (the oldest go
// first), so a long dev.sh session does not grow without bound.
const maxMessages = 1000

// Message is one subscribe message the simulator accepted, with each keyword's
// value (data.thing1.value as data["thing1"]).
type Message struct {
	ToUser     string            `json:"touser"`
	TemplateID string            `json:"template_id"`
	Page       string            `json:"page"`
	Data       map[string]string `json:"data"`
	ReceivedAt time.Time         `json:"received_at"`
}

// messaging is the access-token and subscribe-message state, under Server.mu.
type messaging struct {
	token      string          // the valid token, "" before the first stable_token
	tokenExp   time.Time       // when it expires
	expired    map[string]bool // tokens that expired (42001), as opposed to replaced (40001)
	tokenCalls int
	forced     int
	sendCalls  int
	failSends  int
	refused    map[string]bool
	templates  map[string]bool // nil: any template id
	messages   []Message
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// AcceptTemplates makes subscribe/send accept only these template ids (else 40037).
// Without a call, any id is accepted.
func (s *Server) AcceptTemplates(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msg.templates = map[string]bool{}
	for _, id := range ids {
		s.msg.templates[id] = true
	}
}

// RefuseMessagesFor makes subscribe/send answer 43101 for these openids, as WeChat
// does for a customer without a subscription.
func (s *Server) RefuseMessagesFor(openids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msg.refused == nil {
		s.msg.refused = map[string]bool{}
	}
	for _, o := range openids {
		s.msg.refused[o] = true
	}
}

// ExpireToken expires the current access token now: sends with it answer 42001, and
// stable_token issues a new one.
func (s *Server) ExpireToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msg.token != "" {
		s.expireLocked()
	}
}

func (s *Server) expireLocked() {
	if s.msg.expired == nil {
		s.msg.expired = map[string]bool{}
	}
	s.msg.expired[s.msg.token] = true
	s.msg.token = ""
}

// FailNextSends makes the next n subscribe/send requests answer errcode -1 ("system
// error"), as during an outage, whatever they carry.
func (s *Server) FailNextSends(n int) {
	s.mu.Lock()
	s.msg.failSends = n
	s.mu.Unlock()
}

// Messages returns the subscribe messages accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.msg.messages))
	copy(out, s.msg.messages)
	return out
}

// TokenCalls returns how many stable_token requests were received, and how many of
// them asked for force_refresh.
func (s *Server) TokenCalls() (all, forced int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msg.tokenCalls, s.msg.forced
}

// SendCalls returns how many subscribe/send requests were received, accepted or not.
func (s *Server) SendCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msg.sendCalls
}

// Token returns the currently valid access token ("" if none), for tests that want
// to prove it never shows up where it should not.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msg.token != "" && !s.now().Before(s.msg.tokenExp) {
		return ""
	}
	return s.msg.token
}

func newToken() string {
	var b [48]byte
	_, _ = rand.Read(b[:])
	return "SIM_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// decodeBody reads a JSON request body into v, or answers 47001 as WeChat does
// for a body it cannot parse.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		writeJSON(w, errBody(47001, "data format error"))
		return false
	}
	return true
}

// postOnly answers WeChat's 43002 to anything but POST.
func postOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		writeJSON(w, errBody(43002, "require POST method"))
		return false
	}
	return true
}

func (s *Server) stableToken(w http.ResponseWriter, r *http.Request) {
	if !postOnly(w, r) {
		return
	}
	s.mu.Lock()
	s.msg.tokenCalls++
	s.mu.Unlock()
	if s.failed(w, r) {
		return
	}
	var in struct {
		GrantType    string `json:"grant_type"`
		AppID        string `json:"appid"`
		Secret       string `json:"secret"`
		ForceRefresh bool   `json:"force_refresh"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	switch {
	case in.GrantType != "client_credential":
		writeJSON(w, errBody(40002, "invalid grant_type"))
		return
	case in.AppID == "":
		writeJSON(w, errBody(41002, "appid missing"))
		return
	case in.AppID != s.AppID:
		writeJSON(w, errBody(40013, "invalid appid"))
		return
	case in.Secret == "":
		writeJSON(w, errBody(41004, "appsecret missing"))
		return
	case in.Secret != s.AppSecret:
		writeJSON(w, errBody(40125, "invalid appsecret"))
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.msg.token != "" && !now.Before(s.msg.tokenExp) {
		s.expireLocked()
	}
	if in.ForceRefresh {
		// The previous token becomes invalid (40001), not expired.
		s.msg.forced++
		s.msg.token = ""
	}
	if s.msg.token == "" {
		s.msg.token, s.msg.tokenExp = newToken(), now.Add(TokenTTL)
	}
	// Normal mode hands out the same token with the time it has left.
	left := int64(s.msg.tokenExp.Sub(now) / time.Second)
	writeJSON(w, map[string]any{"access_token": s.msg.token, "expires_in": left})
}

func (s *Server) subscribeSend(w http.ResponseWriter, r *http.Request) {
	if !postOnly(w, r) {
		return
	}
	s.mu.Lock()
	s.msg.sendCalls++
	outage := s.msg.failSends > 0
	if outage {
		s.msg.failSends--
	}
	s.mu.Unlock()
	if outage {
		writeJSON(w, errBody(-1, "system error"))
		return
	}
	if s.failed(w, r) {
		return
	}
	if code, msg := s.checkToken(r.URL.Query().Get("access_token")); code != 0 {
		writeJSON(w, errBody(code, msg))
		return
	}
	var in struct {
		ToUser     string                     `json:"touser"`
		TemplateID string                     `json:"template_id"`
		Page       string                     `json:"page"`
		Data       map[string]json.RawMessage `json:"data"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	s.mu.Lock()
	templates := s.msg.templates
	refused := s.msg.refused[in.ToUser]
	s.mu.Unlock()
	switch {
	case in.ToUser == "":
		writeJSON(w, errBody(40003, "invalid openid"))
		return
	case in.TemplateID == "" || (templates != nil && !templates[in.TemplateID]):
		writeJSON(w, errBody(40037, "invalid template id"))
		return
	}
	data, bad := checkData(in.Data)
	if bad != "" {
		writeJSON(w, errBody(47003, "argument invalid! "+bad))
		return
	}
	if refused {
		writeJSON(w, errBody(43101, "user refuse to accept the msg"))
		return
	}
	s.mu.Lock()
	if len(s.msg.messages) >= maxMessages {
		s.msg.messages = append(s.msg.messages[:0], s.msg.messages[1:]...)
	}
	s.msg.messages = append(s.msg.messages, Message{ToUser: in.ToUser, TemplateID: in.TemplateID, Page: in.Page, Data: data, ReceivedAt: s.now().UTC()})
	id := s.msg.sendCalls
	s.mu.Unlock()
	writeJSON(w, map[string]any{"errcode": 0, "errmsg": "ok", "msgid": id})
}

// checkToken answers 0 for the valid token, 42001 for one that expired, 40001 for
// anything else (a replaced, made-up or missing token).
func (s *Server) checkToken(tok string) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case tok == "":
		return 41001, "access_token missing"
	case tok == s.msg.token && s.now().Before(s.msg.tokenExp):
		return 0, ""
	case tok == s.msg.token || s.msg.expired[tok]:
		return 42001, "access_token expired"
	default:
		return 40001, "invalid credential, access_token is invalid or not latest"
	}
}

// checkData checks every keyword as WeChat does: a known type followed by its
// number, {"value": a string} within that type's limits. It returns the values, or
// what is wrong, naming the field.
func checkData(raw map[string]json.RawMessage) (map[string]string, string) {
	if len(raw) == 0 {
		return nil, "data is empty"
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	out := map[string]string{}
	for _, name := range names {
		var v struct {
			Value *string `json:"value"`
		}
		if err := json.Unmarshal(raw[name], &v); err != nil || v.Value == nil {
			return nil, fmt.Sprintf("data.%s.value is not a string", name)
		}
		if problem := checkValue(name, *v.Value); problem != "" {
			return nil, fmt.Sprintf("data.%s.value %s", name, problem)
		}
		out[name] = *v.Value
	}
	return out, ""
}

var (
	reKeyword = regexp.MustCompile(`^(thing|number|letter|symbol|character_string|time|date|amount|phone_number|car_number|name|phrase)[0-9]+$`)
	reClock   = `[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?`
	reDay     = `[0-9]{4}(-[0-9]{1,2}-[0-9]{1,2}|年[0-9]{1,2}月[0-9]{1,2}日)`
	reTime    = regexp.MustCompile(`^(` + reDay + ` ?)?` + reClock + `$`)
	reDate    = regexp.MustCompile(`^` + reDay + `( ` + reClock + `)?$`)
	reNumber  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	reLetter  = regexp.MustCompile(`^[A-Za-z]+$`)
	reASCII   = regexp.MustCompile(`^[!-~]+$`)
	rePhone   = regexp.MustCompile(`^[0-9+\-() ]+$`)
	reAmount  = regexp.MustCompile(`^\p{Sc}?[0-9]+(\.[0-9]+)?元?$`)
)

// checkValue returns what is wrong with value for keyword name, or "".
func checkValue(name, value string) string {
	m := reKeyword.FindStringSubmatch(name)
	if m == nil {
		return "has no such keyword type"
	}
	if value == "" {
		return "is empty"
	}
	if strings.IndexFunc(value, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) >= 0 {
		return "contains a line break or control character"
	}
	n := utf8.RuneCountInString(value)
	over := func(limit int) string {
		if n > limit {
			return fmt.Sprintf("is longer than %d characters", limit)
		}
		return ""
	}
	eachPart := func(re *regexp.Regexp, what string) string {
		for _, p := range strings.Split(value, "~") {
			if !re.MatchString(strings.TrimSpace(p)) {
				return "is not " + what
			}
		}
		return ""
	}
	switch m[1] {
	case "thing":
		return over(20)
	case "number":
		if !reNumber.MatchString(value) {
			return "is not a number"
		}
		return over(32)
	case "letter":
		if !reLetter.MatchString(value) {
			return "is not letters"
		}
		return over(32)
	case "symbol":
		return over(5)
	case "character_string":
		if !reASCII.MatchString(value) {
			return "is not digits, letters or symbols"
		}
		return over(32)
	case "time":
		return eachPart(reTime, "a 24-hour time")
	case "date":
		return eachPart(reDate, "a date")
	case "amount":
		if !reAmount.MatchString(value) {
			return "is not an amount"
		}
		if countDigits(value) > 10 {
			return "has more than 10 digits"
		}
		return ""
	case "phone_number":
		if !rePhone.MatchString(value) {
			return "is not a phone number"
		}
		return over(17)
	case "car_number":
		return over(8)
	case "name":
		if reLetter.MatchString(strings.ReplaceAll(value, " ", "")) {
			return over(20)
		}
		return over(10)
	case "phrase":
		return over(5)
	}
	return ""
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// listMessages answers GET /sim/messages: the accepted messages, oldest first;
// ?touser= keeps one customer's.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	who := r.URL.Query().Get("touser")
	out := []Message{}
	for _, m := range s.Messages() {
		if who == "" || m.ToUser == who {
			out = append(out, m)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}
