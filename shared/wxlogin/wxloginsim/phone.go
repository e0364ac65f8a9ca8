package wxloginsim

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// phones is the getuserphonenumber state, under Server.mu: the codes issued and
// not yet used, each with the number it stands for.
type phones struct {
	codes map[string]string
	calls int
}

// PhoneCode issues a one-time code for phone, as the mini-program's
// getPhoneNumber button gets from WeChat: the first getuserphonenumber with it
// answers phone, every later one 40029, like WeChat.
func (s *Server) PhoneCode(phone string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	code := "phone_" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phone.codes == nil {
		s.phone.codes = map[string]string{}
	}
	s.phone.codes[code] = phone
	return code
}

// PhoneCalls returns how many getuserphonenumber requests have been received.
func (s *Server) PhoneCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phone.calls
}

// phoneNumber is POST /wxa/business/getuserphonenumber?access_token=: the
// access token is checked like subscribe/send's (40001, 42001), then the code
// (40029 when unknown or used).
func (s *Server) phoneNumber(w http.ResponseWriter, r *http.Request) {
	if !postOnly(w, r) {
		return
	}
	s.mu.Lock()
	s.phone.calls++
	s.mu.Unlock()
	if s.failed(w, r) {
		return
	}
	if code, msg := s.checkToken(r.URL.Query().Get("access_token")); code != 0 {
		writeJSON(w, errBody(code, msg))
		return
	}
	var in struct {
		Code string `json:"code"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	s.mu.Lock()
	phone, ok := s.phone.codes[in.Code]
	delete(s.phone.codes, in.Code)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, errBody(40029, "invalid code"))
		return
	}
	writeJSON(w, map[string]any{"errcode": 0, "errmsg": "ok", "phone_info": map[string]any{
		"phoneNumber": "+86" + phone, "purePhoneNumber": phone, "countryCode": "86",
		"watermark": map[string]any{"timestamp": s.now().Unix(), "appid": s.AppID},
	}})
}
