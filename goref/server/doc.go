// Package server serves the contract's HTTP API (docs/contract.md) over an
// archive: archiving blocks, reading them, and running the recall tools.
//
// GET /internal/v1/recall/blocks carries a strong ETag "<nonce>-<generation>";
// an If-None-Match or a ?since= naming the current tag gets a 304, a ?since=
// tag whose generation the archive still knows the delta {"since", "blocks",
// "gone"}, any other the full body (Options.NoETag, NoSince turn them off).
//
// The debug routes (Options.NoDebug: every /debug/ path a bare 404):
//   - GET /debug/requests, /debug/reads, /debug/answers: {name: [...],
//     "next": N}, the requests received outside /debug/ ("METHOD /target"),
//     the tools' archive reads ("block?seq=N", "blocks"), the answers of
//     /blocks ("full", "delta", "not modified"); ?since=K lists those from
//     K on (K > N: 400, dropped past LogMaxEntries or LogMaxBytes: 410);
//   - GET /debug/version: the Go and Unicode versions, the platform;
//   - POST /debug/lock {"seq", "locked"}: 200 echoed, 404 for a seq never
//     archived; POST /debug/reset {"first_seq"?}: an empty archive and logs;
//   - POST /debug/archive {"blocks": [...]}, /debug/exec {"calls": [...]}:
//     every block archived (or none), every call run as /tool/exec runs it
//     (the delay once), each result {"status", "output" or "error"};
//   - POST /debug/batch {"requests": [{"method", "path", "body"?}, ...]}: the
//     debug requests in order up to the first that is not 2xx, answered
//     {"responses": [{"status", "body"}, ...]}; a request that is not a GET
//     or POST under /debug/ fails the batch before any runs.
//
// A bad body is answered 400 {"error": s}, another method 405. The test
// options RewriteOutput, ExecDelay and ExecStatus change POST
// /internal/v1/tool/exec alone.
package server
