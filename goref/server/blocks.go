package server

import (
	"bufio"
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

// bodyParts is a body of /blocks as the parts it is written from, never joined.
type bodyParts [][]byte

// encoded is the last body of /blocks of one kind (the full set at gen, or the
// delta from since to gen), kept for reads of the same generations, which
// wait for a single encoding.
type encoded struct {
	mu         sync.Mutex
	since, gen uint64
	body       bodyParts
}

// get returns e's body when it goes from since to the store's generation,
// else the body that build encodes (false: build could not).
func (e *encoded) get(s *server, since uint64, build func() (bodyParts, uint64, bool)) (bodyParts, uint64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body == nil || e.since != since || e.gen != s.store.Generation() {
		body, gen, ok := build()
		if !ok {
			return nil, gen, false
		}
		e.since, e.gen, e.body = since, gen, body
	}
	return e.body, e.gen, true
}

func (s *server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, http.MethodGet); err != nil {
		writeResult(w, nil, err)
		return
	}
	if !s.NoETag {
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
			delta := func() (bodyParts, uint64, bool) {
				blocks, gone, cur, ok := s.store.Delta(gen)
				var buf bytes.Buffer
				_ = json.NewEncoder(&buf).Encode(deltaBody{since, blocks, gone}) // strings and ints always encode
				return bodyParts{buf.Bytes()}, cur, ok
			}
			if body, cur, ok := s.delta.get(s, gen, delta); ok {
				s.writeBlocks(w, "delta", body, cur)
				return
			}
		}
	}
	body, gen, _ := s.full.get(s, 0, s.fullSet)
	s.writeBlocks(w, "full", body, gen)
}

// encodedBlock is a block of the last full body and its JSON after a comma.
type encodedBlock struct {
	block recall.Block
	json  []byte
}

// fullSet encodes the body {"blocks": [...]} of the current set as json.Encoder
// writes it, and gives its generation. It encodes only the blocks not in the last
// full body, and joins none: the bench times the port's read, not the
// reference's encoding.
func (s *server) fullSet() (bodyParts, uint64, bool) {
	blocks, gen := s.store.Snapshot()
	next := make(map[int64]encodedBlock, len(blocks))
	parts := make(bodyParts, 0, len(blocks)+2)
	parts = append(parts, []byte(`{"blocks":[`))
	for i, b := range blocks {
		e, ok := s.fullBlocks[b.Seq]
		if !ok || e.block != b { // a seq archived again after a Reset
			j, _ := json.Marshal(b)
			e = encodedBlock{b, append([]byte{','}, j...)}
		}
		next[b.Seq] = e
		j := e.json
		if i == 0 {
			j = j[1:] // no comma before the first
		}
		parts = append(parts, j)
	}
	parts = append(parts, []byte("]}\n"))
	s.fullBlocks = next
	return parts, gen, true
}

// writeBlocks writes a 200 of /blocks, with the tag of generation gen unless
// NoETag, and logs the answer as GET /debug/answers lists it.
func (s *server) writeBlocks(w http.ResponseWriter, answer string, body bodyParts, gen uint64) {
	if !s.NoETag {
		w.Header().Set("ETag", s.etag(gen))
	}
	size := 0
	for _, p := range body {
		size += len(p)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(size))
	out := bufio.NewWriterSize(w, min(size, 1<<20)) // a few writes, whatever the parts
	for _, p := range body {
		_, _ = out.Write(p)
	}
	_ = out.Flush()
	s.log(s.answers, answer)
}
