package server

import (
	"net/http"

	"recallref/recall"
)

func (s *server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, http.MethodGet); err != nil {
		writeResult(w, nil, err)
		return
	}
	if s.etags {
		// The generation read here names the set at this instant: a 304
		// with its tag is as true as a 200 would be.
		if tag := s.etag(s.store.Generation()); namesTag(r.Header.Values("If-None-Match"), tag) {
			w.Header().Set("ETag", tag)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	blocks, gen := s.store.Snapshot()
	if blocks == nil {
		blocks = []recall.Block{}
	}
	if s.etags {
		w.Header().Set("ETag", s.etag(gen))
	}
	writeJSON(w, http.StatusOK, map[string]any{"blocks": blocks})
}
