package logctx

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestFromPrefersTheRequestLogger(t *testing.T) {
	var req, fb bytes.Buffer
	reqLog := slog.New(slog.NewJSONHandler(&req, nil)).With("request_id", "r-1")
	fallback := slog.New(slog.NewJSONHandler(&fb, nil))

	From(With(context.Background(), reqLog), fallback).Info("x")
	From(context.Background(), fallback).Info("y")
	if !strings.Contains(req.String(), `"request_id":"r-1"`) || !strings.Contains(fb.String(), `"msg":"y"`) {
		t.Fatalf("request log %q, fallback %q", req.String(), fb.String())
	}
	if From(context.Background(), nil) != slog.Default() {
		t.Fatal("no fallback: want slog.Default")
	}
}
