// Package server serves the contract's HTTP API (docs/contract.md) over an
// archive: archiving blocks, reading them, and running the recall tools.
//
// GET /internal/v1/recall/blocks is conditional (the contract's extensions):
// every 200 carries a strong ETag "<nonce>-<generation>" (a random nonce
// drawn by New, the archive's generation); an If-None-Match or a ?since=
// naming the current tag is answered 304; a ?since= tag whose generation
// the archive still knows gets the delta {"since", "blocks", "gone"}, any
// other the full body. The last full body and the last delta are kept
// encoded. Options.NoETag and Options.NoSince turn the extensions off.
//
// The debug routes, for the harness and the tests (Options.NoDebug makes
// every /debug/ path a bare net/http 404, as a production Go answers):
//   - GET /debug/requests, /debug/reads and /debug/answers list the requests
//     received (but those under /debug/) as "METHOD /path?query", the tools'
//     archive reads as "block?seq=N" or "blocks", and the answers of /blocks
//     as "full", "delta" or "not modified": 200 {"requests" (or "reads",
//     "answers"): [...], "next": N}, N the count since the start or the last
//     reset; ?since=K lists the entries from K on (K > N: 400). Each log keeps
//     its last LogMaxEntries entries, LogMaxBytes at most; asking for dropped
//     entries is answered 410;
//   - GET /debug/version names the Go and Unicode versions and the platform;
//   - POST /debug/lock {"seq": N, "locked": bool} locks or unlocks the memory
//     of block N: 200 with the body's values, 404 for a seq never archived;
//   - POST /debug/reset, optional body {"first_seq": N}, empties the archive
//     (next seq N, by default the initial first seq) and the three logs:
//     200 {"first_seq": N}. The ETag generation keeps increasing;
//   - POST /debug/archive {"blocks": [{"label", "content", "locked"?}, ...]}
//     archives them in order, each as /internal/v1/recall/archive would, or
//     none when one is bad: 200 {"seqs": [...]};
//   - POST /debug/exec {"calls": [{"name", "args"}, ...]} runs them in order
//     as /internal/v1/tool/exec would (its test options included, the delay
//     once): 200 {"results": [...]}, each the status and the JSON fields of
//     that call's answer, such as {"status": 200, "output": s};
//   - POST /debug/batch {"requests": [{"method": "GET" or "POST", "path":
//     "/debug/...", "body": v?}, ...]} runs the debug requests (the batch route
//     aside) in order, and stops after the first answer that is not 2xx:
//     200 {"responses": [{"status": N, "body": v}, ...]}, v the answer's JSON
//     (a JSON string for the text of an unknown path's 404). A request that
//     is not such a GET or POST fails the batch before any runs.
//
// A bad body is answered 400 {"error": s}, another method 405.
// Options.RewriteOutput, ExecDelay and ExecStatus change what POST
// /internal/v1/tool/exec answers, and nothing else.
package server
