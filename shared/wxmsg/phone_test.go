package wxmsg_test

import (
	"testing"

	"salon/shared/booking"
	"salon/shared/wxlogin/wxloginsim"
)

func TestPhoneNumber(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()

	code := f.sim.PhoneCode("13812345678")
	got, err := c.PhoneNumber(ctx, code)
	if err != nil || got != "13812345678" {
		t.Fatalf("PhoneNumber = %q, %v; want the number", got, err)
	}
	// A code is good for one exchange: the second is WeChat's 40029, the caller's fault.
	if _, err := c.PhoneNumber(ctx, code); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Errorf("second use of a code: %v, want BAD_REQUEST", err)
	}
	if _, err := c.PhoneNumber(ctx, "made-up"); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Errorf("a made-up code: %v, want BAD_REQUEST", err)
	}

	// An expired token is refreshed once, through the shared store, like Send's.
	_, forcedBefore := f.sim.TokenCalls()
	f.sim.ExpireToken()
	if got, err := c.PhoneNumber(ctx, f.sim.PhoneCode("13900001111")); err != nil || got != "13900001111" {
		t.Fatalf("after the token expired: %q, %v", got, err)
	}
	if _, forced := f.sim.TokenCalls(); forced != forcedBefore+1 {
		t.Errorf("forced refreshes %d -> %d, want one more", forcedBefore, forced)
	}

	// WeChat down: UPSTREAM_UNAVAILABLE, and the code is not used up.
	down := f.sim.PhoneCode("13700002222")
	for _, m := range []wxloginsim.Mode{wxloginsim.Unavailable, wxloginsim.Busy, wxloginsim.Garbage} {
		f.sim.SetMode(m)
		_, err := c.PhoneNumber(ctx, down)
		if !booking.IsCode(err, booking.EUPSTREAM) {
			t.Errorf("mode %d: %v, want UPSTREAM_UNAVAILABLE", m, err)
		}
		f.clean(t, err)
	}
	f.sim.SetMode(wxloginsim.Normal)
	if got, err := c.PhoneNumber(ctx, down); err != nil || got != "13700002222" {
		t.Errorf("the code after WeChat came back: %q, %v", got, err)
	}
}
