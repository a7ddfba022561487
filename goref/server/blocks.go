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

// get returns e's body when it goes from since to the store's generation,
// else encodes the value that build reads (false: build could not).
func (e *encoded) get(s *server, since uint64, build func() (any, uint64, bool)) ([]byte, uint64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body == nil || e.since != since || e.gen != s.store.Generation() {
		v, gen, ok := build()
		if !ok {
			return nil, gen, false
		}
		var buf bytes.Buffer
		buf.Grow(len(e.body) + len(e.body)/8) // the next body is about the size of the last
		_ = json.NewEncoder(&buf).Encode(v)   // blocks of strings and ints always encode
		e.since, e.gen, e.body = since, gen, buf.Bytes()
	}
	return e.body, e.gen, true
}

func (s *server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, http.MethodGet); err != nil {
		writeResult(w, nil, err)
		return
	}
	if s.NoETag {
		body, _, _ := s.full.get(s, 0, s.fullSet)
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
		delta := func() (any, uint64, bool) {
			blocks, gone, cur, ok := s.store.Delta(gen)
			return deltaBody{since, blocks, gone}, cur, ok
		}
		if body, cur, ok := s.delta.get(s, gen, delta); ok {
			s.writeBlocks(w, "delta", body, s.etag(cur))
			return
		}
	}
	body, gen, _ := s.full.get(s, 0, s.fullSet)
	s.writeBlocks(w, "full", body, s.etag(gen))
}

// fullSet reads the body {"blocks": [...]} of the current set, and its generation.
func (s *server) fullSet() (any, uint64, bool) {
	blocks, gen := s.store.Snapshot()
	return map[string][]recall.Block{"blocks": blocks}, gen, true
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
