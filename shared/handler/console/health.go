package console

// Health: the release run, what needs doing (refunds, drift, the audit's shipping).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"salon/shared/booking"
)

type healthBody struct {
	// Headline is the page's first line (一切正常, or what needs doing), OK
	// whether nothing does.
	Headline      string
	OK            bool
	Unshipped     int // audit records not yet shipped to CLS, among the technical details
	Items         []healthItem
	RunCounts     []healthItem
	RunError      string
	RunStarted    string
	OpenRefunds   []bookingRow
	FailedRefunds []bookingRow
	Drift         []booking.SlotDrift
	// Bills are the last days of the reconciliation with WeChat Pay's bills
	// (the owner's only).
	Bills []billDayRow
}

func (c *Console) health(w http.ResponseWriter, q *Request) error {
	h, err := q.s.Reads.Health(q.ctx)
	if err != nil {
		return err
	}
	if _, err := q.dbNow(); err != nil {
		return err
	}
	body := &healthBody{Items: healthItems(h, q.loc()), Drift: h.Drift}
	body.Headline, body.OK = healthHeadline(body.Items)
	body.Unshipped = h.UnshippedAudit
	if r := h.LastRun; r != nil {
		body.RunCounts = summaryCounts(r.Summary)
		body.RunError = r.Error
		body.RunStarted = clock(r.StartedAt, q.loc()) + "，用时 " + r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
	}
	for _, b := range h.OpenRefunds {
		body.OpenRefunds = append(body.OpenRefunds, q.row(b))
	}
	for _, b := range h.FailedRefunds {
		body.FailedRefunds = append(body.FailedRefunds, q.row(b))
	}
	if body.Bills, err = q.billRows(); err != nil {
		return err
	}
	render(w, http.StatusOK, "health", q.page("健康", "health", body))
	return nil
}

// summaryCounts lists the counts of a release run's summary: the known ones in
// the order of summaryWords, any others after them by name.
func summaryCounts(summary string) []healthItem {
	var counts map[string]any
	dec := json.NewDecoder(strings.NewReader(summary))
	dec.UseNumber()
	if err := dec.Decode(&counts); err != nil {
		return nil
	}
	var out []healthItem
	for _, w := range summaryWords {
		if n, ok := counts[w.Key]; ok {
			out = append(out, healthItem{Key: w.Key, Label: w.Word, Value: fmt.Sprint(n)})
			delete(counts, w.Key)
		}
	}
	rest := make([]string, 0, len(counts))
	for k := range counts {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, healthItem{Key: k, Label: k, Value: fmt.Sprint(counts[k])})
	}
	return out
}
