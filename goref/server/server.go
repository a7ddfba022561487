// Package server serves the contract's HTTP API (docs/contract.md) over an
// archive: archiving blocks, reading them (conditional and incremental reads
// of /blocks), running the recall tools, and the debug routes. The README's
// "The Go reference" lists the routes and how each answers.
package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"recallref/archive"
)

// The routes.
const (
	PathArchive      = "/internal/v1/recall/archive"
	PathBlock        = "/internal/v1/recall/block"
	PathBlocks       = "/internal/v1/recall/blocks"
	PathExec         = "/internal/v1/tool/exec"
	PathRequests     = "/debug/requests"
	PathReads        = "/debug/reads"
	PathAnswers      = "/debug/answers"
	PathVersion      = "/debug/version"
	PathLock         = "/debug/lock"
	PathReset        = "/debug/reset"
	PathArchiveBatch = "/debug/archive"
	PathExecBatch    = "/debug/exec"
	PathBatch        = "/debug/batch"
)

// Options configure a server; the zero value serves the contract (with conditional
// and incremental reads of /blocks) and the debug routes, with no token.
type Options struct {
	Token   string // when set, every request needs "Authorization: Bearer <Token>" (else 401)
	NoETag  bool   // /blocks without ETag, ignoring If-None-Match and ?since=
	NoSince bool   // /blocks ignores ?since= (conditional reads alone)
	NoDebug bool   // no /debug/ route (the request log is still kept)

	// Test only: POST /internal/v1/tool/exec answers differently from the contract.
	RewriteOutput []Rewrite     // applied in order to every tool output
	ExecDelay     time.Duration // when positive, every answer waits this long
	ExecStatus    int           // when not 0, every answer is this status and a JSON error
}

// Rewrite replaces every occurrence of Old with New.
type Rewrite struct{ Old, New string }

type server struct {
	Options
	store     *archive.Archive
	tokenHash [sha256.Size]byte // of the expected bearer token
	nonce     string            // names this server's generations in its ETags
	mux       *http.ServeMux
	debug     map[string]route // the debug routes by path

	full, delta encoded                // the last bodies of /blocks
	fullBlocks  map[int64]encodedBlock // the blocks of full by seq, under its lock

	mu                       sync.Mutex
	requests, reads, answers *eventLog // the debug logs
}

// New returns the handler serving store as opts say.
func New(store *archive.Archive, opts Options) http.Handler {
	opts.RewriteOutput = slices.Clone(opts.RewriteOutput)
	// 16 random hex digits: two servers, or two runs of one, never share their tags.
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails on the platforms Go supports
	s := &server{
		Options:   opts,
		store:     store,
		tokenHash: sha256.Sum256([]byte(opts.Token)),
		nonce:     hex.EncodeToString(nonce[:]),
		mux:       http.NewServeMux(),
		requests:  newEventLog("requests"),
		reads:     newEventLog("reads"),
		answers:   newEventLog("answers"),
	}
	s.mux.Handle(PathArchive, route{http.MethodPost, s.archiveRoute})
	s.mux.Handle(PathBlock, route{http.MethodGet, s.blockRoute})
	s.mux.HandleFunc(PathBlocks, s.handleBlocks)
	s.mux.Handle(PathExec, route{fn: s.execRoute})
	if !opts.NoDebug {
		s.debug = map[string]route{
			PathRequests:     {http.MethodGet, s.logRoute(s.requests)},
			PathReads:        {http.MethodGet, s.logRoute(s.reads)},
			PathAnswers:      {http.MethodGet, s.logRoute(s.answers)},
			PathVersion:      {http.MethodGet, versionRoute},
			PathLock:         {http.MethodPost, s.lockRoute},
			PathReset:        {http.MethodPost, s.resetRoute},
			PathArchiveBatch: {http.MethodPost, s.archiveBatchRoute},
			PathExecBatch:    {http.MethodPost, s.execBatchRoute},
			PathBatch:        {http.MethodPost, s.batchRoute}, // which refuses to batch itself
		}
		for p, rt := range s.debug {
			s.mux.Handle(p, rt)
		}
	}
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/debug/") {
		s.log(s.requests, r.Method+" "+r.RequestURI)
	}
	if s.Token != "" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeResult(w, nil, newError(http.StatusUnauthorized, "unauthorized"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized compares the bearer token in constant time (hashes of equal
// length, so neither the content nor the length leaks).
func (s *server) authorized(r *http.Request) bool {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	got := sha256.Sum256([]byte(token))
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) == 1
}

// log appends e to one of the server's logs.
func (s *server) log(l *eventLog, e string) {
	s.mu.Lock()
	l.add(e)
	s.mu.Unlock()
}
