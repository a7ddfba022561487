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
	if err := allow(r, http.MethodPost); err != nil {
		return nil, err
	}
	items, err := readList[any](r, "blocks")
	if err != nil {
		return nil, err
	}
	blocks := make([]toArchive, len(items))
	for i, m := range items {
		if blocks[i], err = archivedBlock(m); err != nil {
			return nil, badRequest("block %d: %v", i, err)
		}
	}
	seqs := make([]int64, 0, len(blocks))
	for _, b := range blocks {
		seq, err := s.store.Add(b.label, b.content, b.locked)
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return map[string][]int64{"seqs": seqs}, nil
}

// execBatchRoute runs every call of {"calls": [...]} as execRoute would
// run it alone, and answers each call's status and body fields.
func (s *server) execBatchRoute(r *http.Request) (any, error) {
	if err := allow(r, http.MethodPost); err != nil {
		return nil, err
	}
	items, err := readList[any](r, "calls")
	if err != nil {
		return nil, err
	}
	type call struct{ name, args string }
	calls := make([]call, len(items))
	for i, m := range items {
		name, args, err := toolCall(m)
		if err != nil {
			return nil, badRequest("call %d: %v", i, err)
		}
		calls[i] = call{name, args}
	}
	if err := s.execWait(r); err != nil {
		return nil, err
	}
	results := make([]map[string]any, 0, len(calls))
	for _, c := range calls {
		fields, err := map[string]string(nil), s.execDown()
		if err == nil {
			fields, err = s.runTool(c.name, c.args)
		}
		status := http.StatusOK
		if err != nil {
			status, _ = result(nil, err)
			fields = errorBody(err.Error())
		}
		res := map[string]any{"status": status}
		for k, v := range fields {
			res[k] = v
		}
		results = append(results, res)
	}
	return map[string]any{"results": results}, nil
}

// batchResponse is one answer within a POST /debug/batch answer.
type batchResponse struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// notFoundBody is the body of an unknown path in a batch: the text of
// net/http's NotFound, as a JSON string.
var notFoundBody, _ = json.Marshal("404 page not found\n")

// batchRoute runs the debug requests of {"requests": [...]} in order, as
// the package comment says.
func (s *server) batchRoute(r *http.Request) (any, error) {
	if err := allow(r, http.MethodPost); err != nil {
		return nil, err
	}
	items, err := readList[json.RawMessage](r, "requests")
	if err != nil {
		return nil, err
	}
	subs := make([]*http.Request, len(items))
	for i, m := range items {
		if subs[i], err = batchRequest(r, m); err != nil {
			return nil, badRequest("request %d: %v", i, err)
		}
	}
	responses := make([]batchResponse, 0, len(subs))
	for _, sub := range subs {
		resp := batchResponse{http.StatusNotFound, notFoundBody}
		if rt, ok := s.debug[sub.URL.Path]; ok {
			status, body := result(rt(sub))
			resp.Status = status
			if resp.Body, err = json.Marshal(body); err != nil {
				return nil, err
			}
		}
		responses = append(responses, resp)
		if resp.Status < 200 || resp.Status > 299 {
			break
		}
	}
	return map[string]any{"responses": responses}, nil
}

// batchRequest makes the request that one object of a batch describes, in
// the batch's context.
func batchRequest(r *http.Request, m map[string]json.RawMessage) (*http.Request, error) {
	var method, target string
	if json.Unmarshal(m["method"], &method) != nil || method != http.MethodGet && method != http.MethodPost {
		return nil, errors.New(`"method" must be "GET" or "POST"`)
	}
	if json.Unmarshal(m["path"], &target) != nil || !debugPath(target) {
		return nil, errors.New(`"path" must be a clean path under /debug/ (the batch route aside), with a query or not`)
	}
	var body io.Reader = http.NoBody
	if raw := m["body"]; !isBlank(raw) && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		body = bytes.NewReader(raw)
	}
	return http.NewRequestWithContext(r.Context(), method, target, body)
}

// debugPath reports whether target ("/path?query") names a debug route
// other than the batch route, by a path that needs no cleaning.
func debugPath(target string) bool {
	u, err := url.ParseRequestURI(target)
	return err == nil && u.Host == "" && strings.HasPrefix(u.Path, "/debug/") &&
		path.Clean(u.Path) == u.Path && u.Path != PathBatch
}
