package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"salon/shared/booking"
)

// stateRows reads shared/README.md's table of transitions ("| `event` |
// transitions | actors | asked by |") into, per event, the set of "from -> to"
// pairs and the set of actors it names.
func stateRows(text string) (pairs, actors map[string][]string, err error) {
	pairs, actors = map[string][]string{}, map[string][]string{}
	start := strings.Index(text, "| event | transition | actor | asked by |")
	if start < 0 {
		return nil, nil, fmt.Errorf("no transition table (| event | transition | actor | asked by |)")
	}
	arrow := regexp.MustCompile(`(new|\d) -> (\d)`)
	tick := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(text[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			return nil, nil, fmt.Errorf("row %q: want four cells", line)
		}
		m := tick.FindStringSubmatch(cells[0])
		if m == nil {
			return nil, nil, fmt.Errorf("row %q: no `event`", line)
		}
		event := m[1]
		for _, a := range arrow.FindAllStringSubmatch(cells[1], -1) {
			pairs[event] = append(pairs[event], a[1]+" -> "+a[2])
		}
		for _, a := range tick.FindAllStringSubmatch(cells[2], -1) {
			actors[event] = append(actors[event], a[1])
		}
	}
	return pairs, actors, nil
}

// goStateRows is the same, from booking.Transitions.
func goStateRows() (pairs, actors map[string][]string) {
	pairs, actors = map[string][]string{}, map[string][]string{}
	for _, tr := range booking.Transitions {
		from := fmt.Sprint(int(tr.From))
		if tr.From == booking.StatusNew {
			from = "new"
		}
		pairs[tr.Event] = append(pairs[tr.Event], fmt.Sprintf("%s -> %d", from, int(tr.To)))
		actors[tr.Event] = append(actors[tr.Event], tr.Actors...)
	}
	return pairs, actors
}

func normalise(m map[string][]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		v = slices.Clone(v)
		sort.Strings(v)
		out[k] = strings.Join(slices.Compact(v), ", ")
	}
	return out
}

// stateTableDrift lists where a README's transition table and the state
// machine of package booking disagree: an event, a transition or an actor one
// names and the other does not.
func stateTableDrift(text string) ([]string, error) {
	docPairs, docActors, err := stateRows(text)
	if err != nil {
		return nil, err
	}
	goPairs, goActors := goStateRows()
	var drift []string
	for what, sides := range map[string][2]map[string]string{
		"transitions": {normalise(docPairs), normalise(goPairs)},
		"actors":      {normalise(docActors), normalise(goActors)},
	} {
		doc, code := sides[0], sides[1]
		for ev, want := range code {
			if doc[ev] != want {
				drift = append(drift, fmt.Sprintf("%s of `%s`: README %q, booking.Transitions %q", what, ev, doc[ev], want))
			}
		}
		for ev := range doc {
			if _, ok := code[ev]; !ok {
				drift = append(drift, fmt.Sprintf("`%s`: in the README, not a transition of booking.Transitions", ev))
			}
		}
	}
	sort.Strings(drift)
	return drift, nil
}

// TestStateTableIsTheStateMachine: shared/README.md's table of transitions
// names exactly the events, transitions and actors of booking.Transitions.
func TestStateTableIsTheStateMachine(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "shared", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	drift, err := stateTableDrift(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		t.Error(d)
	}
	// The check itself: a planted transition and a dropped actor are caught.
	planted := strings.Replace(string(raw), "| `release` | 0 -> 4 |", "| `release` | 0 -> 4, 1 -> 4 |", 1)
	planted = strings.Replace(planted, "| `no_show` | 1 -> 5 | `timer`, `salon` |", "| `no_show` | 1 -> 5 | `timer` |", 1)
	if planted == string(raw) {
		t.Fatal("the planted copy is the README: the rows to plant into moved")
	}
	if drift, err := stateTableDrift(planted); err != nil || len(drift) != 2 {
		t.Errorf("planted drift found %q (%v), want the transition and the actor", drift, err)
	}
}
