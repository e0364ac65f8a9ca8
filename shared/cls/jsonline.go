package cls

import (
	"bytes"
	"encoding/json"
	"io"
	"time"

	"salon/shared/booking"
)

// jsonLine is the stdout form of a record. SCF parses a JSON line into CLS fields but
// keeps only top-level strings and numbers, so the object stays flat.
type jsonLine struct {
	Log        string `json:"log"` // always "audit", to find these lines among the others
	AuditID    int64  `json:"audit_id"`
	Event      string `json:"event"`
	BookingID  int64  `json:"booking_id"`
	SlotID     int64  `json:"slot_id"`
	FromStatus int    `json:"from_status"`
	ToStatus   int    `json:"to_status"`
	Actor      string `json:"actor"`
	Reason     string `json:"reason"`
	CreatedAt  string `json:"created_at"`
}

// JSONLines writes each audit record it is given to W as one flat JSON line
// (WriteJSONLine): the release run's copy of what it shipped, on stdout.
type JSONLines struct{ W io.Writer }

// WriteAudit writes rec as one JSON line.
func (j JSONLines) WriteAudit(rec booking.AuditRecord) error { return WriteJSONLine(j.W, rec) }

// WriteJSONLine writes rec to w as one flat JSON object followed by a newline, in a
// single Write so concurrent lines do not interleave.
func WriteJSONLine(w io.Writer, rec booking.AuditRecord) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encode escapes control characters in strings, so the line holds no raw newline
	// except the one it appends.
	if err := enc.Encode(jsonLine{
		Log:        "audit",
		AuditID:    rec.ID,
		Event:      rec.Event,
		BookingID:  rec.BookingID,
		SlotID:     rec.SlotID,
		FromStatus: rec.FromStatus,
		ToStatus:   rec.ToStatus,
		Actor:      rec.Actor,
		Reason:     rec.Reason,
		CreatedAt:  rec.CreatedAt.UTC().Format(time.RFC3339Nano),
	}); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
