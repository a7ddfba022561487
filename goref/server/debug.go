package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"strconv"
	"unicode"
)

// logRoute answers {l.name: [entries from ?since= on, or all], "next":
// count}: 400 for a since that is not a decimal integer >= 0.
func (s *server) logRoute(l *eventLog) func(*http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		since := 0
		if q := r.URL.Query(); q.Has("since") {
			n, err := strconv.ParseUint(q.Get("since"), 10, strconv.IntSize-1)
			if err != nil {
				return nil, badRequest(`"since" must be a decimal integer >= 0`)
			}
			since = int(n)
		}
		s.mu.Lock()
		entries, err := l.since(since)
		next := l.next()
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return map[string]any{l.name: entries, "next": next}, nil
	}
}

// versionRoute names what produced the answers: the Go version, its Unicode
// tables, and the platform.
func versionRoute(*http.Request) (any, error) {
	return map[string]string{
		"go_version":      runtime.Version(),
		"unicode_version": unicode.Version,
		"goos":            runtime.GOOS,
		"goarch":          runtime.GOARCH,
	}, nil
}

func (s *server) lockRoute(r *http.Request) (any, error) {
	fields, err := object[json.RawMessage](readBody(r))
	if err != nil {
		return nil, err
	}
	var seq *int64
	var locked *bool
	if json.Unmarshal(fields["seq"], &seq) != nil || seq == nil ||
		json.Unmarshal(fields["locked"], &locked) != nil || locked == nil {
		return nil, badRequest(`"seq" must be an int64 and "locked" a boolean`)
	}
	if !s.store.SetLocked(*seq, *locked) {
		return nil, newError(http.StatusNotFound, "not found")
	}
	return map[string]any{"seq": *seq, "locked": *locked}, nil
}

// resetRoute empties the archive and the debug logs. The next seq is N of
// the optional body {"first_seq": N}, or the store's initial seq when the
// body, or N, is absent or null.
func (s *server) resetRoute(r *http.Request) (any, error) {
	first := s.store.InitialSeq()
	body, err := readBody(r)
	var fields map[string]json.RawMessage
	if len(bytes.TrimSpace(body)) > 0 { // an empty body is none
		fields, err = object[json.RawMessage](body, err)
	}
	if err != nil {
		return nil, err
	}
	if raw, ok := fields["first_seq"]; ok && (json.Unmarshal(raw, &first) != nil || first < 1) {
		return nil, badRequest(`"first_seq" must be an int64 >= 1`)
	}
	s.mu.Lock()
	s.store.Reset(first)
	s.requests.clear()
	s.reads.clear()
	s.answers.clear()
	s.mu.Unlock()
	return map[string]int64{"first_seq": first}, nil
}
