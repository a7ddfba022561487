"""The bench's figures as text (printed, and in RESULTS.md), and the issue's targets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bench.data import SESSION_QUERIES
from bench.memory import CACHE_PER_JSON_BYTE
from recall._core import DEFAULT_CACHE_BYTES

MEMORY_LIMIT = 2.5
HERD_LIMIT = 3.0
KEPT_LIMIT = 1.5
PARITY_LIMIT_S = 2.0
RATIOS = {  # (session kind at a Go, measure): the ratio target's label
    ("best", "first"): "first search in a fresh process",
    ("warm", "first"): "first search after warm()",
    ("best", "repeated"): "repeated, six different queries (sum)",
    ("best", "new_block"): "search after one new block",
}
TARGETS = (  # (size, Go, the limits of RATIOS in order, None: no target)
    (100, "delta", (1.5, 0.5, 0.3, 0.5)),
    (10_000, "delta", (1.3, 0.3, 0.15, 0.3)),
    (100_000, "delta", (1.3, 0.3, 0.15, 0.3)),
    (10_000, "plain", (1.99, None, 1.49, 0.49)),  # no worse than before the extensions
)
KINDS = {
    "delta/best": "Go with deltas",
    "delta/warm": "deltas, warm()",
    "plain/best": "Go without",
    "delta/json": "deltas, json only",
}
MEASURES = {
    "first": "first search",
    "repeated": "repeated (6, sum)",
    "steady": "steady (6, sum)",
    "new_block": "after a new block",
}
_PAD = " " * 7


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f}"


def _mb(n: float | None) -> str:
    return "?" if n is None else f"{n / 1e6:.1f} MB"


def _target(name: str, limit: float, got: float | None, met: bool | None = None) -> dict[str, Any]:
    """A target, met when ``got`` is at most ``limit`` unless ``met`` says; not measured
    without ``got``."""
    if got is None:
        return {"target": name, "limit": limit}
    met = got <= limit if met is None else met
    return {"target": name, "value": round(got, 3), "limit": limit, "met": met}


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target: the figure measured, the limit, met or not (no value: not measured)."""
    at = {entry["blocks"]: entry for entry in results.get("sizes", [])}
    found = []
    for size, go, limits in TARGETS:
        for ((how, key), label), limit in zip(RATIOS.items(), limits, strict=True):
            if limit is not None:
                kind = f"{go}/{how}"
                figures = at.get(size, {}).get(kind)
                name = f"{label}, Python / Go at {size} blocks ({KINDS[kind]})"
                found.append(_target(name, limit, figures and figures[key]["ratio"]))
    for entry in results.get("sizes", []):
        found += _memory_targets(entry)
    parity = results.get("make_parity") or {}
    median = parity.get("median_s") if parity.get("ok") else None
    strict = None if median is None else median < PARITY_LIMIT_S
    found.append(_target("make parity, seconds", PARITY_LIMIT_S, median, strict))
    return found


def _memory_targets(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The memory targets at one size: the first search's peak, the kept set, the herds."""
    checks: list[tuple[str, float, float]] = []
    if (memory := entry.get("memory")) is not None:
        first = memory["rss"][0]["ratio"]
        checks.append(("peak memory of a first search / JSON (rss)", first, MEMORY_LIMIT))
        kept = (memory.get("rss_kept") or {}).get("set_bytes", 0) / entry["body_bytes"]
        checks.append(("kept set / JSON (the host's count)", kept, KEPT_LIMIT))
    for kind, herd in entry.get("herd", {}).items():
        what = f"{herd['callers']} {'threads' if kind == 'sync' else 'tasks'} after a change"
        checks.append((f"peak memory of {what} / JSON (rss)", herd["ratio"], HERD_LIMIT))
        reads = herd["answers"]["full"] + herd["answers"]["delta"]
        checks.append((f"reads of /blocks with a body, {what}", reads, 1))
    return [_target(f"{name} at {entry['blocks']} blocks", limit, v) for name, v, limit in checks]


def _cold(results: dict[str, Any]) -> Iterator[str]:
    if cold := results.get("coldstart"):
        yield "cold start, fresh processes (median ms; cpu = thread time):"
    for mode, f in (cold or {}).items():
        yield (
            f"  {mode:<6}: import recall {f['import']:.1f} (cpu {f['import (cpu)']:.1f}); "
            f"first to_lower {f['to_lower']:.2f}; first recall_tokens {f['recall_tokens']:.2f}; "
            f"first recall_search over 100 blocks in memory {f['recall_search']:.1f}"
        )


def _size_lines(entry: dict[str, Any]) -> Iterator[str]:
    for kind, kind_label in KINDS.items():
        if (figures := entry.get(kind)) is None:
            continue
        for key, label in MEASURES.items():
            if f := figures[key]:
                yield (
                    f"{entry['blocks']:>7} {kind_label:<16} {label:<19} "
                    f"{_ms(f['python_s'])} {_ms(f['go_s'])} {f['ratio']:>6.2f}x"
                )
        each = " ".join(f"{r:.2f}x" for r in figures["repeated_each_ratio"])
        yield (
            f"{_PAD} {'':<16} each of the six repeated: {each}; "
            f"import {figures['import_s'] * 1000:.0f} ms, host {figures['host_s'] * 1000:.1f} ms"
        )
    yield from (f"{_PAD} {line}" for line in _other_lines(entry))


def _other_lines(entry: dict[str, Any]) -> Iterator[str]:
    """The lines under a size's session rows: every other measure at that size."""
    body = entry["body_bytes"]
    if fetch := entry.get("fetch"):
        go_search = entry["delta/best"]["new_block"]["go_s"]
        yield "GET /blocks alone: " + ", ".join(
            f"{kind} Go {f['seconds'] * 1000:.1f} ms ({f['seconds'] / go_search:.2f}x Go's search)"
            for kind, f in fetch.items()
        )
    if (not_modified := entry.get("not_modified_s")) is not None:
        repeated = entry["delta/best"]["repeated"]["go_s"] / len(SESSION_QUERIES)
        yield (
            "a 304 alone, sent as a host sends it (the floor of a search through the kept "
            f"set): {not_modified * 1000:.2f} ms = {not_modified / repeated:.3f}x Go's repeated"
            " search"
        )
    if (warm := entry.get("delta/warm", {}).get("warm_s")) is not None:
        yield f"host.warm() itself: {warm * 1000:.1f} ms (before the first search)"
    if decode := entry.get("decode_s"):
        figures = ", ".join(f"{name} {sec * 1000:.1f} ms" for name, sec in decode.items())
        yield f"decoding the /blocks body alone: {figures}"
    if index := entry.get("index"):
        size = index["index_bytes"]
        yield (
            f"word index of every block: built in {index['build_s'] * 1000:.0f} ms, {_mb(size)} "
            f"({size / index['image_bytes']:.2f}x the images, {size / body:.2f}x the JSON); the "
            f"kept set {_mb(index['set_bytes'])} ({index['set_bytes'] / body:.2f}x the JSON)"
        )
    if after := entry.get("go_get_after_new_block"):
        yield "the Go's own GET /blocks right after one new block, its last 12 reads " + ", ".join(
            f"{mode} {f['seconds'] * 1000:.0f} ms" for mode, f in after.items()
        )
    if kernel := entry.get("kernel"):
        sides = ", ".join(
            f"{name} {_ms(k['python_s']).strip()} / {_ms(k['go_s']).strip()} ms = {k['ratio']:.2f}x"
            for name, k in kernel.items()
        )
        yield (
            "kernel (run_tool over blocks in memory, a scan: no index) against Go's "
            f"BenchmarkSearch: {sides}"
        )
    comp = entry["composition"]
    yield (
        f"/blocks body {_mb(body)}; contents ASCII {comp['ascii']:.0%}, Latin-1 "
        f"{comp['latin1']:.0%}, BMP {comp['bmp']:.0%}, beyond BMP {comp['astral']:.1%}; "
        f"archived in {entry['archive_s']:.1f} s"
    )
    if memory := entry.get("memory") or {}:
        yield (
            f"memory, query {memory['query']}, three searches in a fresh process "
            "(the first, then two through the kept set):"
        )
    for mode, what in (
        ("rss", "RSS high-water mark minus RSS before"),
        ("tracemalloc", "tracemalloc peak minus traced before"),
    ):
        if mode not in memory:
            continue
        figures = "; ".join(f"{_mb(s['peak_bytes'])} = {s['ratio']:.2f}x" for s in memory[mode])
        yield f" {mode} peak ({what}): {figures} the JSON"
        if kept := memory.get(f"{mode}_kept"):
            yield (
                f" kept between searches: set {_mb(kept['set_bytes'])} "
                f"({kept['set_bytes'] / body:.2f}x the JSON) + index {_mb(kept['index_bytes'])} "
                f"(the host's count); held after the searches: {_mb(kept['held_bytes'])}"
            )
    for kind, herd in entry.get("herd", {}).items():
        answers = ", ".join(f"{n} {what}" for what, n in herd["answers"].items())
        yield (
            f"herd: {herd['callers']} callers of one {kind} host at once after a change: "
            f"{herd['seconds'] * 1000:.0f} ms, peak RSS {_mb(herd['peak_bytes'])} = "
            f"{herd['ratio']:.2f}x the JSON; the Go answered /blocks: {answers}"
        )


def render_text(results: dict[str, Any]) -> str:
    """The human-readable report."""
    m, go, config = results["machine"], results.get("go", {}), results["config"]
    header = f"{'blocks':>7} {'session':<16} {'measure':<19} {'python ms':>9} {'go ms':>9}   ratio"
    lines = [
        "recall_search: Python against Go, side by side (medians; ratio = Python / Go)",
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}",
        f"python: {m['python']}; go: {go.get('go_version', '?')} "
        f"(unicode {go.get('unicode_version', '?')})",
        f"load average (1/5/15 min): before {results['load_before']}, "
        f"after {results.get('load_after')}",
        f"{config['rounds']} sessions of each kind per size, each in a fresh process; "
        f"seed {config['seed']}",
        "hosts' cache_bytes as the README sizes it: the JSON times "
        f"{CACHE_PER_JSON_BYTE['delta']} (Go with deltas) or {CACHE_PER_JSON_BYTE['plain']} "
        f"(without), {DEFAULT_CACHE_BYTES >> 20} MiB (the default) at least",
        "",
        *(f"query {q['name']}: args {q['args']}" for q in config["queries"]),
        "",
        *_cold(results),
        "",
        header,
        "-" * len(header),
        *(line for entry in results["sizes"] for line in _size_lines(entry)),
    ]
    if (parity := results.get("make_parity")) and parity.get("ok"):
        runs = ", ".join(f"{s:.2f}" for s in parity["seconds"])
        median = f"median {parity['median_s']:.2f} s ({runs})"
        lines += ["", f"make parity: {median}: {parity['last_line']}"]
    elif parity:
        lines += ["", f"make parity FAILED: {parity.get('last_line')}"]
    lines += [
        "",
        f"byte parity: {results['parity']['checked_outputs']} outputs compared with Go's, all "
        "identical; the Gos' request logs show no /tool/exec call from the Python path",
        "",
        "targets:",
    ]
    for t in results["targets"]:
        if "met" not in t:
            lines.append(f"  {t['target']} <= {t['limit']}: not measured in this run")
        else:
            verdict = "met" if t["met"] else "MISSED"
            lines.append(f"  {t['target']}: {t['value']} (limit {t['limit']}) {verdict}")
    lines.append(f"elapsed {results['elapsed_s']:.0f} s")
    return "\n".join(lines)


def render_markdown(results: dict[str, Any], text: str) -> str:
    """bench/RESULTS.md: the command, then the report as printed."""
    args = " ".join(results["config"].get("argv", []))
    command = f"make bench BENCH_ARGS='{args}'" if args else "make bench"
    return (
        "# `make bench` results\n\n"
        "Written by `python -m bench` (`make bench`); the figures are in `results.json`, "
        "what they mean in `NOTES.md`.\n"
        f"Command: `{command}` (sizes {results['config']['sizes']}).\n\n"
        "```text\n" + text + "\n```\n"
    )
