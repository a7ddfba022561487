package server

import "net/http"

// eventLog is an append-only log of strings, each keeping its index (from
// the last clear) while the oldest are dropped past maxEntries entries or
// maxBytes bytes (the newest always kept). Not safe for concurrent use.
type eventLog struct {
	name                 string // the key of its entries in its debug route
	maxEntries, maxBytes int
	first                int      // the index of entries[0]
	entries              []string // entries[i] has index first+i
	bytes                int      // the bytes of entries
}

// newEventLog returns a debug log with its bounds (a fuzzer reads with
// ?since= or resets it): they keep a forgotten log from eating the machine.
func newEventLog(name string) *eventLog {
	return &eventLog{name: name, maxEntries: 100_000, maxBytes: 16 << 20}
}

// add appends e, dropping the oldest entries past the bounds.
func (l *eventLog) add(e string) {
	l.entries = append(l.entries, e)
	l.bytes += len(e)
	for len(l.entries) > 1 && (len(l.entries) > l.maxEntries || l.bytes > l.maxBytes) {
		l.bytes -= len(l.entries[0])
		l.entries[0] = "" // the string can go; append reallocates the array in time
		l.entries = l.entries[1:]
		l.first++
	}
}

// next returns the index the next entry will get.
func (l *eventLog) next() int { return l.first + len(l.entries) }

// since returns a copy of the entries from index i on (never nil): a 410
// when some were dropped, a 400 when i is past the end.
func (l *eventLog) since(i int) ([]string, error) {
	switch {
	case i < l.first:
		return nil, newError(http.StatusGone, "%s dropped: the log keeps the entries from %d on, not %d", l.name, l.first, i)
	case i > l.next():
		return nil, badRequest("%s past the end: since %d is past the end of the log (next %d); was it reset?", l.name, i, l.next())
	}
	return append([]string{}, l.entries[i-l.first:]...), nil
}

// clear empties the log; indexes start again at 0.
func (l *eventLog) clear() { l.first, l.entries, l.bytes = 0, nil, 0 }
