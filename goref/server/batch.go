package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// archiveBatchRoute archives every block of {"blocks": [...]}, or none
// when one is not a block.
func (s *server) archiveBatchRoute(r *http.Request) (any, error) {
	blocks, err := readList(r, "blocks", archivedBlock)
	if err != nil {
		return nil, err
	}
	seqs := make([]int64, len(blocks))
	for i, b := range blocks {
		if seqs[i], err = s.store.Add(b.label, b.content, b.locked); err != nil {
			return nil, err
		}
	}
	return map[string][]int64{"seqs": seqs}, nil
}

// execBatchRoute runs every call of {"calls": [...]} as execRoute would
// run it alone (the delay once for the batch), and answers each call's
// status and body fields.
func (s *server) execBatchRoute(r *http.Request) (any, error) {
	calls, err := readList(r, "calls", toolCall)
	if err != nil {
		return nil, err
	}
	fault := s.execFault(r) // a failure here is every call's
	results := make([]map[string]any, len(calls))
	for i, c := range calls {
		output, err := "", fault
		if err == nil {
			output, err = s.runTool(c)
		}
		results[i] = map[string]any{"status": http.StatusOK, "output": output}
		if err != nil {
			status, _ := result(nil, err)
			results[i] = map[string]any{"status": status, "error": err.Error()}
		}
	}
	return map[string]any{"results": results}, nil
}

// batchResponse is one answer within a POST /debug/batch answer.
type batchResponse struct {
	Status int `json:"status"`
	Body   any `json:"body"`
}

// batchRoute runs the debug requests of {"requests": [...]} in order, as
// the README says.
func (s *server) batchRoute(r *http.Request) (any, error) {
	subs, err := readList(r, "requests", batchRequest)
	if err != nil {
		return nil, err
	}
	responses := []batchResponse{}
	for _, sub := range subs {
		resp := batchResponse{http.StatusNotFound, "404 page not found\n"} // net/http's NotFound
		if rt, ok := s.debug[sub.URL.Path]; ok {
			resp.Status, resp.Body = result(rt.answer(sub.WithContext(r.Context())))
		}
		responses = append(responses, resp)
		if resp.Status < 200 || resp.Status > 299 {
			break
		}
	}
	return map[string]any{"responses": responses}, nil
}

// batchRequest makes the request that one object of a batch describes.
func batchRequest(m map[string]json.RawMessage) (*http.Request, error) {
	var method, target string
	if json.Unmarshal(m["method"], &method) != nil || method != http.MethodGet && method != http.MethodPost {
		return nil, errors.New(`"method" must be "GET" or "POST"`)
	}
	_ = json.Unmarshal(m["path"], &target) // "" unless a string
	u, err := url.ParseRequestURI(target)  // a target "/path?query"
	if err != nil || u.Host != "" || !strings.HasPrefix(u.Path, "/debug/") ||
		path.Clean(u.Path) != u.Path || u.Path == PathBatch {
		return nil, errors.New(`"path" must be a clean path under /debug/ (the batch route aside), with a query or not`)
	}
	var body io.Reader = http.NoBody
	if raw := m["body"]; len(raw) > 0 && string(raw) != "null" { // decoded values come trimmed
		body = bytes.NewReader(raw)
	}
	return http.NewRequest(method, target, body)
}
