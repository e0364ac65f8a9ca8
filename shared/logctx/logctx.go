// Package logctx carries a request's logger in its context, so that code below the
// transport (package service) logs with the request id, function and route of the
// request it serves without depending on the API Gateway glue.
package logctx

import (
	"context"
	"log/slog"
)

type key struct{}

// With returns ctx carrying l.
func With(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, key{}, l)
}

// From returns the logger ctx carries, else fallback, else slog.Default.
func From(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if l, ok := ctx.Value(key{}).(*slog.Logger); ok && l != nil {
		return l
	}
	if fallback != nil {
		return fallback
	}
	return slog.Default()
}
