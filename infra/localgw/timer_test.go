package localgw

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestTimerFiresTheTimerEvent(t *testing.T) {
	fake := newFake(`{"released":0,"confirmed":0,"refunded":0,"audited":0}`)
	ticks := make(chan time.Time)
	logs := &syncBuffer{}
	tm := &Timer{
		Trigger: TimerTrigger{Name: "release-every-minute", Function: "release", Argument: "release"},
		Ticks:   ticks,
		Invoker: fake,
		Log:     logs,
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		tm.Run(ctx)
		close(stopped)
	}()

	shop := time.FixedZone("Asia/Shanghai", 8*3600)
	for i, at := range []time.Time{
		time.Date(2026, 12, 1, 10, 0, 0, 123, shop),
		time.Date(2026, 12, 1, 10, 1, 0, 0, shop),
	} {
		ticks <- at
		call := <-fake.calls
		if call.fn != "release" {
			t.Errorf("tick %d invoked %s", i, call.fn)
		}
		want := at.UTC().Format("2006-01-02T15:04:05") + "Z"
		jsonEqual(t, call.payload, `{"Type":"Timer","TriggerName":"release-every-minute","Time":"`+want+`","Message":"release"}`)
	}
	cancel()
	<-stopped // Run waits for the runs in flight, so their log lines are written
	if n := strings.Count(logs.String(), `[timer] release-every-minute -> release at 2026-12-01T02:0`); n != 2 {
		t.Errorf("log:\n%s", logs.String())
	}
}

func TestTimerEventTime(t *testing.T) {
	ev := NewTimerEvent("n", "m", time.Date(2019, 8, 17, 13, 26, 0, 999, time.FixedZone("CST", 8*3600)))
	b, _ := json.Marshal(ev)
	if string(b) != `{"Type":"Timer","TriggerName":"n","Time":"2019-08-17T05:26:00Z","Message":"m"}` {
		t.Errorf("event = %s", b)
	}
}
