// Package server serves the contract's HTTP API (docs/contract.md) over an
// archive: archiving blocks, reading them, and running the recall tools.
//
// GET /internal/v1/recall/blocks has the contract's extensions: every 200
// carries a strong ETag "<nonce>-<generation>" (a nonce drawn by New); an
// If-None-Match or a ?since= naming the current tag gets a 304; a ?since=
// tag whose generation the archive still knows gets the delta {"since",
// "blocks", "gone"}, any other the full body. Options.NoETag and NoSince
// turn them off.
//
// The debug routes, for the harness and the tests (Options.NoDebug makes
// every /debug/ path a bare net/http 404, as a production Go answers):
//   - GET /debug/requests, /debug/reads and /debug/answers: 200 {"requests"
//     (or "reads", "answers"): [...], "next": N}, the requests received but
//     those under /debug/ ("METHOD /path?query"), the tools' archive reads
//     ("block?seq=N" or "blocks"), the answers of /blocks ("full", "delta" or
//     "not modified"); N counts them since the start or the last reset,
//     ?since=K lists those from K on (K > N: 400). Each log keeps its last
//     LogMaxEntries entries, LogMaxBytes at most; dropped entries: 410;
//   - GET /debug/version: the Go and Unicode versions, the platform;
//   - POST /debug/lock {"seq": N, "locked": bool} locks or unlocks block N:
//     200 with the body's values, 404 for a seq never archived;
//   - POST /debug/reset, optional body {"first_seq": N}, empties the archive
//     (next seq N, by default the initial one) and the logs: 200
//     {"first_seq": N}. The ETag generation keeps increasing;
//   - POST /debug/archive {"blocks": [{"label", "content", "locked"?}, ...]}
//     archives them all, as /internal/v1/recall/archive would, or none:
//     200 {"seqs": [...]};
//   - POST /debug/exec {"calls": [{"name", "args"}, ...]} runs them as
//     /internal/v1/tool/exec would, test options included (the delay once):
//     200 {"results": [...]}, each {"status": N} and that answer's fields;
//   - POST /debug/batch {"requests": [{"method": "GET" or "POST", "path":
//     "/debug/...", "body": v?}, ...]} runs the debug requests (but itself)
//     in order, up to the first answer that is not 2xx: 200 {"responses":
//     [{"status": N, "body": v}, ...]}, v the answer's JSON (an unknown
//     path's 404 text as a JSON string). A request that is not such a GET
//     or POST fails the batch before any runs.
//
// A bad body is answered 400 {"error": s}, another method 405.
// Options.RewriteOutput, ExecDelay and ExecStatus change what POST
// /internal/v1/tool/exec answers, and nothing else.
package server
