package localgw

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// TimerEvent is the SCF timer trigger event.
type TimerEvent struct {
	Type        string `json:"Type"`
	TriggerName string `json:"TriggerName"`
	Time        string `json:"Time"` // RFC 3339, UTC, with Z
	Message     string `json:"Message"`
}

// NewTimerEvent returns the event of a timer trigger firing at t.
func NewTimerEvent(triggerName, message string, t time.Time) TimerEvent {
	return TimerEvent{Type: "Timer", TriggerName: triggerName, Time: t.UTC().Format("2006-01-02T15:04:05Z"), Message: message}
}

// Timer invokes a function on every tick with the timer event, the way a timer
// trigger does. The cron expression is not interpreted locally: the interval is.
// Like SCF's (asynchronous) timer invocations, a slow run does not hold back the
// next tick, so runs may overlap; the host's pool bounds how many run at once.
type Timer struct {
	Trigger TimerTrigger
	Every   time.Duration    // the interval, when Ticks is nil; a minute when zero
	Ticks   <-chan time.Time // the tick source; tests inject one
	Invoker Invoker
	Log     io.Writer // one line per run; nil discards
}

// Run fires the timer until ctx ends, then waits for runs still in flight.
func (t *Timer) Run(ctx context.Context) {
	ticks := t.Ticks
	if ticks == nil {
		every := t.Every
		if every <= 0 {
			every = time.Minute
		}
		tk := time.NewTicker(every)
		defer tk.Stop()
		ticks = tk.C
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case at, ok := <-ticks:
			if !ok {
				return
			}
			wg.Go(func() { t.fire(ctx, at) })
		}
	}
}

func (t *Timer) fire(ctx context.Context, at time.Time) {
	ev := NewTimerEvent(t.Trigger.Name, t.Trigger.Argument, at)
	payload, _ := json.Marshal(ev)
	began := time.Now()
	// Once started, a run is not abandoned when the timer stops; closing the host ends it.
	out, ierr, err := t.Invoker.Invoke(context.WithoutCancel(ctx), t.Trigger.Function, payload, "")
	var note string
	switch {
	case err != nil:
		note = "host error: " + err.Error()
	case ierr != nil:
		note = "function error: " + ierr.Error()
	default:
		note = string(out)
	}
	if t.Log != nil {
		_, _ = fmt.Fprintf(t.Log, "[timer] %s -> %s at %s (%s): %s\n", t.Trigger.Name, t.Trigger.Function, ev.Time,
			time.Since(began).Round(time.Millisecond), note)
	}
}
