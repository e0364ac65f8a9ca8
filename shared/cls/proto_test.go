package cls_test

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"salon/shared/booking"
	"salon/shared/cls"
)

// wantContents is what one record must look like once decoded.
func wantContents(rec booking.AuditRecord) map[string]string {
	return map[string]string{
		"audit_id":    strconv.FormatInt(rec.ID, 10),
		"event":       rec.Event,
		"booking_id":  strconv.FormatInt(rec.BookingID, 10),
		"slot_id":     strconv.FormatInt(rec.SlotID, 10),
		"from_status": strconv.Itoa(rec.FromStatus),
		"to_status":   strconv.Itoa(rec.ToStatus),
		"actor":       rec.Actor,
		"reason":      rec.Reason,
		"created_at":  rec.CreatedAt.UTC().Format(time.RFC3339Nano),
	}
}

// checkLog compares every field of a decoded log with its record.
func checkLog(t *testing.T, l cls.Log, rec booking.AuditRecord) {
	t.Helper()
	if l.TimeMs != rec.CreatedAt.UnixMilli() {
		t.Errorf("audit %d: time %d, want %d", rec.ID, l.TimeMs, rec.CreatedAt.UnixMilli())
	}
	want := wantContents(rec)
	if len(l.Contents) != len(want) {
		t.Errorf("audit %d: %d contents, want %d: %v", rec.ID, len(l.Contents), len(want), l.Contents)
	}
	for _, c := range l.Contents {
		if strings.HasPrefix(c.Key, "_") {
			t.Errorf("key %q starts with _", c.Key)
		}
		w, ok := want[c.Key]
		if !ok {
			t.Errorf("audit %d: unexpected key %q", rec.ID, c.Key)
			continue
		}
		if c.Value != w {
			t.Errorf("audit %d: %s = %q, want %q", rec.ID, c.Key, c.Value, w)
		}
		delete(want, c.Key)
	}
	for k := range want {
		t.Errorf("audit %d: key %q missing", rec.ID, k)
	}
}

var cst = time.FixedZone("CST", 8*3600)

func sampleRecords() []booking.AuditRecord {
	return []booking.AuditRecord{
		{ID: 1, BookingID: 10, SlotID: 100, Event: booking.EventReserve, FromStatus: -1, ToStatus: 0, Actor: "customer", Reason: "", CreatedAt: time.Date(2026, 3, 1, 10, 0, 0, 0, cst)},
		{ID: 2, BookingID: 10, SlotID: 100, Event: booking.EventConfirm, FromStatus: 0, ToStatus: 1, Actor: "wechatpay", Reason: "支付成功 transaction 4200001234 💅", CreatedAt: time.Date(2026, 3, 1, 10, 2, 3, 456789000, cst)},
		{ID: 3, BookingID: 0, SlotID: 101, Event: booking.EventDrift, FromStatus: -1, ToStatus: -1, Actor: "system", Reason: "booked=3 bookings=2\nline \"two\" <&>", CreatedAt: time.Date(2026, 3, 1, 2, 0, 0, 1, time.UTC)},
		{ID: 4, BookingID: 11, SlotID: 101, Event: booking.EventCancel, FromStatus: 1, ToStatus: 3, Actor: "", Reason: "", CreatedAt: time.Date(2026, 3, 1, 11, 0, 0, 999000000, cst)},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	recs := sampleRecords()
	groups, err := cls.DecodeLogGroupList(cls.EncodeLogGroupList("reserve-函数", recs))
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 {
		t.Fatalf("%d groups, want 1", len(groups))
	}
	g := groups[0]
	if g.Source != "reserve-函数" {
		t.Errorf("source %q", g.Source)
	}
	if len(g.Logs) != len(recs) {
		t.Fatalf("%d logs, want %d", len(g.Logs), len(recs))
	}
	for i, rec := range recs {
		checkLog(t, g.Logs[i], rec)
	}
	if got := g.Logs[1].Get("reason"); got != recs[1].Reason {
		t.Errorf("Get(reason) = %q", got)
	}
	if got := g.Logs[0].Get("no_such_key"); got != "" {
		t.Errorf("Get(no_such_key) = %q", got)
	}
}

func TestEncodeEmptySourceAndNoRecords(t *testing.T) {
	groups, err := cls.DecodeLogGroupList(cls.EncodeLogGroupList("", nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].Source != "" || len(groups[0].Logs) != 0 {
		t.Fatalf("got %+v", groups)
	}
}

// TestEncodeMatchesSDK pins the wire bytes. The golden value was produced by the
// gogo-generated LogGroupList.Marshal of tencentcloud-cls-sdk-go v1.0.14 (its cls.proto)
// for the same content; it is not a dependency of this module, so the bytes are inlined.
func TestEncodeMatchesSDK(t *testing.T) {
	rec := booking.AuditRecord{ID: 42, BookingID: 7, SlotID: 3, Event: "confirm", FromStatus: 0, ToStatus: 1,
		Actor: "wechatpay", Reason: "支付 ok", CreatedAt: time.Date(2026, 3, 1, 10, 30, 0, 123000000, cst)}
	const golden = "0ac7010abb0108bbe1ecb9ca33120e0a0861756469745f69641202343212100a056576656e741207636f6e6669726d120f0a0a626f6f6b696e675f6964120137120c0a07736c6f745f696412013312100a0b66726f6d5f737461747573120130120e0a09746f5f73746174757312013112120a056163746f72120977656368617470617912130a06726561736f6e1209e694afe4bb98206f6b12260a0a637265617465645f61741218323032362d30332d30315430323a33303a30302e3132335a220772656c65617365"
	if got := hex.EncodeToString(cls.EncodeLogGroupList("release", []booking.AuditRecord{rec})); got != golden {
		t.Fatalf("encoding differs from the SDK's\n got %s\nwant %s", got, golden)
	}
}

func TestDecodeRejectsBadInput(t *testing.T) {
	pair := func(withKey, withValue bool) []byte {
		var b []byte
		if withKey {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendString(b, "k")
		}
		if withValue {
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			b = protowire.AppendString(b, "v")
		}
		return b
	}
	wrap := func(num protowire.Number, inner []byte) []byte {
		b := protowire.AppendTag(nil, num, protowire.BytesType)
		return protowire.AppendBytes(b, inner)
	}
	logWith := func(withTime bool, content []byte) []byte {
		var b []byte
		if withTime {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, 5)
		}
		return append(b, wrap(2, content)...)
	}
	list := func(log []byte) []byte { return wrap(1, wrap(1, log)) }

	if _, err := cls.DecodeLogGroupList(list(logWith(true, pair(true, true)))); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	cases := map[string][]byte{
		"truncated":       cls.EncodeLogGroupList("s", sampleRecords())[:40],
		"no time":         list(logWith(false, pair(true, true))),
		"no key":          list(logWith(true, pair(false, true))),
		"no value":        list(logWith(true, pair(true, false))),
		"group as varint": protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1),
		"garbage":         {0xff, 0xff, 0xff},
	}
	for name, b := range cases {
		if _, err := cls.DecodeLogGroupList(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
