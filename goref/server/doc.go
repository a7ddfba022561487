// Package server serves the contract's HTTP API (docs/contract.md) over
// an archive: archiving blocks, reading them, and running the recall tools.
//
// GET /internal/v1/recall/blocks is conditional, as the contract's extension
// defines it: every 200 carries a strong ETag, "<nonce>-<generation>" (a
// random nonce drawn by New, the archive's generation), and a request whose
// If-None-Match names the current tag is answered 304 Not Modified, with the
// tag and no body. Options.NoETag turns this off (a Go without the extension).
//
// It also serves the incremental reads of the contract's second extension:
// GET /internal/v1/recall/blocks?since=<tag> is answered 304 when the tag
// is the current one, a delta {"since": tag, "blocks": [...], "gone": [...]}
// when the store still knows the tag's generation (Store.Delta), and the full
// body otherwise (another server's tag, one from before a reset, one older
// than the store's history). Options.NoSince ignores ?since= (conditional
// reads alone). The last full body and the last delta are kept encoded, for
// the next read of the same generations.
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
//   - GET /debug/answers lists the answers of /blocks so far, as the two
//     logs above list theirs: "full", "delta" or "not modified" each;
//   - GET /debug/version names the Go and Unicode versions behind the answers;
//   - POST /debug/lock {"seq": N, "locked": bool} locks or unlocks the memory
//     of block N, which the contract's reads then miss or see again:
//     200 {"seq": N, "locked": bool}; 404 {"error": "not found"} for a seq
//     never archived; 400 for a bad body;
//   - POST /debug/reset, with an optional body {"first_seq": N}, empties the
//     archive (the next block gets seq N, by default the archive's initial
//     first seq) and clears the request, read and answer logs: 200 {"first_seq": N};
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
