"""One session of a host in a fresh process, Python beside Go: what ``make bench`` times.

``python -m bench.session URL [--go-first] [--warm] [--no-steady] [--cache-bytes N]
[--decoder best|json]`` times ``import recall``, ``GoTurnHost(URL)``, ``host.warm()``
(``--warm``), then each search beside Go's /tool/exec: **first** (Python first: it bears
a cold process's costs), **repeated** (the six ``SESSION_QUERIES``), **steady** (the six
again) and **new block** (a block archived untimed, then locked again). Python and Go
alternate (``--go-first``: Go first); every output is compared with Go's: a difference is
printed (exit 1). It prints one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    """Run one session and print its figures as JSON; 1 on a parity failure."""
    started = time.perf_counter()
    import recall  # the import timed: nothing of recall is imported before

    imported = time.perf_counter() - started

    import json

    from bench.data import SESSION_QUERIES
    from parity.goclient import GoClient, GoConnection
    from recall._core import DEFAULT_CACHE_BYTES

    parser = argparse.ArgumentParser(prog="python -m bench.session")
    add = parser.add_argument
    add("url")
    add("--go-first", action="store_true")
    add("--warm", action="store_true", help="host.warm() before the first")
    add("--no-steady", action="store_true", help="not the six again")
    add("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES)
    add("--decoder", choices=("best", "json"), default="best", help="json: as without msgspec")
    opts = parser.parse_args(argv)
    if opts.decoder == "json":
        import recall._blocks
        import recall._fast

        recall._fast._chosen = recall._blocks.decode_item

    started = time.perf_counter()
    host = recall.GoTurnHost(opts.url, timeout=300.0, cache_bytes=opts.cache_bytes)
    constructed = time.perf_counter() - started
    warmed = None
    if opts.warm:  # timed apart: what a service pays in its start-up hook
        started = time.perf_counter()
        host.warm()
        warmed = time.perf_counter() - started
    go = GoClient(GoConnection(opts.url), timeout=300.0)
    failures: list[str] = []

    def pair(what: str, args: str, go_first: bool = opts.go_first) -> dict[str, float]:
        outputs: dict[str, str] = {}
        seconds: dict[str, float] = {}
        for side in ("go", "python") if go_first else ("python", "go"):
            begin = time.perf_counter()
            outputs[side] = (host if side == "python" else go).exec_tool("recall_search", args)
            seconds[side] = time.perf_counter() - begin
        if outputs["python"] != outputs["go"]:
            failures.append(f"{what} {args}: python {outputs['python'][:300]!r}")
            failures.append(f"{what} {args}: go     {outputs['go'][:300]!r}")
        return seconds

    queries = [query.args() for query in SESSION_QUERIES]
    first = pair("first", queries[0], go_first=False)
    repeated = [pair("repeated", args) for args in queries]
    steady = [] if opts.no_steady else [pair("steady", args) for args in queries]
    seq = go.archive("bench: one new block", "Échec du déploiement, une fois de plus.")
    new_block = pair("new block", queries[0])
    # Locked again (the reference's debug route): the next session reads the archive of
    # the size measured, no more.
    go.lock(seq)
    host.close()
    go.close()
    figures: dict[str, object] = {"import_s": imported, "host_s": constructed, "warm_s": warmed}
    figures |= {"first": first, "repeated": repeated, "steady": steady, "new_block": new_block}
    names = [query.name for query in SESSION_QUERIES]
    print(json.dumps({**figures, "queries": names, "failures": failures}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
