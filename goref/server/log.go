package server

import (
	"errors"
	"fmt"
)

// The bounds of each debug log. A fuzzer that runs for hours reads its logs
// with ?since= after each call, or resets the server; the bounds only keep
// a forgotten log from eating the machine.
const (
	LogMaxEntries = 100_000
	LogMaxBytes   = 16 << 20
)

var (
	errDropped = errors.New("dropped")      // the entries asked for were dropped
	errPastEnd = errors.New("past the end") // the index asked for is past the end
)

// eventLog is an append-only log of strings whose entries keep their index
// (counted from the last clear) while the oldest are dropped, so that it
// holds at most maxEntries entries of maxBytes bytes in all (and always the
// newest entry). It is not safe for concurrent use.
type eventLog struct {
	maxEntries, maxBytes int
	first                int      // the index of entries[0]
	entries              []string // entries[i] has index first+i
	bytes                int      // the bytes of entries
}

func newEventLog() *eventLog {
	return &eventLog{maxEntries: LogMaxEntries, maxBytes: LogMaxBytes}
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

// since returns a copy of the entries from index i on (never nil).
func (l *eventLog) since(i int) ([]string, error) {
	switch {
	case i < l.first:
		return nil, fmt.Errorf("%w: the log keeps the entries from %d on, not %d", errDropped, l.first, i)
	case i > l.next():
		return nil, fmt.Errorf("%w: since %d is past the end of the log (next %d); was it reset?", errPastEnd, i, l.next())
	}
	return append([]string{}, l.entries[i-l.first:]...), nil
}

// clear empties the log; indexes start again at 0.
func (l *eventLog) clear() { l.first, l.entries, l.bytes = 0, nil, 0 }
