package cls_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"salon/shared/cls"
)

func TestWriteJSONLineIsOneFlatLine(t *testing.T) {
	for _, rec := range sampleRecords() {
		var buf bytes.Buffer
		if err := cls.WriteJSONLine(&buf, rec); err != nil {
			t.Fatal(err)
		}
		line := buf.String()
		if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
			t.Fatalf("not exactly one line: %q", line)
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for k, v := range m {
			switch v.(type) {
			case string, json.Number:
			default:
				t.Errorf("%s is %T: CLS indexes only top-level strings and numbers", k, v)
			}
		}
		want := map[string]string{
			"log": "audit", "audit_id": itoa(rec.ID), "event": rec.Event, "booking_id": itoa(rec.BookingID),
			"slot_id": itoa(rec.SlotID), "from_status": itoa(int64(rec.FromStatus)), "to_status": itoa(int64(rec.ToStatus)),
			"actor": rec.Actor, "reason": rec.Reason, "created_at": rec.CreatedAt.UTC().Format(time.RFC3339Nano),
		}
		if len(m) != len(want) {
			t.Errorf("%d fields, want %d: %s", len(m), len(want), line)
		}
		for k, w := range want {
			if got := toString(m[k]); got != w {
				t.Errorf("%s = %q, want %q", k, got, w)
			}
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return "<missing>"
}
