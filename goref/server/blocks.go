package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"recallref/recall"
)

// deltaBody is the answer to ?since= for a tag whose change the store knows.
type deltaBody struct {
	Since  string         `json:"since"`
	Blocks []recall.Block `json:"blocks"`
	Gone   []int64        `json:"gone"`
}

// encoded is the last body of /blocks of one kind (the full set at gen, or the
// delta from since to gen), kept for reads of the same generations, which
// wait for a single encoding.
type encoded struct {
	mu         sync.Mutex
	since, gen uint64
	body       []byte
}

// set keeps v, encoded, as the body from since to gen.
func (e *encoded) set(since, gen uint64, v any) {
	var buf bytes.Buffer
	buf.Grow(len(e.body) + len(e.body)/8) // the next set is about the size of the last
	_ = json.NewEncoder(&buf).Encode(v)   // blocks of strings and ints always encode
	e.since, e.gen, e.body = since, gen, buf.Bytes()
}

func (s *server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, http.MethodGet); err != nil {
		writeResult(w, nil, err)
		return
	}
	if s.NoETag {
		body, _ := s.fullBody()
		s.writeBlocks(w, "full", body, "")
		return
	}
	// The generation read here names the set at this instant: a 304
	// with its tag is as true as a 200 would be.
	tag := s.etag(s.store.Generation())
	q := r.URL.Query()
	since, hasSince := q.Get("since"), q.Has("since") && !s.NoSince
	if namesTag(r.Header.Values("If-None-Match"), tag) || hasSince && since == tag {
		w.Header().Set("ETag", tag)
		w.WriteHeader(http.StatusNotModified)
		s.log(s.answers, "not modified")
		return
	}
	if gen, ok := s.ownGeneration(since); hasSince && ok {
		if body, cur, ok := s.deltaBody(since, gen); ok {
			s.writeBlocks(w, "delta", body, s.etag(cur))
			return
		}
	}
	body, gen := s.fullBody()
	s.writeBlocks(w, "full", body, s.etag(gen))
}

// fullBody returns the body {"blocks": [...]} of the current set and its
// generation.
func (s *server) fullBody() ([]byte, uint64) {
	e := &s.full
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body == nil || e.gen != s.store.Generation() {
		blocks, gen := s.store.Snapshot()
		e.set(gen, gen, map[string][]recall.Block{"blocks": blocks})
	}
	return e.body, e.gen
}

// deltaBody returns the delta from generation since (named by tag) to the
// current one, and that; false when the store no longer knows since.
func (s *server) deltaBody(tag string, since uint64) ([]byte, uint64, bool) {
	e := &s.delta
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body == nil || e.since != since || e.gen != s.store.Generation() {
		blocks, gone, gen, ok := s.store.Delta(since)
		if !ok {
			return nil, gen, false
		}
		e.set(since, gen, deltaBody{tag, blocks, gone})
	}
	return e.body, e.gen, true
}

// writeBlocks writes a 200 of /blocks, with its tag unless it is empty, and
// logs the answer as GET /debug/answers lists it.
func (s *server) writeBlocks(w http.ResponseWriter, answer string, body []byte, tag string) {
	if tag != "" {
		w.Header().Set("ETag", tag)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	s.log(s.answers, answer)
}
