package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"recallref/recall"
)

// The answers of GET /internal/v1/recall/blocks, as GET /debug/answers
// lists them.
const (
	answerFull        = "full"
	answerDelta       = "delta"
	answerNotModified = "not modified"
)

// deltaBody is the answer to ?since= for a tag whose change the store knows.
type deltaBody struct {
	Since  string         `json:"since"`
	Blocks []recall.Block `json:"blocks"`
	Gone   []int64        `json:"gone"`
}

// encoded is the last body encoded for one key: the generation of a full
// body, or the since and current generations of a delta. A GET of an
// unchanged set writes it again instead of encoding the set anew, so that
// a full read right after a run of 304s costs the write alone.
type encoded struct {
	mu   sync.Mutex
	key  [2]uint64
	body []byte
	gen  uint64
}

// get returns the body kept for key, or builds it with build (which returns
// its key, its value and the generation it names, or false for no body) and
// keeps it. Callers for one key wait for a single build.
func (e *encoded) get(key [2]uint64, build func() ([2]uint64, any, uint64, bool)) ([]byte, uint64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body != nil && e.key == key {
		return e.body, e.gen, true
	}
	k, v, gen, ok := build()
	if !ok {
		return nil, gen, false
	}
	var buf bytes.Buffer
	buf.Grow(len(e.body) + len(e.body)/8) // the next set is about the size of the last
	_ = json.NewEncoder(&buf).Encode(v)   // blocks of strings and ints always encode
	e.key, e.body, e.gen = k, buf.Bytes(), gen
	return e.body, gen, true
}

func (s *server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, http.MethodGet); err != nil {
		writeResult(w, nil, err)
		return
	}
	if !s.etags {
		body, _ := s.fullBody()
		s.writeBlocks(w, answerFull, body, "")
		return
	}
	// The generation read here names the set at this instant: a 304
	// with its tag is as true as a 200 would be.
	tag := s.etag(s.store.Generation())
	since, hasSince := s.sinceTag(r)
	if namesTag(r.Header.Values("If-None-Match"), tag) || hasSince && since == tag {
		w.Header().Set("ETag", tag)
		w.WriteHeader(http.StatusNotModified)
		s.addAnswer(answerNotModified)
		return
	}
	if gen, ok := s.ownGeneration(since); hasSince && ok {
		if body, cur, ok := s.deltaBody(since, gen); ok {
			s.writeBlocks(w, answerDelta, body, s.etag(cur))
			return
		}
	}
	body, gen := s.fullBody()
	s.writeBlocks(w, answerFull, body, s.etag(gen))
}

// sinceTag returns the ?since= tag of a request, when the server serves
// incremental reads and the request has one.
func (s *server) sinceTag(r *http.Request) (string, bool) {
	if !s.since {
		return "", false
	}
	q := r.URL.Query()
	return q.Get("since"), q.Has("since")
}

// ownGeneration returns the generation that tag names, when it is a tag of
// this server exactly as etag writes it.
func (s *server) ownGeneration(tag string) (uint64, bool) {
	prefix := `"` + s.nonce + "-"
	if len(tag) <= len(prefix)+1 || tag[:len(prefix)] != prefix {
		return 0, false
	}
	gen, err := strconv.ParseUint(tag[len(prefix):len(tag)-1], 10, 64)
	return gen, err == nil && s.etag(gen) == tag
}

// fullBody returns the body {"blocks": [...]} of the current set and its
// generation.
func (s *server) fullBody() ([]byte, uint64) {
	body, gen, _ := s.full.get([2]uint64{s.store.Generation()}, func() ([2]uint64, any, uint64, bool) {
		blocks, gen := s.store.Snapshot()
		return [2]uint64{gen}, map[string][]recall.Block{"blocks": blocks}, gen, true
	})
	return body, gen
}

// deltaBody returns the delta from generation since (named by tag) to the
// current set, and the current generation; false when the store no longer
// knows since.
func (s *server) deltaBody(tag string, since uint64) ([]byte, uint64, bool) {
	return s.delta.get([2]uint64{since, s.store.Generation()}, func() ([2]uint64, any, uint64, bool) {
		blocks, gone, gen, ok := s.store.Delta(since)
		return [2]uint64{since, gen}, deltaBody{tag, blocks, gone}, gen, ok
	})
}

// writeBlocks writes a 200 of /blocks, with its tag unless it is empty.
func (s *server) writeBlocks(w http.ResponseWriter, answer string, body []byte, tag string) {
	if tag != "" {
		w.Header().Set("ETag", tag)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	s.addAnswer(answer)
}

func (s *server) addAnswer(answer string) {
	s.mu.Lock()
	s.answers.add(answer)
	s.mu.Unlock()
}
