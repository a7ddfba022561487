// Package server serves the contract's HTTP API (docs/contract.md) over
// an archive: archiving blocks, reading them, and running the recall tools.
//
// GET /internal/v1/recall/blocks is conditional, as the contract's extension
// defines it: every 200 carries a strong ETag, "<nonce>-<generation>" (a
// random nonce drawn by New, the archive's generation), and a request whose
// If-None-Match names the current tag is answered 304 Not Modified, with the
// tag and no body. Options.NoETag turns this off (a Go without the extension).
//
// Debug routes, for the harness and the tests:
//   - GET /debug/requests lists the requests received so far, except those
//     under /debug/ ("METHOD /path?query" each), and GET /debug/reads the
//     archive reads the tools made so far ("block?seq=N" or "blocks" each):
//     200 {"requests" (or "reads"): [...], "next": N}, N the count of
//     entries since the start or the last reset. ?since=K lists only the
//     entries from index K on (K <= N, else 400). Each log keeps its last
//     LogMaxEntries entries, LogMaxBytes at most: entries dropped to keep
//     that bound are answered 410 Gone;
//   - GET /debug/version names the Go and Unicode versions behind the answers;
//   - POST /debug/lock {"seq": N, "locked": bool} locks or unlocks the memory
//     of block N, which the contract's reads then miss or see again:
//     200 {"seq": N, "locked": bool}; 404 {"error": "not found"} for a seq
//     never archived; 400 for a bad body;
//   - POST /debug/reset, with an optional body {"first_seq": N}, empties the
//     archive (the next block gets seq N, by default the archive's initial
//     first seq) and clears the request and read logs: 200 {"first_seq": N};
//     400 for a bad body. The ETag generation keeps increasing;
//   - POST /debug/archive {"blocks": [{"label": s, "content": s, "locked":
//     bool?}, ...]} archives the blocks in order, each as POST
//     /internal/v1/recall/archive would: 200 {"seqs": [N, ...]}; 400 for a
//     bad body or block, and then none is archived;
//   - POST /debug/exec {"calls": [{"name": s, "args": s}, ...]} runs the
//     calls in order through the code of POST /internal/v1/tool/exec (its
//     test-only options included, the delay once for the batch): 200
//     {"results": [...]}, each result the status and the JSON fields that
//     /internal/v1/tool/exec answers for that call alone, such as
//     {"status": 200, "output": s} or {"status": 404, "error": s}; 400 for
//     a bad body. A fuzzer gets many of Go's outputs in one request;
//   - POST /debug/batch {"requests": [{"method": "GET" or "POST", "path":
//     "/debug/...", "body": v?}, ...]} runs the debug requests in order, each
//     as it would run alone (v its JSON body), and stops after the first
//     answer that is not 2xx: 200 {"responses": [{"status": N, "body": v},
//     ...]}, one per request run, v the answer's JSON (its text, as a JSON
//     string, when it is not JSON); 400 for a bad body, or a request that is
//     not a GET or POST of a path under /debug/ (the batch route aside), and
//     then none is run. A fuzzer steps from one archive state to the next in
//     one request: Go's outputs, the request log, then the next lock.
//
// Options.NoDebug serves none of them: every path under /debug/ is then an
// unknown path, a bare 404 from net/http as a production Go answers it.
//
// For tests that need a Go answering differently from the contract, the
// options RewriteOutput, ExecDelay and ExecStatus change what
// POST /internal/v1/tool/exec answers, and nothing else.
package server

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"recallref/recall"
)

// MaxBodyBytes bounds a request body; a larger body is answered 413.
const MaxBodyBytes = 64 << 20

// The routes.
const (
	PathArchive  = "/internal/v1/recall/archive"
	PathBlock    = "/internal/v1/recall/block"
	PathBlocks   = "/internal/v1/recall/blocks"
	PathExec     = "/internal/v1/tool/exec"
	PathRequests = "/debug/requests"
	PathReads    = "/debug/reads"
	PathVersion  = "/debug/version"
	PathLock     = "/debug/lock"
	PathReset    = "/debug/reset"
	// The batch routes: many archives, or many tool calls, in one request.
	PathArchiveBatch = "/debug/archive"
	PathExecBatch    = "/debug/exec"
	// PathBatch runs many debug requests in one.
	PathBatch = "/debug/batch"
)

// Store is the archive the server serves: the tools' reads, its writes (Add,
// and SetLocked and Reset for the debug routes), and the generations behind
// the ETags of GET /internal/v1/recall/blocks.
type Store interface {
	recall.Archive
	// Add archives a block and returns its seq.
	Add(label, content string, locked bool) (int64, error)
	// SetLocked locks or unlocks a block's memory; false when seq was never
	// archived.
	SetLocked(seq int64, locked bool) bool
	// Reset empties the archive; the next block gets seq firstSeq (>= 1).
	// The generation still increases.
	Reset(firstSeq int64)
	// InitialSeq returns the first seq the store was created with.
	InitialSeq() int64
	// Snapshot returns All() and the generation it was read at, under one
	// lock. A generation names one readable set, and is never reused.
	Snapshot() ([]recall.Block, uint64)
	// Generation returns the current generation.
	Generation() uint64
}

// Options configure a server; the zero value serves the contract, with
// conditional reads of /blocks and the debug routes, without a token.
type Options struct {
	// Token, when not empty, is required of every request as
	// "Authorization: Bearer <token>"; others are answered 401.
	Token string
	// NoETag serves /blocks without ETag and ignores If-None-Match.
	NoETag bool
	// NoDebug serves no /debug/ route (the request log is still kept).
	NoDebug bool

	// The test-only options, which make POST /internal/v1/tool/exec answer
	// differently from the contract:

	// RewriteOutput rewrites the output of every tool run: each Old becomes
	// New, in order, each rewrite working on the result of the one before.
	RewriteOutput []Rewrite
	// ExecDelay, when positive, delays every answer (a slow tool endpoint).
	ExecDelay time.Duration
	// ExecStatus, when not 0, is the status of every answer, with a JSON
	// error body, instead of running the tool (a tool endpoint that is down).
	ExecStatus int
}

// Rewrite replaces every occurrence of Old (not empty) with New.
type Rewrite struct {
	Old, New string
}

type server struct {
	store     Store
	tokenHash [sha256.Size]byte // of the expected Authorization value
	auth      bool
	etags     bool
	nonce     string // names this server's generations in its ETags
	mux       *http.ServeMux
	rewrites  []Rewrite
	execDelay time.Duration
	execCode  int

	mu       sync.Mutex
	requests *eventLog
	reads    *eventLog // the tools' archive reads, as readLog names them
}

// New returns the handler serving store as opts say. It panics on a
// Rewrite whose Old is empty.
func New(store Store, opts Options) http.Handler {
	for _, rw := range opts.RewriteOutput {
		if rw.Old == "" {
			panic("server: a Rewrite with an empty Old")
		}
	}
	s := &server{
		store:     store,
		mux:       http.NewServeMux(),
		etags:     !opts.NoETag,
		nonce:     newNonce(),
		requests:  newEventLog(),
		reads:     newEventLog(),
		rewrites:  slices.Clone(opts.RewriteOutput),
		execDelay: opts.ExecDelay,
		execCode:  opts.ExecStatus,
	}
	if opts.Token != "" {
		s.auth = true
		s.tokenHash = sha256.Sum256([]byte(opts.Token))
	}
	s.mux.HandleFunc(PathArchive, s.handleArchive)
	s.mux.HandleFunc(PathBlock, s.handleBlock)
	s.mux.HandleFunc(PathBlocks, s.handleBlocks)
	s.mux.HandleFunc(PathExec, s.handleExec)
	if !opts.NoDebug {
		s.mux.HandleFunc(PathRequests, s.handleRequests)
		s.mux.HandleFunc(PathReads, s.handleReads)
		s.mux.HandleFunc(PathVersion, handleVersion)
		s.mux.HandleFunc(PathLock, s.handleLock)
		s.mux.HandleFunc(PathReset, s.handleReset)
		s.mux.HandleFunc(PathArchiveBatch, s.handleArchiveBatch)
		s.mux.HandleFunc(PathExecBatch, s.handleExecBatch)
		s.mux.HandleFunc(PathBatch, s.handleBatch)
	}
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/debug/") {
		s.mu.Lock()
		s.requests.add(r.Method + " " + r.RequestURI)
		s.mu.Unlock()
	}
	if s.auth && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, errorBody("unauthorized"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized compares the bearer token in constant time (hashes of equal
// length, so neither the content nor the length leaks).
func (s *server) authorized(r *http.Request) bool {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) == 1
}

func (s *server) handleArchive(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	m, ok := readObject(w, r)
	if !ok {
		return
	}
	b, problem := archivedBlock(m)
	if problem != "" {
		writeJSON(w, http.StatusBadRequest, errorBody(problem))
		return
	}
	seq, err := s.store.Add(b.label, b.content, b.locked)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"seq": seq, "id": "r" + strconv.FormatInt(seq, 10)})
}

// toArchive is a block to archive, from an archive request's JSON object.
type toArchive struct {
	label, content string
	locked         bool
}

// archivedBlock reads the block that an archive request's object m
// describes, or says what is wrong with it.
func archivedBlock(m map[string]any) (toArchive, string) {
	label, ok1 := m["label"].(string)
	content, ok2 := m["content"].(string)
	if !ok1 || !ok2 {
		return toArchive{}, `"label" and "content" must be strings`
	}
	b := toArchive{label: label, content: content}
	switch v := m["locked"].(type) {
	case nil: // absent or null
	case bool:
		b.locked = v
	default:
		return toArchive{}, `"locked" must be a boolean`
	}
	return b, ""
}

// handleArchiveBatch archives every block of {"blocks": [...]}, or none
// when one is not a block.
func (s *server) handleArchiveBatch(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	var items []map[string]any
	if !readList(w, r, "blocks", &items) {
		return
	}
	blocks := make([]toArchive, len(items))
	for i, m := range items {
		b, problem := archivedBlock(m)
		if problem != "" {
			writeJSON(w, http.StatusBadRequest, errorBody(fmt.Sprintf("block %d: %s", i, problem)))
			return
		}
		blocks[i] = b
	}
	seqs := make([]int64, 0, len(blocks))
	for _, b := range blocks {
		seq, err := s.store.Add(b.label, b.content, b.locked)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, errorBody(err.Error()))
			return
		}
		seqs = append(seqs, seq)
	}
	writeJSON(w, http.StatusOK, map[string][]int64{"seqs": seqs})
}

func isNil[V any](m map[string]V) bool { return m == nil }

// readList reads a body {key: [object, ...]} into list (exact keys; null
// and a missing key are an empty list). It answers 413 or 400 itself.
func readList[V any](w http.ResponseWriter, r *http.Request, key string, list *[]map[string]V) bool {
	fields, ok := readFields(w, r)
	if !ok {
		return false
	}
	if raw, ok := fields[key]; ok {
		if err := json.Unmarshal(raw, list); err != nil || slices.ContainsFunc(*list, isNil[V]) {
			writeJSON(w, http.StatusBadRequest, errorBody(fmt.Sprintf("%q must be an array of objects", key)))
			return false
		}
	}
	return true
}

func (s *server) handleBlock(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	q := r.URL.Query()
	if !q.Has("seq") {
		writeJSON(w, http.StatusBadRequest, errorBody(`missing "seq"`))
		return
	}
	seq, err := strconv.ParseInt(q.Get("seq"), 10, 64)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody(`"seq" must be a decimal int64`))
		return
	}
	b, ok := s.store.Get(seq)
	if !ok {
		writeJSON(w, http.StatusNotFound, errorBody("not found"))
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (s *server) handleBlocks(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
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

// newNonce returns 16 random hex digits: two servers, or two runs of one,
// never share their tags.
func newNonce() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (it crashes the program instead)
	return hex.EncodeToString(b[:])
}

// etag returns the strong entity tag of generation gen, such as
// "9c1f0e7a5b3d2c48-42" (quotes included).
func (s *server) etag(gen uint64) string {
	return `"` + s.nonce + "-" + strconv.FormatUint(gen, 10) + `"`
}

// namesTag reports whether an If-None-Match field, its lines combined as one
// list, holds tag: it is "*", or a list of entity tags one of which matches
// tag by weak comparison (W/"x" matches "x"), as RFC 9110 sections 8.8.3.2
// and 13.1.2 define it. A malformed field names nothing, nor does an absent
// one: the request is then answered in full.
func namesTag(lines []string, tag string) bool {
	list := strings.Join(lines, ",")
	if strings.Trim(list, " \t") == "*" {
		return true
	}
	found := false
	for rest := list; ; {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			return found
		}
		if rest[0] == ',' { // empty list elements are allowed
			rest = rest[1:]
			continue
		}
		opaque, after, ok := cutETag(rest)
		if !ok {
			return false
		}
		found = found || opaque == tag
		rest = strings.TrimLeft(after, " \t")
		if rest != "" && rest[0] != ',' {
			return false
		}
	}
}

// cutETag cuts the entity tag at the start of s: its opaque tag (quotes
// included, without any W/ prefix) and the rest of s. ok is false when s does
// not start with an entity tag: [W/] DQUOTE *etagc DQUOTE, where etagc is
// %x21 / %x23-7E / %x80-FF.
func cutETag(s string) (opaque, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || 0x23 <= c && c <= 0x7E || c >= 0x80:
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func (s *server) handleExec(w http.ResponseWriter, r *http.Request) {
	if !s.execWait(r) {
		return
	}
	if s.execCode != 0 {
		writeJSON(w, s.execCode, s.execDown())
		return
	}
	if !allow(w, r, http.MethodPost) {
		return
	}
	m, ok := readObject(w, r)
	if !ok {
		return
	}
	name, args, ok := toolCall(m)
	if !ok {
		writeJSON(w, http.StatusBadRequest, errorBody(`"name" and "args" must be strings`))
		return
	}
	status, body := s.runTool(name, args)
	writeJSON(w, status, body)
}

// handleExecBatch runs every call of {"calls": [...]} as handleExec would
// run it alone, and answers each call's status and body fields.
func (s *server) handleExecBatch(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	var items []map[string]any
	if !readList(w, r, "calls", &items) {
		return
	}
	type call struct{ name, args string }
	calls := make([]call, len(items))
	for i, m := range items {
		name, args, ok := toolCall(m)
		if !ok {
			writeJSON(w, http.StatusBadRequest, errorBody(fmt.Sprintf(`call %d: "name" and "args" must be strings`, i)))
			return
		}
		calls[i] = call{name, args}
	}
	if !s.execWait(r) {
		return
	}
	results := make([]map[string]any, 0, len(calls))
	for _, c := range calls {
		status, body := s.execCode, s.execDown()
		if status == 0 {
			status, body = s.runTool(c.name, c.args)
		}
		result := map[string]any{"status": status}
		for k, v := range body {
			result[k] = v
		}
		results = append(results, result)
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// batchResponse is one answer within a POST /debug/batch answer.
type batchResponse struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// handleBatch runs the debug requests of {"requests": [...]} in order, as
// the package comment says.
func (s *server) handleBatch(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	var items []map[string]json.RawMessage
	if !readList(w, r, "requests", &items) {
		return
	}
	subs := make([]*http.Request, len(items))
	for i, m := range items {
		sub, problem := batchRequest(r, m)
		if problem != "" {
			writeJSON(w, http.StatusBadRequest, errorBody(fmt.Sprintf("request %d: %s", i, problem)))
			return
		}
		subs[i] = sub
	}
	responses := make([]batchResponse, 0, len(subs))
	for _, sub := range subs {
		rec := httptest.NewRecorder()
		s.mux.ServeHTTP(rec, sub)
		body := bytes.TrimSpace(rec.Body.Bytes())
		if !json.Valid(body) {
			body, _ = json.Marshal(rec.Body.String())
		}
		responses = append(responses, batchResponse{rec.Code, body})
		if rec.Code < 200 || rec.Code > 299 {
			break
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"responses": responses})
}

// batchRequest makes the request that one object of a batch describes, in
// the batch's context, or says what is wrong with it.
func batchRequest(r *http.Request, m map[string]json.RawMessage) (*http.Request, string) {
	var method, target string
	if json.Unmarshal(m["method"], &method) != nil || method != http.MethodGet && method != http.MethodPost {
		return nil, `"method" must be "GET" or "POST"`
	}
	if json.Unmarshal(m["path"], &target) != nil || !debugPath(target) {
		return nil, `"path" must be a clean path under /debug/ (the batch route aside), with a query or not`
	}
	var body io.Reader = http.NoBody
	if raw := bytes.TrimSpace(m["body"]); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		body = bytes.NewReader(raw)
	}
	sub, err := http.NewRequestWithContext(r.Context(), method, target, body)
	if err != nil {
		return nil, err.Error()
	}
	return sub, ""
}

// debugPath reports whether target ("/path?query") names a debug route
// other than the batch route, by a path that needs no cleaning.
func debugPath(target string) bool {
	u, err := url.ParseRequestURI(target)
	return err == nil && u.Host == "" && strings.HasPrefix(u.Path, "/debug/") &&
		path.Clean(u.Path) == u.Path && u.Path != PathBatch
}

// execWait waits ExecDelay, if any; false when the client gave up first.
func (s *server) execWait(r *http.Request) bool {
	if s.execDelay <= 0 {
		return true
	}
	t := time.NewTimer(s.execDelay)
	select {
	case <-t.C:
		return true
	case <-r.Context().Done(): // the client gave up
		t.Stop()
		return false
	}
}

// execDown is the error body of a tool endpoint made to answer ExecStatus.
func (s *server) execDown() map[string]string {
	return errorBody(fmt.Sprintf("tool endpoint down: %d %s", s.execCode, http.StatusText(s.execCode)))
}

// toolCall reads the name and args of a tool call's JSON object.
func toolCall(m map[string]any) (name, args string, ok bool) {
	name, ok1 := m["name"].(string)
	args, ok2 := m["args"].(string)
	return name, args, ok1 && ok2
}

// runTool runs one tool call: its status and JSON body, as
// POST /internal/v1/tool/exec answers them (ExecStatus aside).
func (s *server) runTool(name, args string) (int, map[string]string) {
	tool, ok := recall.Tools[name]
	if !ok {
		return http.StatusNotFound, errorBody(fmt.Sprintf("unknown tool %q", name))
	}
	output := tool(args, readLog{s.store, s})
	for _, rw := range s.rewrites {
		output = strings.ReplaceAll(output, rw.Old, rw.New)
	}
	return http.StatusOK, map[string]string{"output": output}
}

func (s *server) handleRequests(w http.ResponseWriter, r *http.Request) {
	s.serveLog(w, r, s.requests, "requests")
}

func (s *server) handleReads(w http.ResponseWriter, r *http.Request) {
	s.serveLog(w, r, s.reads, "reads")
}

// serveLog answers {key: [entries from ?since= on, or all], "next": count}:
// 400 for a since that is not a decimal integer >= 0 or that is past the
// end of the log; 410 when entries from since on were dropped.
func (s *server) serveLog(w http.ResponseWriter, r *http.Request, l *eventLog, key string) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	since := 0
	if q := r.URL.Query(); q.Has("since") {
		n, err := strconv.ParseUint(q.Get("since"), 10, strconv.IntSize-1)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody(`"since" must be a decimal integer >= 0`))
			return
		}
		since = int(n)
	}
	s.mu.Lock()
	entries, err := l.since(since)
	next := l.next()
	s.mu.Unlock()
	switch {
	case errors.Is(err, errDropped):
		writeJSON(w, http.StatusGone, errorBody(key+" "+err.Error()))
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody(key+" "+err.Error()))
	default:
		writeJSON(w, http.StatusOK, map[string]any{key: entries, "next": next})
	}
}

func (s *server) handleLock(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	fields, ok := readFields(w, r)
	if !ok {
		return
	}
	var seq *int64
	var locked *bool
	if json.Unmarshal(fields["seq"], &seq) != nil || seq == nil ||
		json.Unmarshal(fields["locked"], &locked) != nil || locked == nil {
		writeJSON(w, http.StatusBadRequest, errorBody(`"seq" must be an int64 and "locked" a boolean`))
		return
	}
	if !s.store.SetLocked(*seq, *locked) {
		writeJSON(w, http.StatusNotFound, errorBody("not found"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"seq": *seq, "locked": *locked})
}

func (s *server) handleReset(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	first := s.store.InitialSeq()
	if len(bytes.TrimSpace(body)) > 0 {
		fields, ok := decodeObject[json.RawMessage](w, body)
		if !ok {
			return
		}
		var n *int64
		if raw, ok := fields["first_seq"]; ok {
			if err := json.Unmarshal(raw, &n); err != nil || n != nil && *n < 1 {
				writeJSON(w, http.StatusBadRequest, errorBody(`"first_seq" must be an int64 >= 1`))
				return
			}
		}
		if n != nil {
			first = *n
		}
	}
	s.mu.Lock()
	s.store.Reset(first)
	s.requests.clear()
	s.reads.clear()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int64{"first_seq": first})
}

// readLog is the archive as a tool run by /tool/exec sees it: each read is
// recorded, in order, before it is made: Get(seq) as "block?seq=N" (N in
// canonical decimal), All() as "blocks".
type readLog struct {
	a recall.Archive
	s *server
}

var _ recall.Archive = readLog{}

func (l readLog) Get(seq int64) (recall.Block, bool) {
	l.s.addRead("block?seq=" + strconv.FormatInt(seq, 10))
	return l.a.Get(seq)
}

func (l readLog) All() []recall.Block {
	l.s.addRead("blocks")
	return l.a.All()
}

func (s *server) addRead(read string) {
	s.mu.Lock()
	s.reads.add(read)
	s.mu.Unlock()
}

// handleVersion names what produced the answers: the Go version, its Unicode
// tables, and the platform.
func handleVersion(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"go_version":      runtime.Version(),
		"unicode_version": unicode.Version,
		"goos":            runtime.GOOS,
		"goarch":          runtime.GOARCH,
	})
}

// allow answers 405 with an Allow header unless r uses method.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	writeJSON(w, http.StatusMethodNotAllowed, errorBody("method not allowed"))
	return false
}

// readObject reads a bounded body holding one JSON object (exact keys, a
// repeated key keeps its last value). It answers 413 or 400 itself.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	body, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	return decodeObject[any](w, body)
}

// readFields is readObject with each value left as its JSON text.
func readFields(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	body, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	return decodeObject[json.RawMessage](w, body)
}

// readBody reads a bounded body. It answers 413 or 400 itself.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeJSON(w, http.StatusRequestEntityTooLarge, errorBody("request body too large"))
		} else {
			writeJSON(w, http.StatusBadRequest, errorBody("cannot read request body"))
		}
		return nil, false
	}
	return body, true
}

// decodeObject decodes body, one JSON object, into a map (exact keys, a
// repeated key keeps its last value). It answers 400 itself.
func decodeObject[V any](w http.ResponseWriter, body []byte) (map[string]V, bool) {
	var m map[string]V
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		writeJSON(w, http.StatusBadRequest, errorBody("request body must be a JSON object"))
		return nil, false
	}
	return m, true
}

func errorBody(msg string) map[string]string { return map[string]string{"error": msg} }

// writeJSON writes v with encoding/json (HTML characters escaped).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
