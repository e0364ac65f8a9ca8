package handler

// The release function: the timer's run.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
)

// Release is the timer function: one release run, answered with its summary. An
// error makes SCF retry the run, which is safe: every step is idempotent.
func Release(e *instance.Env) func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
	e = e.For(releaseFunction)
	t := &releaseTimer{run: e.ReleaseRun, log: e.Logger()}
	return t.fire
}

// releaseTimer is what function release uses: the release run, and its log.
type releaseTimer struct {
	run lazy[*service.ReleaseRun]
	log *slog.Logger
}

func (t *releaseTimer) fire(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
	start := time.Now()
	run, err := t.run()
	if err != nil {
		t.log.Error("release: configuration", "err", err.Error())
		return service.Summary{}, errors.New(booking.ErrorMessage(err) + ": " + err.Error())
	}
	sum, err := run.Release(ctx)
	err = run.Classify(err)
	attrs := append(append([]any{"function", "release"}, sum.LogAttrs()...), "duration_ms", time.Since(start).Milliseconds())
	if err != nil {
		t.log.Error("release run failed", append(attrs, "code", booking.ErrorCode(err), "err", err.Error())...)
		return sum, err
	}
	t.log.Info("release run", attrs...)
	return sum, nil
}
