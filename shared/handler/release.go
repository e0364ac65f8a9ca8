package handler

// The release function: the timer's run.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
)

// Release is the timer function: one release run, answered with its summary. An
// error makes SCF retry the run, which is safe: every step is idempotent.
func Release(e *instance.Env) func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
	e = e.For(releaseFunction)
	return func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
		start := time.Now()
		d, err := e.Deps()
		if err != nil {
			e.Logger().Error("release: configuration", "err", err.Error())
			return service.Summary{}, errors.New(booking.ErrorMessage(err) + ": " + err.Error())
		}
		sum, err := d.Svc.Release(ctx)
		err = d.Svc.Classify(err)
		attrs := append(append([]any{"function", "release"}, sum.LogAttrs()...), "duration_ms", time.Since(start).Milliseconds())
		if err != nil {
			e.Logger().Error("release run failed", append(attrs, "code", booking.ErrorCode(err), "err", err.Error())...)
			return sum, err
		}
		e.Logger().Info("release run", attrs...)
		return sum, nil
	}
}
