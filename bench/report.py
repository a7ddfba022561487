"""The bench's figures as text (printed, and in RESULTS.md), and the issue's targets."""

from __future__ import annotations

from typing import Any

__all__ = ["render_markdown", "render_text", "targets"]

KERNEL_LIMIT = 1.0
E2E_LIMIT = 1.5
MEMORY_LIMIT = 3.0
PARITY_LIMIT_S = 2.0
TARGET_SIZE = 10_000
MEMORY_SIZE = 50_000


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f}"


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target of the issue: the figure measured, the limit, met or not (None: not run)."""
    found: list[dict[str, Any]] = []
    at = {entry["blocks"]: entry for entry in results.get("sizes", [])}
    entry = at.get(TARGET_SIZE)
    for key, label, limit in (
        ("kernel", "kernel, Python / Go", KERNEL_LIMIT),
        ("first", "end to end, first search, Python / Go", E2E_LIMIT),
        ("repeated", "end to end, repeated search, Python / Go", E2E_LIMIT),
    ):
        if entry is None:
            found.append({"target": f"{label} at {TARGET_SIZE} blocks", "limit": limit})
            continue
        for query in entry["queries"]:
            ratio = query[key]["ratio"]
            found.append(
                {
                    "target": f"{label} at {TARGET_SIZE} blocks ({query['name']})",
                    "value": round(ratio, 3),
                    "limit": limit,
                    "met": ratio <= limit,
                }
            )
    memory = results.get("memory")
    if memory is None or memory["blocks"] != MEMORY_SIZE:
        found.append({"target": f"peak memory at {MEMORY_SIZE} blocks / JSON", "limit": 3.0})
    else:
        for mode in ("rss", "tracemalloc"):
            worst = max(search["ratio"] for search in memory[mode])
            found.append(
                {
                    "target": f"peak memory at {MEMORY_SIZE} blocks / JSON size ({mode})",
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


def render_text(results: dict[str, Any]) -> str:
    """The human-readable report."""
    m = results["machine"]
    go = results.get("go", {})
    lines = [
        "recall_search: Python against Go, side by side (medians; ratio = Python / Go)",
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}",
        f"python: {m['python']}; go: {go.get('go_version', '?')} "
        f"(unicode {go.get('unicode_version', '?')})",
        f"load average (1/5/15 min): before {results['load_before']}, "
        f"after {results.get('load_after')}",
        f"repeat {results['config']['repeat']}, kernel samples of >= "
        f"{results['config']['min_time_s']} s each side; seed {results['config']['seed']}",
        "",
    ]
    for q in results["config"]["queries"]:
        lines.append(f"query {q['name']}: args {q['args']}")
    lines.append("")
    header = (
        f"{'blocks':>7} {'query':<7} {'measure':<20} {'python ms':>9} {'go ms':>9} {'ratio':>7}"
    )
    lines += [header, "-" * len(header)]
    for entry in results["sizes"]:
        for q in entry["queries"]:
            for key, label in (
                ("kernel", "kernel"),
                ("first", "end to end, first"),
                ("repeated", "end to end, repeat"),
            ):
                f = q[key]
                lines.append(
                    f"{entry['blocks']:>7} {q['name']:<7} {label:<20} "
                    f"{_ms(f['python_s'])} {_ms(f['go_s'])} {f['ratio']:>6.2f}x"
                )
        for q in entry["queries"]:
            fetch = q["fetch"]["seconds"]
            repeat = q["repeated"]["python_s"]
            lines.append(
                f"{'':>7} {q['name']}: Python's repeat {repeat * 1000:.0f} ms = GET /blocks "
                f"alone {fetch * 1000:.0f} ms ({fetch / q['repeated']['go_s']:.2f}x Go's whole "
                f"/tool/exec) + the rest {(repeat - fetch) * 1000:.0f} ms (cutting, digests, "
                "the host's cache, decoding what it lacks, scoring; the kernel without a "
                f"cache: {q['kernel']['python_s'] * 1000:.0f} ms)"
            )
        decode = entry.get("decode_s")
        if decode:
            figures = ", ".join(f"{name} {sec * 1000:.0f} ms" for name, sec in decode.items())
            lines.append(f"{'':>7} decoding the /blocks body alone: {figures}")
        comp = entry["composition"]
        matches = ", ".join(f"{q['name']} {q['matches']}" for q in entry["queries"])
        lines.append(
            f"{'':>7} /blocks body {_mb(entry['body_bytes'])}; matches: {matches}; "
            f"contents ASCII {comp['ascii']:.0%}, Latin-1 {comp['latin1']:.0%}, "
            f"BMP {comp['bmp']:.0%}, beyond BMP {comp['astral']:.1%}; "
            f"archived in {entry['archive_s']:.1f} s"
        )
    memory = results.get("memory")
    if memory:
        lines += [
            "",
            f"peak memory of the Python path, {memory['blocks']} blocks, query {memory['query']} "
            f"(/blocks body {_mb(memory['body_bytes'])}), in a fresh process:",
        ]
        for mode, what in (
            ("rss", "RSS high-water mark minus RSS before"),
            ("tracemalloc", "tracemalloc peak minus traced before"),
        ):
            figures = "; ".join(
                f"{name} search {_mb(s['peak_bytes'])} = {s['ratio']:.2f}x the JSON"
                for name, s in zip(("first", "repeated"), memory[mode], strict=False)
            )
            lines.append(f"  {mode:<11} ({what}): {figures}")
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
        "the Go's request log shows no /tool/exec call from the Python path",
        "",
        "targets (issue 7):",
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
        "Written by `python -m bench` (`make bench`); the figures are in `results.json`.\n"
        f"Command: `{command}` (sizes {results['config']['sizes']}).\n\n"
        "```text\n" + text + "\n```\n"
    )
