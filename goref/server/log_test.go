package server

import (
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"recallref/archive"
)

func TestEventLog(t *testing.T) {
	l := &eventLog{maxEntries: 3, maxBytes: 100}
	if got, err := l.since(0); err != nil || got == nil || len(got) != 0 || l.next() != 0 {
		t.Fatalf("empty log: since(0) = %#v, %v; next %d", got, err, l.next())
	}
	for i := 0; i < 5; i++ {
		l.add("e" + strconv.Itoa(i))
	}
	if l.next() != 5 {
		t.Errorf("next() = %d; want 5", l.next())
	}
	for i, want := range map[int][]string{2: {"e2", "e3", "e4"}, 3: {"e3", "e4"}, 5: {}} {
		if got, err := l.since(i); err != nil || !slices.Equal(got, want) {
			t.Errorf("since(%d) = %q, %v; want %q", i, got, err, want)
		}
	}
	if _, err := l.since(1); status(err) != 410 {
		t.Errorf("since(1) after dropping 2 entries: %v; want a 410", err)
	}
	if _, err := l.since(6); status(err) != 400 {
		t.Errorf("since(6) of 5 entries: %v; want a 400", err)
	}
	// since returns a copy.
	got, _ := l.since(2)
	got[0] = "changed"
	if again, _ := l.since(2); again[0] != "e2" {
		t.Error("since returned the log's own array")
	}

	// The byte bound drops as many entries as needed, but keeps the newest.
	l.add(strings.Repeat("x", 60))
	l.add(strings.Repeat("y", 60))
	if got, _ := l.since(6); len(got) != 1 || got[0][0] != 'y' || l.bytes != 60 {
		t.Errorf("after two 60-byte entries: since(6) = %q, %d bytes", got, l.bytes)
	}
	l.add(strings.Repeat("z", 500))
	if got, _ := l.since(7); len(got) != 1 || l.next() != 8 || l.bytes != 500 {
		t.Errorf("an entry past the byte bound: since(7) = %d entries, next %d, %d bytes", len(got), l.next(), l.bytes)
	}

	l.clear()
	if got, err := l.since(0); err != nil || len(got) != 0 || l.next() != 0 || l.bytes != 0 {
		t.Errorf("after clear: since(0) = %q, %v, next %d, %d bytes", got, err, l.next(), l.bytes)
	}
	if _, err := l.since(1); status(err) != 400 {
		t.Errorf("since(1) after clear: %v; want a 400", err)
	}
}

// status is the status that err is answered with (200 for nil).
func status(err error) int {
	s, _ := result(nil, err)
	return s
}

// TestEventLogMemory adds many entries: the array behind the log stays
// within a small multiple of the bound.
func TestEventLogMemory(t *testing.T) {
	l := &eventLog{maxEntries: 1000, maxBytes: 1 << 20}
	for i := 0; i < 100_000; i++ {
		l.add(strconv.Itoa(i))
		if c := cap(l.entries); c > 3*l.maxEntries {
			t.Fatalf("after %d adds: capacity %d for a bound of %d", i+1, c, l.maxEntries)
		}
	}
	if got, err := l.since(99_000); err != nil || len(got) != 1000 || got[999] != "99999" {
		t.Errorf("since(99000): %d entries, %v", len(got), err)
	}
}

func TestLogRoutesSince(t *testing.T) {
	c := newServer(t, 1, "")
	c.archive("hello", "one", false)
	c.exec("recall", `{"id":"r1"}`)
	c.exec("recall_search", `{"query":"hello"}`)
	check(t, "requests since 1", c.do("GET", PathRequests+"?since=1", ""), 200,
		`{"requests":["POST /internal/v1/tool/exec","POST /internal/v1/tool/exec"],"next":3}`)
	check(t, "requests since 3", c.do("GET", PathRequests+"?since=3", ""), 200, `{"requests":[],"next":3}`)
	check(t, "requests since 0", c.do("GET", PathRequests+"?since=0&x=1", ""), 200, "")
	check(t, "reads since 1", c.do("GET", PathReads+"?since=1", ""), 200, `{"reads":["blocks"],"next":2}`)
	check(t, "reads since 001", c.do("GET", PathReads+"?since=001", ""), 200, `{"reads":["blocks"],"next":2}`)
	check(t, "reads, first since", c.do("GET", PathReads+"?since=2&since=0", ""), 200, `{"reads":[],"next":2}`)
	for _, path := range []string{PathRequests, PathReads} {
		for _, q := range []string{"", "-1", "+1", "1.0", "x", "0x1", "1_0", "%201", "1%20", "9223372036854775808"} {
			r := c.do("GET", path+"?since="+q, "")
			check(t, path+" since "+q, r, 400, "")
			if _, ok := r.json(t)["error"].(string); !ok {
				t.Errorf("%s since %q: no error string in %s", path, q, r.body)
			}
		}
	}
	check(t, "past the end", c.do("GET", PathReads+"?since=4", ""), 400,
		`{"error":"reads past the end: since 4 is past the end of the log (next 2); was it reset?"}`)

	// A log past its bound answers 410 for the dropped entries.
	h := New(archive.New(1), Options{})
	h.(*server).requests.maxEntries = 2
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c = &client{t, srv.URL, ""}
	for i := 0; i < 3; i++ {
		c.do("GET", PathBlocks, "")
	}
	check(t, "dropped", c.do("GET", PathRequests, ""), 410,
		`{"error":"requests dropped: the log keeps the entries from 1 on, not 0"}`)
	check(t, "dropped since 0", c.do("GET", PathRequests+"?since=0", ""), 410, "")
	check(t, "kept since 1", c.do("GET", PathRequests+"?since=1", ""), 200,
		`{"requests":["GET /internal/v1/recall/blocks","GET /internal/v1/recall/blocks"],"next":3}`)
}
