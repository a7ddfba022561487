"""``parity fuzz``: the stateless fuzzer then the stateful one, each for half the time
left (or ``--examples`` each), in a standard process pool of ``--workers``, each worker
with its own seed and Go references, sharing the example database (``--db``)."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import secrets
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from parity.cli import Exit
from parity.errors import ParityError
from parity.fuzz import PROFILES, fuzz_go_url, fuzz_reference, profile
from parity.goclient import TOKEN_ENV, GoConnection, add_go_options, connection_from_options
from parity.rig import FuzzStats, Run, past_bound_unsaid

MODES = ("both", "stateless", "stateful")


def example_database(where: str) -> ExampleDatabase:
    """The example database at ``where``: a directory, or a ``redis://`` URL."""
    if where.startswith(("redis://", "rediss://")):
        try:
            import redis  # type: ignore[import-not-found,unused-ignore]
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError as exc:
            raise ParityError(
                f"--db {where}: the Redis database needs `pip install 'hypothesis[redis]'`"
            ) from exc
        return RedisExampleDatabase(redis.Redis.from_url(where))
    return DirectoryBasedExampleDatabase(where)


@dataclass(frozen=True)
class _Plan:
    """What one process fuzzes; ``deadline`` is ``time.monotonic()``, alike in every process."""

    mode: str
    profile: str
    examples: int | None
    deadline: float | None
    seed: int | None
    db: str | None
    steps: int | None


@past_bound_unsaid()  # in each worker process too
def _run(
    plan: _Plan, results: dict[str, FuzzStats] | None = None, go: GoConnection | None = None
) -> dict[str, FuzzStats]:
    """Run the plan's fuzzers (over ``go``, or Go references of our own); ``results``, their
    stats by mode, filled as they run."""
    from parity.stateful import STEPS, fuzz_stateful

    results = {} if results is None else results
    base = profile(plan.profile)
    if plan.db is not None:
        base = settings(base, database=example_database(plan.db))
    modes = ["stateless", "stateful"] if plan.mode == "both" else [plan.mode]
    for i, mode in enumerate(modes):
        seconds = None
        if plan.deadline is not None:  # an equal share of the time left, at least a moment
            seconds = max((plan.deadline - time.monotonic()) / (len(modes) - i), 0.01)
        run = Run(base=base, examples=plan.examples, seconds=seconds, seed=plan.seed)
        stats = results[mode] = run.stats
        if go is not None:
            fuzz_go_url(go, run)
        elif mode == "stateless":
            fuzz_reference(run)
        else:
            fuzz_stateful(run, steps=plan.steps or STEPS)
        print(f"parity fuzz: {mode}: {stats.summary()}", flush=True)
        if stats.divergences:
            break
    return results


def _total(results: dict[str, FuzzStats]) -> str:
    seconds = sum(s.seconds for s in results.values())
    calls = sum(s.calls for s in results.values())
    played = sum(s.played for s in results.values())
    found = sum(len(s.divergences) for s in results.values())
    return (
        f"total: {calls} distinct calls compared ({played} played) in {seconds:.1f} s of fuzzing:"
        f" {calls / max(seconds, 1e-9):.1f} distinct calls/s; {found} divergences"
    )


def gather(runs: Iterable[dict[str, FuzzStats]]) -> dict[str, FuzzStats]:
    """The workers' stats added up by mode (a call two workers compared over the same
    readable set counts once; the seconds: the longest worker's, they ran side by side)."""
    results: dict[str, FuzzStats] = {}
    for run in runs:
        for mode, one in run.items():
            stats = results.setdefault(mode, FuzzStats())
            stats.examples += one.examples
            stats.distinct |= one.distinct
            stats.played += one.played
            stats.archives += one.archives
            stats.seconds = max(stats.seconds, one.seconds)
            stats.divergences += one.divergences
    return results


# -- the command ----------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """``parity fuzz``'s parser."""
    parser = sub.add_parser(
        "fuzz",
        help="look for divergences with Hypothesis (`make fuzz`)",
        description="Differential fuzzing of the port's hosts against a live Go: "
        "stateless (static archives) and stateful (archives, locks, calls, new hosts).",
    )
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--examples", type=int, metavar="N", help="examples to run, per fuzzer and worker"
    )
    amount.add_argument(
        "--seconds", type=float, metavar="S", help="run for S seconds (split between the fuzzers)"
    )
    parser.add_argument("--mode", choices=MODES, default="both", help="the fuzzers to run")
    add_go_options(
        parser.add_argument,
        url_help=f"fuzz over this running Go's archive, read only (token: ${TOKEN_ENV}; "
        "stateless only); default: Go references of our own",
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        help="Hypothesis profile (default: $HYPOTHESIS_PROFILE, else dev)",
    )
    parser.add_argument("--seed", type=int, metavar="N", help="random seed (not derandomized)")
    parser.add_argument(
        "--workers",
        type=_workers,
        default="auto",
        metavar="N|auto",
        help="processes, each with its own Go references and seed; default "
        "auto: one per CPU this process may use, as go test -fuzz does (one with --go-url)",
    )
    parser.add_argument(
        "--db",
        metavar="DIR|redis://HOST:PORT/N",
        help="the example database: a directory (shared by workers and machines), or a "
        "Redis URL; default: the profile's (.hypothesis/examples for dev)",
    )
    parser.add_argument("--steps", type=int, metavar="N", help="stateful steps per example")
    return parser


def _workers(text: str) -> int | None:
    """``--workers``: a count, or None for ``auto``."""
    if text == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count nor auto: {text!r}") from None


def process_age() -> float:
    """Seconds since this process started (from ``/proc`` on Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rsplit(b")", 1)[1].split()[19])  # field 22, starttime
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the platform says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _check(options: argparse.Namespace) -> None:
    if options.seconds is not None and options.seconds <= 0:
        raise ParityError("--seconds must be positive")
    for flag in ("examples", "workers", "steps"):  # --examples and --seconds exclude each other
        if (count := getattr(options, flag)) is not None and count < 1:
            raise ParityError(f"--{flag} must be at least 1")
    if options.go_url is not None and (options.workers > 1 or options.mode == "stateful"):
        raise ParityError("--go-url fuzzes statelessly, in one process")


def run(options: argparse.Namespace) -> int:
    """``parity fuzz``: 0 when no divergence, 1 when one was found."""
    started = time.monotonic() - process_age()  # --seconds counts from the process's start
    if options.workers is None:  # auto
        options.workers = 1 if options.go_url is not None else usable_cpus()
    _check(options)
    results: dict[str, FuzzStats] = {}
    try:
        name = options.profile or os.environ.get("HYPOTHESIS_PROFILE") or "dev"
        seed_value = options.seed
        if seed_value is None and not profile(name).derandomize:
            # Our own seed, printed first: a run ended by --seconds is then no
            # "failure" that Hypothesis would offer to reproduce.
            seed_value = secrets.randbits(64)
        if seed_value is not None:
            print(f"parity fuzz: seed {seed_value} (again with --seed {seed_value})", flush=True)
        deadline = None if options.seconds is None else started + options.seconds
        plan = _Plan(
            options.mode, name, options.examples, deadline, seed_value, options.db, options.steps
        )
        if (go := connection_from_options(options)) is not None:
            print(f"parity fuzz: the Go at {go.url}, read only", flush=True)
            _run(replace(plan, mode="stateless"), results, go)
        elif options.workers > 1:
            print(f"parity fuzz: {options.workers} workers", flush=True)
            context = multiprocessing.get_context("spawn")  # no state of this process shared
            seeds = [None if seed_value is None else seed_value + i for i in range(options.workers)]
            with ProcessPoolExecutor(options.workers, mp_context=context) as pool:
                results = gather(pool.map(_run, [replace(plan, seed=seed) for seed in seeds]))
            for mode, stats in results.items():
                print(f"parity fuzz: {mode}: {stats.summary()}", flush=True)
        else:
            print("parity fuzz: Go references of our own, reset for each example", flush=True)
            _run(plan, results)
    except KeyboardInterrupt:
        print(f"parity fuzz: interrupted; {_total(results)}", file=sys.stderr)
        raise
    except (ParityError, BrokenPipeError):  # parity.cli's to report
        raise
    except Exception as exc:  # httpx, OS errors, Hypothesis' own (health checks, flakiness)
        raise ParityError(f"fuzz: harness error: {type(exc).__name__}: {exc}") from exc
    found = [d for s in results.values() for d in s.divergences]
    for divergence in found:
        print(divergence.report(), flush=True)
    print(f"parity fuzz: {_total(results)} ({time.monotonic() - started:.1f} s in all)", flush=True)
    return Exit.PORT_DIFFERS if found else Exit.OK
