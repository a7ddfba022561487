package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"recallref/recall"
)

// The routes.
const (
	PathArchive  = "/internal/v1/recall/archive"
	PathBlock    = "/internal/v1/recall/block"
	PathBlocks   = "/internal/v1/recall/blocks"
	PathExec     = "/internal/v1/tool/exec"
	PathRequests = "/debug/requests"
	PathReads    = "/debug/reads"
	PathAnswers  = "/debug/answers"
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
	// Delta returns the blocks made readable and the seqs made unreadable
	// since generation since, and the current generation, under one lock;
	// false when the store no longer knows since.
	Delta(since uint64) (blocks []recall.Block, gone []int64, gen uint64, ok bool)
}

// Options configure a server; the zero value serves the contract, with
// conditional reads of /blocks and the debug routes, without a token.
type Options struct {
	// Token, when not empty, is required of every request as
	// "Authorization: Bearer <token>"; others are answered 401.
	Token string
	// NoETag serves /blocks without ETag and ignores If-None-Match (and
	// ?since=).
	NoETag bool
	// NoSince ignores ?since= on /blocks: conditional reads without
	// incremental ones.
	NoSince bool
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
	since     bool   // ?since= is served
	nonce     string // names this server's generations in its ETags
	mux       *http.ServeMux
	debug     map[string]route // the debug routes by path, for the batch route
	rewrites  []Rewrite
	execDelay time.Duration
	execCode  int

	full, delta encoded // the last bodies of /blocks

	mu       sync.Mutex
	requests *eventLog
	reads    *eventLog // the tools' archive reads, as readLog names them
	answers  *eventLog // the answers of /blocks, as handleBlocks names them
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
		since:     !opts.NoETag && !opts.NoSince,
		nonce:     newNonce(),
		requests:  newEventLog(),
		reads:     newEventLog(),
		answers:   newEventLog(),
		rewrites:  slices.Clone(opts.RewriteOutput),
		execDelay: opts.ExecDelay,
		execCode:  opts.ExecStatus,
	}
	if opts.Token != "" {
		s.auth = true
		s.tokenHash = sha256.Sum256([]byte(opts.Token))
	}
	s.mux.Handle(PathArchive, route(s.archiveRoute))
	s.mux.Handle(PathBlock, route(s.blockRoute))
	s.mux.HandleFunc(PathBlocks, s.handleBlocks)
	s.mux.Handle(PathExec, route(s.execRoute))
	if !opts.NoDebug {
		s.debug = map[string]route{
			PathRequests:     s.requestsRoute,
			PathReads:        s.readsRoute,
			PathAnswers:      s.answersRoute,
			PathVersion:      versionRoute,
			PathLock:         s.lockRoute,
			PathReset:        s.resetRoute,
			PathArchiveBatch: s.archiveBatchRoute,
			PathExecBatch:    s.execBatchRoute,
		}
		for p, rt := range s.debug {
			s.mux.Handle(p, rt)
		}
		s.mux.Handle(PathBatch, route(s.batchRoute))
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
