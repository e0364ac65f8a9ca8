package handler

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"salon/shared/handler/consoleauth"
)

// The owner's staff accounts through the admin API: create, list (no hashes),
// disable, reset a password; the bearer token and a console session (with its
// CSRF token) alike; the same strict decoding and errors as every admin route.
func TestAdminStaffAccounts(t *testing.T) {
	s := newSystem(t)
	a := s.call("POST", "/admin/staff", testAdmin, map[string]any{"name": "小美", "role": "staff", "password": "xiaomei's password"})
	if a.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.Status, a.Body)
	}
	mei := obj(t, a.JSON["staff"])
	if mei["name"] != "小美" || mei["role"] != "staff" || mei["disabled"] != false || mei["staffId"] == nil || mei["createdAt"] == nil {
		t.Fatalf("created %v", mei)
	}
	id := itoa64(int64(mei["staffId"].(float64)))

	for _, tt := range []struct {
		body   any
		status int
		code   string
	}{
		{map[string]any{"name": "小美", "role": "staff", "password": "another password"}, 409, "INVALID_STATE"},
		{map[string]any{"name": "admin", "role": "owner", "password": "another password"}, 400, "BAD_REQUEST"},
		{map[string]any{"name": "小丽", "role": "manager", "password": "another password"}, 400, "BAD_REQUEST"},
		{map[string]any{"name": "小丽", "role": "staff", "password": "123456789"}, 400, "BAD_REQUEST"},
		{map[string]any{"name": "小丽", "role": "staff", "password": "another password", "extra": 1}, 400, "BAD_REQUEST"},
		{map[string]any{"name": strings.Repeat("丽", 41), "role": "staff", "password": "another password"}, 400, "BAD_REQUEST"},
		{map[string]any{"name": "小丽\u202E", "role": "staff", "password": "another password"}, 400, "BAD_REQUEST"},
		{map[string]any{"name": "\u3164", "role": "staff", "password": "another password"}, 400, "BAD_REQUEST"},
	} {
		s.wantError(s.call("POST", "/admin/staff", testAdmin, tt.body), tt.status, tt.code)
	}
	s.wantError(s.call("POST", "/admin/staff", "wrong-token", map[string]any{"name": "小丽", "role": "staff", "password": "another password"}), 401, "UNAUTHORIZED")
	s.wantError(s.call("GET", "/admin/staff", "", nil), 401, "UNAUTHORIZED")

	// A console session creates one too, with its CSRF token and not without.
	cookie, csrf := s.consoleSignIn()
	body := map[string]any{"name": "Owner Two", "role": "owner", "password": "the second owner"}
	if a := s.call("POST", "/admin/staff", "", body, "Cookie", cookie); a.Status != http.StatusUnauthorized {
		t.Fatalf("without CSRF: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/admin/staff", "", body, "Cookie", cookie, consoleauth.CSRFHeader, csrf); a.Status != http.StatusCreated {
		t.Fatalf("console session: %d %s", a.Status, a.Body)
	}

	a = s.call("GET", "/admin/staff", testAdmin, nil)
	listed := string(a.Body)
	if a.Status != http.StatusOK || strings.Contains(listed, "$2a$") || strings.Contains(strings.ToLower(listed), "password\":") ||
		strings.Contains(strings.ToLower(listed), "hash") || strings.Contains(listed, "xiaomei's password") {
		t.Fatalf("list: %d %s", a.Status, a.Body)
	}
	if list, _ := a.JSON["staff"].([]any); len(list) != 2 {
		t.Fatalf("list: %d %s", a.Status, a.Body)
	}

	a = s.call("PATCH", "/admin/staff/"+id, testAdmin, map[string]any{"disabled": true})
	if a.Status != http.StatusOK || obj(t, a.JSON["staff"])["disabled"] != true {
		t.Fatalf("disable: %d %s", a.Status, a.Body)
	}
	a = s.call("PATCH", "/admin/staff/"+id, testAdmin, map[string]any{"password": "a new password for her"})
	if a.Status != http.StatusOK {
		t.Fatalf("reset: %d %s", a.Status, a.Body)
	}
	var hash string
	if err := s.store.SQL().QueryRow(`SELECT password_hash FROM t_staff WHERE staff_id = ?`, id).Scan(&hash); err != nil ||
		!strings.HasPrefix(hash, fmt.Sprintf("$2a$%02d$", testPasswordCost)) || strings.Contains(hash, "a new password") {
		t.Fatalf("stored hash %q %v", hash, err)
	}
	s.wantError(s.call("PATCH", "/admin/staff/"+id, testAdmin, map[string]any{"password": "short"}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", "/admin/staff/"+id, testAdmin, map[string]any{}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", "/admin/staff/"+id, testAdmin, map[string]any{"disabled": "yes"}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", "/admin/staff/999999", testAdmin, map[string]any{"disabled": true}), 404, "NOT_FOUND")
	s.wantError(s.call("PATCH", "/admin/staff/x", testAdmin, map[string]any{"disabled": true}), 400, "BAD_REQUEST")
	if strings.Contains(s.logs.String(), "a new password") || strings.Contains(s.logs.String(), "xiaomei's password") {
		t.Fatal("a password reached the log")
	}
}
