package handler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wxlogin/wxloginsim"
)

// withTemplates configures a template for every kind of notification.
func withTemplates(env map[string]string) {
	env["SHOP_NAME"] = "指尖美甲（国贸三期旗舰店二楼东侧）"
	for _, k := range []string{"CONFIRMED", "REMINDER", "WAITLIST", "CANCELLED", "RESCHEDULED"} {
		env["WX_TMPL_"+k] = `{"id":"tmpl-` + strings.ToLower(k) + `","page":"pages/booking/detail?id={bookingId}",` +
			`"data":{"thing1":"{shopName}","time2":"{startAt}","amount3":"{amountYuan}元","character_string4":"{bookingId}"}}`
	}
}

// messagesTo returns the messages WeChat accepted for openid, by template id.
func (s *system) messagesTo(openid string) map[string][]wxloginsim.Message {
	out := map[string][]wxloginsim.Message{}
	for _, m := range s.login.Messages() {
		if m.ToUser == openid {
			out[m.TemplateID] = append(out[m.TemplateID], m)
		}
	}
	return out
}

func (s *system) outbox(id int64, kind booking.NotificationKind) (status string, attempts int) {
	s.t.Helper()
	if err := s.store.SQL().QueryRow(`SELECT status, attempts FROM t_notification WHERE book_id = ? AND kind = ?`, id, kind).
		Scan(&status, &attempts); err != nil {
		s.t.Fatalf("notification %s of booking %d: %v", kind, id, err)
	}
	return status, attempts
}

// TestNotificationsAreSent: a payment, a reminder due at once, a salon cancel and
// a waitlist offer each send their message right after the change, rendered from
// the templates (a long shop name trimmed to its keyword's limit).
func TestNotificationsAreSent(t *testing.T) {
	t.Parallel()
	s := newSystem(t, withTemplates)
	far := s.slot(26*time.Hour, 1, 5000)
	id := s.paidBooking("o-n-far", far)
	got := s.messagesTo("o-n-far")
	if len(got["tmpl-confirmed"]) != 1 || len(got) != 1 {
		t.Fatalf("after payment: %+v", got)
	}
	m := got["tmpl-confirmed"][0]
	b := s.findBk(id)
	if m.Page != "pages/booking/detail?id="+itoa64(id) || m.Data["time2"] != b.StartAt.In(shanghai(t)).Format("2006-01-02 15:04") ||
		m.Data["amount3"] != "50.00元" || m.Data["character_string4"] != itoa64(id) || len([]rune(m.Data["thing1"])) > 20 {
		t.Fatalf("rendered message %+v", m)
	}

	// Confirmed inside REMIND_BEFORE: the reminder goes out at once too.
	soon := s.slot(2*time.Hour, 2, 5000)
	s.paidBooking("o-n-soon", soon)
	if got := s.messagesTo("o-n-soon"); len(got["tmpl-confirmed"]) != 1 || len(got["tmpl-reminder"]) != 1 {
		t.Fatalf("confirmed inside the reminder window: %+v", got)
	}

	// The waitlist: a customer waits for the full slot; the salon cancels the
	// holder: the holder hears of the cancel, the one in line of the offer.
	if a := s.joinWaitlist("o-n-wait", far); a.Status != 201 {
		t.Fatalf("join: %d %s", a.Status, a.Body)
	}
	if a := s.admin("cancel", id); a.Status != 200 {
		t.Fatalf("salon cancel: %d %s", a.Status, a.Body)
	}
	if got := s.messagesTo("o-n-far"); len(got["tmpl-cancelled"]) != 1 {
		t.Fatalf("salon cancel: %+v", got)
	}
	offer := s.offers(far)["o-n-wait"]
	if got := s.messagesTo("o-n-wait"); offer == 0 || len(got["tmpl-waitlist"]) != 1 || got["tmpl-waitlist"][0].Data["character_string4"] != itoa64(offer) {
		t.Fatalf("waitlist offer %d: %+v", offer, got)
	}
	// A customer's own cancel sends them nothing.
	own := s.paidBooking("o-n-self", s.slot(30*time.Hour, 1, 5000))
	before := len(s.login.Messages())
	if a := s.cancelAs("o-n-self", own); a.Status != 200 {
		t.Fatalf("customer cancel: %d %s", a.Status, a.Body)
	}
	if n := len(s.login.Messages()); n != before {
		t.Fatalf("a customer's own cancel sent %d messages", n-before)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestRemindersOnceWhenRunsOverlap: bookings whose start comes within
// REMIND_BEFORE are reminded by the release run, once each, however many runs
// overlap.
func TestRemindersOnceWhenRunsOverlap(t *testing.T) {
	t.Parallel()
	s := newSystem(t, withTemplates)
	slot := s.slot(26*time.Hour, 6, 5000)
	var customers []string
	for i := 0; i < 6; i++ {
		openid := fmt.Sprintf("o-remind-%d", i)
		s.paidBooking(openid, slot)
		customers = append(customers, openid)
	}
	mysqltest.SlotStarts(t, s.store, slot, -2*time.Hour) // starts in two hours
	var wg sync.WaitGroup
	sums := make([]relSummary, 4)
	for i := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if sums[i], err = relRunEnv(context.Background(), s.apiEnv); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	s.relRun(context.Background())
	sent := 0
	for _, sum := range sums {
		sent += sum.Notified
	}
	for _, c := range customers {
		if n := len(s.messagesTo(c)["tmpl-reminder"]); n != 1 {
			t.Errorf("%s got %d reminders", c, n)
		}
	}
	if sent != len(customers) {
		t.Errorf("the runs counted %d sent, want %d", sent, len(customers))
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestNotificationFailures: a WeChat outage delays a message but loses none; a
// customer without a subscription (43101) is recorded and never asked again; a
// bad template setting turns off its kind only; messages never fail the change.
func TestNotificationFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t, withTemplates, func(env map[string]string) {
		env["WX_TMPL_CANCELLED"] = `{"id":"tmpl-cancelled","data":{"thing1":"{customerName}"}}`
	})
	slot := s.slot(26*time.Hour, 4, 5000)

	// Outage: the payment still confirms; the message waits, then goes once.
	s.login.FailNextSends(3)
	id := s.paidBooking("o-outage", slot)
	if st, n := s.outbox(id, booking.NotifyConfirmed); st != "pending" || n != 1 {
		t.Fatalf("during the outage: %s after %d attempts", st, n)
	}
	for round := 0; round < 4; round++ {
		if _, err := s.store.SQL().Exec(`UPDATE t_notification SET next_at = UTC_TIMESTAMP(6) WHERE status = 'pending'`); err != nil {
			t.Fatal(err)
		}
		s.relRun(ctx)
	}
	if st, _ := s.outbox(id, booking.NotifyConfirmed); st != "sent" || len(s.messagesTo("o-outage")["tmpl-confirmed"]) != 1 {
		t.Fatalf("after the outage: %s, messages %+v", st, s.messagesTo("o-outage"))
	}

	// No subscription: refused once, never retried.
	s.login.RefuseMessagesFor("o-nosub")
	nosub := s.paidBooking("o-nosub", slot)
	if st, _ := s.outbox(nosub, booking.NotifyConfirmed); st != "refused" {
		t.Fatalf("43101: %s", st)
	}
	calls := s.login.SendCalls()
	for round := 0; round < 3; round++ {
		s.store.SQL().Exec(`UPDATE t_notification SET next_at = UTC_TIMESTAMP(6)`)
		s.relRun(ctx)
	}
	if n := s.login.SendCalls() - calls; n != 0 {
		t.Fatalf("%d more sends after 43101", n)
	}

	// A bad WX_TMPL_CANCELLED: that kind is off (and logged), the others go out.
	if a := s.admin("cancel", id); a.Status != 200 {
		t.Fatalf("salon cancel: %d %s", a.Status, a.Body)
	}
	if st, _ := s.outbox(id, booking.NotifyCancelled); st != "off" {
		t.Fatalf("cancelled with a bad template: %s", st)
	}
	if !strings.Contains(s.logs.String(), "WX_TMPL_CANCELLED") {
		t.Fatalf("the bad setting was not reported")
	}

	// 24 hours of failing: given up, recorded as failed.
	s.login.FailNextSends(100)
	late := s.paidBooking("o-giveup", slot)
	s.store.SQL().Exec(`UPDATE t_notification SET created_at = UTC_TIMESTAMP(6) - INTERVAL 25 HOUR, next_at = UTC_TIMESTAMP(6) WHERE book_id = ?`, late)
	s.relRun(ctx)
	if st, _ := s.outbox(late, booking.NotifyConfirmed); st != "failed" {
		t.Fatalf("after 24 hours: %s", st)
	}
	s.login.FailNextSends(0)
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// dueNow makes every pending notification due, as if its backoff had passed.
func (s *system) dueNow() {
	s.t.Helper()
	if _, err := s.store.SQL().Exec(`UPDATE t_notification SET next_at = UTC_TIMESTAMP(6) WHERE status = 'pending'`); err != nil {
		s.t.Fatal(err)
	}
}

// TestStaleNotificationsAreNotSent: a message that failed while WeChat was down
// is retried only while it is still true. A waitlist offer withdrawn meanwhile,
// and the "confirmed" and reminder of a booking cancelled meanwhile, are dropped
// as off and never reach the customer; a reminder whose slot has started is
// dropped too, while the still-true "confirmed" of that booking goes out.
func TestStaleNotificationsAreNotSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t, withTemplates)

	s.login.FailNextSends(1000)
	// An offer, withdrawn by the customer before WeChat is back.
	full := s.slot(26*time.Hour, 1, 5000)
	holder := s.paidBooking("o-st-holder", full)
	if a := s.joinWaitlist("o-st-v", full); a.Status != 201 {
		t.Fatalf("join: %d %s", a.Status, a.Body)
	}
	if a := s.cancelAs("o-st-holder", holder); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	offer := s.offers(full)["o-st-v"]
	if st, _ := s.outbox(offer, booking.NotifyWaitlist); st != "pending" {
		t.Fatalf("offer message during the outage: %s", st)
	}
	if a := s.cancelAs("o-st-v", offer); a.Status != 200 {
		t.Fatalf("withdraw the offer: %d %s", a.Status, a.Body)
	}
	// A confirmed booking inside REMIND_BEFORE (its reminder is due at once),
	// cancelled before WeChat is back.
	soon := s.slot(150*time.Minute, 2, 5000)
	gone := s.paidBooking("o-st-c", soon)
	for _, k := range []booking.NotificationKind{booking.NotifyConfirmed, booking.NotifyReminder} {
		if st, _ := s.outbox(gone, k); st != "pending" {
			t.Fatalf("%s during the outage: %s", k, st)
		}
	}
	if a := s.cancelAs("o-st-c", gone); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	// A booking whose slot starts before WeChat is back.
	started := s.slot(140*time.Minute, 2, 5000)
	kept := s.paidBooking("o-st-k", started)
	mysqltest.SlotStarts(t, s.store, started, time.Minute)

	s.login.FailNextSends(0)
	s.dueNow()
	s.relRun(ctx)
	for _, c := range []struct {
		id   int64
		kind booking.NotificationKind
		want string
	}{
		{offer, booking.NotifyWaitlist, "off"},
		{gone, booking.NotifyConfirmed, "off"},
		{gone, booking.NotifyReminder, "off"},
		{kept, booking.NotifyReminder, "off"},
		{kept, booking.NotifyConfirmed, "sent"},
	} {
		if st, _ := s.outbox(c.id, c.kind); st != c.want {
			t.Errorf("%s of booking %d: %s, want %s", c.kind, c.id, st, c.want)
		}
	}
	for _, openid := range []string{"o-st-v", "o-st-c"} {
		if got := s.messagesTo(openid); len(got) != 0 {
			t.Errorf("%s received %v", openid, got)
		}
	}
	if got := s.messagesTo("o-st-k"); len(got) != 1 || len(got["tmpl-confirmed"]) != 1 {
		t.Errorf("o-st-k received %v, want the confirmation only", got)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestPermanentWeChatErrorsAreNotRetried: a refusal no retry can mend (here
// 40037, a template id WeChat does not know) is recorded as failed at once and
// never sent again, while the other kinds go out.
func TestPermanentWeChatErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t, withTemplates)
	s.login.AcceptTemplates("tmpl-reminder", "tmpl-waitlist", "tmpl-cancelled")
	id := s.paidBooking("o-perm", s.slot(26*time.Hour, 1, 5000))
	if st, n := s.outbox(id, booking.NotifyConfirmed); st != "failed" || n != 0 {
		t.Fatalf("40037: %s after %d retries, want failed at once", st, n)
	}
	calls := s.login.SendCalls()
	for round := 0; round < 3; round++ {
		s.store.SQL().Exec(`UPDATE t_notification SET next_at = UTC_TIMESTAMP(6)`)
		s.relRun(ctx)
	}
	if n := s.login.SendCalls() - calls; n != 0 {
		t.Fatalf("%d more sends after a permanent refusal", n)
	}
	if a := s.admin("cancel", id); a.Status != 200 {
		t.Fatalf("salon cancel: %d %s", a.Status, a.Body)
	}
	if st, _ := s.outbox(id, booking.NotifyCancelled); st != "sent" {
		t.Fatalf("cancelled: %s", st)
	}
}
