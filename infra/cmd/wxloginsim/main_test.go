package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wxlogin/wxloginsim"
	"salon/shared/wxmsg"
)

// The example templates dev.sh wires in are valid settings, and the simulator
// accepts what they render, even with a shop name far over a thing's limit.
func TestExampleTemplatesAreAccepted(t *testing.T) {
	got, errs := wxmsg.TemplatesFromEnv(func(name string) string {
		for kind, raw := range exampleTemplates {
			if wxmsg.SettingFor(kind) == name {
				return raw
			}
		}
		return ""
	})
	if len(errs) != 0 || len(got) != len(booking.NotificationKinds) {
		t.Fatalf("examples: %d templates, errors %v", len(got), errs)
	}
	sim := wxloginsim.New("wxa", "sec")
	var ids []string
	for _, tmpl := range got {
		ids = append(ids, tmpl.ID)
	}
	sim.AcceptTemplates(ids...)
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := &wxmsg.Client{BaseURL: srv.URL, AppID: "wxa", AppSecret: "sec", Tokens: mysqltest.New(t)}
	v := wxmsg.Values{
		BookingID: 123456,
		StartAt:   time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC),
		EndAt:     time.Date(2026, 5, 1, 3, 30, 0, 0, time.UTC),
		AmountFen: 5000,
		ShopName:  strings.Repeat("美甲", 20),
	}
	for _, kind := range booking.NotificationKinds {
		if err := c.Send(context.Background(), "o-dev", got[kind], v, time.FixedZone("CST", 8*3600)); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	if n := len(sim.Messages()); n != len(booking.NotificationKinds) {
		t.Fatalf("%d messages accepted", n)
	}
}
