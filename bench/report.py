"""The bench's figures as text (printed, and in RESULTS.md), and the issue's targets."""

from __future__ import annotations

from typing import Any

__all__ = ["render_markdown", "render_text", "targets"]

TARGET_SIZE = 10_000
SMALL_SIZE = 100
MEMORY_LIMIT = 3.0
PARITY_LIMIT_S = 2.0
# (size, session kind, measure, label, limit): the targets, against the Go with
# the conditional reads, decoding as the hosts do.
TARGETS = (
    (TARGET_SIZE, "etag/best", "first", "first search in a fresh process", 2.0),
    (TARGET_SIZE, "etag/best", "repeated", "repeated, six different queries (sum)", 0.6),
    (TARGET_SIZE, "etag/best", "new_block", "search after one new block", 1.0),
    (SMALL_SIZE, "etag/best", "first", "first search in a fresh process", 3.0),
)
KINDS = {
    "etag/best": "Go with ETag",
    "plain/best": "Go without",
    "etag/json": "ETag, json only",
}
MEASURES = (
    ("first", "first search"),
    ("repeated", "repeated (6, sum)"),
    ("steady", "steady (6, sum)"),
    ("new_block", "after a new block"),
)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f}"


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target: the figure measured, the limit, met or not (no value: not measured)."""
    found: list[dict[str, Any]] = []
    at = {entry["blocks"]: entry for entry in results.get("sizes", [])}
    for size, kind, key, label, limit in TARGETS:
        name = f"{label}, Python / Go at {size} blocks ({KINDS[kind]})"
        entry = at.get(size)
        if entry is None or kind not in entry:
            found.append({"target": name, "limit": limit})
            continue
        ratio = entry[kind][key]["ratio"]
        found.append(
            {"target": name, "value": round(ratio, 3), "limit": limit, "met": ratio <= limit}
        )
    memory = results.get("memory")
    if memory is not None:
        worst = max(search["ratio"] for search in memory["rss"])
        found.append(
            {
                "target": f"peak memory of a search at {memory['blocks']} blocks / JSON (rss)",
                "value": round(worst, 3),
                "limit": MEMORY_LIMIT,
                "met": worst <= MEMORY_LIMIT,
            }
        )
    parity = results.get("make_parity")
    if parity is None or not parity.get("ok"):
        found.append({"target": "make parity, seconds", "limit": PARITY_LIMIT_S})
    else:
        found.append(
            {
                "target": "make parity, seconds",
                "value": round(parity["median_s"], 3),
                "limit": PARITY_LIMIT_S,
                "met": parity["median_s"] < PARITY_LIMIT_S,
            }
        )
    return found


def _cold(results: dict[str, Any]) -> list[str]:
    cold = results.get("coldstart")
    if not cold:
        return []
    lines = ["cold start, fresh processes (median ms; cpu = thread time):"]
    for mode, figures in cold.items():
        parts = [
            f"import recall {figures['import']:.1f} (cpu {figures['import (cpu)']:.1f})",
            f"first to_lower {figures['to_lower']:.2f}",
            f"first recall_tokens {figures['recall_tokens']:.2f}",
            f"first recall_search over 100 blocks in memory {figures['recall_search']:.1f}",
        ]
        lines.append(f"  {mode:<6}: " + "; ".join(parts))
    return lines


def _size_lines(entry: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    blocks = entry["blocks"]
    for kind, kind_label in KINDS.items():
        figures = entry.get(kind)
        if figures is None:
            continue
        for key, label in MEASURES:
            f = figures[key]
            lines.append(
                f"{blocks:>7} {kind_label:<16} {label:<19} "
                f"{_ms(f['python_s'])} {_ms(f['go_s'])} {f['ratio']:>6.2f}x"
            )
        each = " ".join(f"{r:.2f}x" for r in figures["repeated_each_ratio"])
        lines.append(
            f"{'':>7} {'':<16} each of the six repeated: {each}; "
            f"import {figures['import_s'] * 1000:.0f} ms, host {figures['host_s'] * 1000:.1f} ms"
        )
    fetch = entry.get("fetch", {})
    if fetch:
        go_first = entry["etag/best"]["new_block"]["go_s"]
        parts = [
            f"{kind} Go {f['seconds'] * 1000:.1f} ms ({f['seconds'] / go_first:.2f}x Go's search)"
            for kind, f in fetch.items()
        ]
        lines.append(f"{'':>7} GET /blocks alone: " + ", ".join(parts))
    decode = entry.get("decode_s")
    if decode:
        figures_text = ", ".join(f"{name} {sec * 1000:.1f} ms" for name, sec in decode.items())
        lines.append(f"{'':>7} decoding the /blocks body alone: {figures_text}")
    index = entry.get("index")
    if index:
        lines.append(
            f"{'':>7} word index of every block: built in {index['build_s'] * 1000:.0f} ms, "
            f"{_mb(index['index_bytes'])} ({index['index_bytes'] / index['image_bytes']:.2f}x "
            f"the images, {index['index_bytes'] / index['body_bytes']:.2f}x the JSON); the kept "
            f"set {_mb(index['set_bytes'])} ({index['set_bytes'] / index['body_bytes']:.2f}x "
            "the JSON)"
        )
    after = entry.get("go_get_after_new_block")
    if after:
        parts = [f"{mode} {f['seconds'] * 1000:.0f} ms" for mode, f in after.items()]
        lines.append(
            f"{'':>7} the Go's own GET /blocks right after one new block, its last 12 reads "
            + ", ".join(parts)
        )
    kernel = entry.get("kernel")
    if kernel:
        parts = [
            f"{name} {_ms(k['python_s']).strip()} / {_ms(k['go_s']).strip()} ms = {k['ratio']:.2f}x"
            for name, k in kernel.items()
        ]
        lines.append(
            f"{'':>7} kernel (run_tool over blocks in memory, a scan: no index) against Go's "
            "BenchmarkSearch: " + ", ".join(parts)
        )
    comp = entry["composition"]
    lines.append(
        f"{'':>7} /blocks body {_mb(entry['body_bytes'])}; contents ASCII {comp['ascii']:.0%}, "
        f"Latin-1 {comp['latin1']:.0%}, BMP {comp['bmp']:.0%}, beyond BMP {comp['astral']:.1%}; "
        f"archived in {entry['archive_s']:.1f} s"
    )
    return lines


def _memory_lines(memory: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"memory of the Python path, {memory['blocks']} blocks, query {memory['query']} "
        f"(/blocks body {_mb(memory['body_bytes'])}), three searches in a fresh process "
        "(the first, then two through the kept set; the word index's size is above):",
    ]
    for mode, what in (
        ("rss", "RSS high-water mark minus RSS before"),
        ("tracemalloc", "tracemalloc peak minus traced before"),
    ):
        figures = "; ".join(
            f"{_mb(s['peak_bytes'])} = {s['ratio']:.2f}x" for s in memory.get(mode, [])
        )
        lines.append(f"  {mode:<11} peak ({what}): {figures}")
        kept = memory.get(f"{mode}_kept")
        if kept:
            held = kept["held_bytes"]
            lines.append(
                f"  {'':<11} kept between searches: set {_mb(kept['set_bytes'])} + index "
                f"{_mb(kept['index_bytes'])} (the host's count, bounded by cache_bytes); "
                f"held after the searches: {_mb(held) if held is not None else '?'}"
            )
    return lines


def render_text(results: dict[str, Any]) -> str:
    """The human-readable report."""
    m = results["machine"]
    go = results.get("go", {})
    config = results["config"]
    lines = [
        "recall_search: Python against Go, side by side (medians; ratio = Python / Go)",
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}",
        f"python: {m['python']}; go: {go.get('go_version', '?')} "
        f"(unicode {go.get('unicode_version', '?')})",
        f"load average (1/5/15 min): before {results['load_before']}, "
        f"after {results.get('load_after')}",
        f"{config['rounds']} sessions of each kind per size, each in a fresh process; "
        f"seed {config['seed']}",
        "",
    ]
    for q in config["queries"]:
        lines.append(f"query {q['name']}: args {q['args']}")
    lines += ["", *_cold(results), ""]
    header = (
        f"{'blocks':>7} {'session':<16} {'measure':<19} {'python ms':>9} {'go ms':>9} {'ratio':>7}"
    )
    lines += [header, "-" * len(header)]
    for entry in results["sizes"]:
        lines += _size_lines(entry)
    memory = results.get("memory")
    if memory:
        lines += _memory_lines(memory)
    parity = results.get("make_parity")
    if parity:
        if parity.get("ok"):
            runs = ", ".join(f"{s:.2f}" for s in parity["seconds"])
            lines += [
                "",
                f"make parity: median {parity['median_s']:.2f} s ({runs}): {parity['last_line']}",
            ]
        else:
            lines += ["", f"make parity FAILED: {parity.get('last_line')}"]
    p = results["parity"]
    lines += [
        "",
        f"byte parity: {p['checked_outputs']} outputs compared with Go's, all identical; "
        "the Gos' request logs show no /tool/exec call from the Python path",
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
