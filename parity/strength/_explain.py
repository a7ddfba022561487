"""The explanations, as data (``explanations.toml``), and what no longer fits them.

What no golden can reach, or no input can kill, is explained in ``explanations.toml``
beside this module. An entry names its code by the function it is in (qualified
name) and the text of its line, compared without white space, and a mutant also by
its change (``before``, ``after``; ``nth`` when a function has the same change on
two equal lines). So moving code, within a file or to another module, and
reformatting a line leave an entry on its code. ``parity strength --refresh``
rewrites the file: an entry that names nothing any more is re-keyed on the one
mutant left with its change (its line rewritten, or its function renamed), names
of what is gone are dropped, and what it cannot place is reported.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib.util
import json
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from parity.errors import ParityError
from parity.project import project_root
from parity.strength._mutants import Mutant, squeeze

__all__ = [
    "EXPLANATIONS_PATH",
    "PACKAGE",
    "Entry",
    "Explanations",
    "Group",
    "Problem",
    "StrengthDataError",
    "load_explanations",
    "module_file",
    "parse_explanations",
    "statements_of",
    "toml_string",
]

EXPLANATIONS_PATH = Path(__file__).with_name("explanations.toml")
PACKAGE = "recall"
"""The port: its modules are the tool logic, less ``[not_modules]``."""


class StrengthDataError(ParityError):
    """``explanations.toml`` is not valid (a message naming the entry)."""


@dataclass(frozen=True)
class Problem:
    """An explanation that no longer fits the code."""

    rule: str
    """Which explanation, as ``equivalent codec-name-case``."""
    kind: str
    """``orphaned`` (names nothing), ``killed`` (the replay kills its mutant),
    ``reached`` (a golden reaches its line)."""
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.kind}: {self.message}"


@dataclass(frozen=True)
class Entry:
    """A piece of code: a line in a function, and for a mutant its change."""

    function: str
    line: str
    before: str = ""
    after: str = ""
    nth: int = 1

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """What it is compared by (``Mutant.key`` for a mutant)."""
        return (self.function, squeeze(self.line), self.before, self.after, self.nth)

    def __str__(self) -> str:
        change = f": {self.before} -> {self.after}" if self.before else ""
        nth = f" (#{self.nth})" if self.nth > 1 else ""
        return f"in {self.function}, `{self.line}`{change}{nth}"


@dataclass(frozen=True)
class Group:
    """Entries that one reason explains."""

    kind: str
    """``equivalent``, ``unreachable`` or ``go_unreachable``."""
    id: str
    why: str
    entries: tuple[Entry, ...]

    @property
    def label(self) -> str:
        """How a report names it."""
        return f"{self.kind} {self.id}"


@dataclass(frozen=True)
class Statement:
    """A statement of the tool logic: its line, function and text."""

    file: str
    line: int
    function: str
    text: str

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """The key of a line entry naming it."""
        return Entry(self.function, self.text).key


def module_file(module: str) -> str:
    """The file of a module (not imported), relative to the project."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise StrengthDataError(f"no module {module}")
    return Path(spec.origin).resolve().relative_to(project_root()).as_posix()


def statements_of(source: str, *, file: str) -> list[Statement]:
    """Every statement of a module's source, with its function as mutants name it."""
    from parity.strength._mutants import _Mutator

    tree = ast.parse(source, filename=file)
    sites = _Mutator(tree).sites
    lines = source.splitlines()
    return [
        Statement(file, n.lineno, sites[id(n)].function, lines[n.lineno - 1].strip())
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt) and id(n) in sites
    ]


@dataclass
class Explanations:
    """Everything ``explanations.toml`` says."""

    not_modules: dict[str, str] = field(default_factory=dict)
    not_tool_logic: dict[str, str] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)

    def of(self, kind: str) -> list[Group]:
        """The groups of one kind."""
        return [g for g in self.groups if g.kind == kind]

    def tool_logic_modules(self) -> list[str]:
        """The modules of the port less ``not_modules`` (names, or fnmatch patterns such
        as ``recall._go._unicode_*``), in a stable order."""
        return [
            name
            for name in _port_modules()
            if not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.not_modules)
        ]

    def statements(self) -> list[Statement]:
        """The statements of the tool logic, less what is not tool logic."""
        out = []
        for module in self.tool_logic_modules():
            file = module_file(module)
            source = (project_root() / file).read_text("utf-8")
            out += [s for s in statements_of(source, file=file) if self.is_tool_logic(s.function)]
        return out

    def not_tool_logic_reason(self, qualname: str) -> str | None:
        """Why a function or class (or a member of one) is not tool logic, if it is not."""
        parts = qualname.split(".")
        for n in range(len(parts), 0, -1):
            why = self.not_tool_logic.get(".".join(parts[:n]))
            if why is not None:
                return why
        return None

    def is_tool_logic(self, qualname: str) -> bool:
        """Whether a function's code is measured."""
        return self.not_tool_logic_reason(qualname) is None

    def group(self, kind: str, key: tuple[str, str, str, str, int]) -> Group | None:
        """The group that says why the code with this key is unreachable, or its mutant
        equivalent, if one does."""
        return next((g for g in self.of(kind) for e in g.entries if e.key == key), None)

    def problems(
        self,
        mutants: Sequence[Mutant],
        statements: Sequence[Statement],
        *,
        reached: set[tuple[str, int]] | None = None,
        killed: Iterable[Mutant] = (),
    ) -> list[Problem]:
        """What no longer fits: entries that name nothing, names of what is gone, and
        (given them) lines a golden reaches and mutants the replay kills."""
        keys = {m.key for m in mutants}
        lines = {s.key: s for s in statements}
        out = []
        for g in self.of("equivalent") + self.of("unreachable"):
            known = keys if g.kind == "equivalent" else lines
            for e in g.entries:
                if e.key not in known:
                    out.append(Problem(g.label, "orphaned", f"no code is {e}"))
                elif reached is not None and g.kind == "unreachable":
                    s = lines[e.key]
                    if (s.file, s.line) in reached:
                        out.append(
                            Problem(g.label, "reached", f"a golden reaches {s.file}:{s.line}")
                        )
        for m in killed:
            if (named := self.group("equivalent", m.key)) is not None:
                out.append(Problem(named.label, "killed", f"the replay kills {m.where} {m.change}"))
        functions = {s.function for s in statements_of_all(self)}
        out += [
            Problem(f"not_tool_logic {name}", "orphaned", "no function or class of that name")
            for name in self.not_tool_logic
            if not any(f == name or f.startswith(name + ".") for f in functions)
        ]
        out += [
            Problem(f"not_modules {name}", "orphaned", "no such module")
            for name in self.not_modules
            if not any(fnmatch.fnmatchcase(module, name) for module in _port_modules())
        ]
        return out

    def refreshed(self, mutants: Sequence[Mutant]) -> tuple[Explanations, list[str]]:
        """The explanations re-keyed on the code as it is, and what was changed or left."""
        notes: list[str] = []
        keys = {m.key for m in mutants}
        taken = {e.key for g in self.of("equivalent") for e in g.entries if e.key in keys}
        groups = []
        for g in self.groups:
            entries = []
            for e in g.entries:
                if g.kind == "equivalent" and e.key not in keys:
                    same = [m for m in mutants if (m.before, m.after) == (e.before, e.after)]
                    same = [m for m in same if m.key not in taken]
                    here = (
                        [m for m in same if m.function == e.function]
                        or [m for m in same if squeeze(m.text) == squeeze(e.line)]
                        or same
                    )
                    if len(here) == 1:
                        m = here[0]
                        taken.add(m.key)
                        e = Entry(m.function, m.text, m.before, m.after, m.nth)
                        notes.append(f"{g.label}: re-keyed on {m.where} ({e})")
                    else:
                        notes.append(f"{g.label}: {e}: {len(here)} candidates, left as it is")
                entries.append(e)
            groups.append(replace(g, entries=tuple(entries)))
        fresh = Explanations(dict(self.not_modules), dict(self.not_tool_logic), groups)
        for p in fresh.problems(mutants, fresh.statements()):
            if p.rule.startswith(("not_tool_logic ", "not_modules ")):
                kind, name = p.rule.split(" ", 1)
                del getattr(fresh, kind)[name]
                notes.append(f"{p.rule}: dropped ({p.message})")
        return fresh, notes

    def dump(self) -> str:
        """The explanations as ``explanations.toml`` is written."""
        out = [_HEADER]
        for table in ("not_modules", "not_tool_logic"):
            out.append(f"[{table}]")
            out += [f"{toml_string(k)} = {toml_string(v)}" for k, v in getattr(self, table).items()]
            out.append("")
        for g in self.groups:
            out += [
                f"[[{g.kind}]]",
                f"id = {toml_string(g.id)}",
                f"why = {toml_string(g.why)}",
                "entries = [",
            ]
            for e in g.entries:
                fields = {"in": e.function, "line": e.line}
                if g.kind == "equivalent":
                    fields |= {"before": e.before, "after": e.after}
                text = ", ".join(f"{k} = {toml_string(v)}" for k, v in fields.items())
                nth = f", nth = {e.nth}" if e.nth > 1 else ""
                out.append(f"  {{ {text}{nth} }},")
            out += ["]", ""]
        return "\n".join(out)


_HEADER = """\
# What `parity strength` leaves out, and what no golden can reach or kill, with why.
# Written by `parity strength --refresh`, which keeps every `why`; edit the reasons
# and add entries by hand (the report prints a ready one for an unexplained survivor).
#
# [not_modules]: modules of the port that are not tool logic. [not_tool_logic]:
# functions or classes (qualified names) of the tool logic that are not. Each entry
# of a group names code by `in` (its function), `line` (its line's text, compared
# without white space) and, for a mutant, `before` and `after` (the change, as
# `parity strength --list-mutants` prints it) and `nth` (the nth equal one in the
# function). [[unreachable]]: Python statements no golden reaches. [[go_unreachable]]:
# Go blocks (`in` the Go function, `line` the block's first line). [[equivalent]]:
# mutants no input through GoTurnHost can kill (the replay also checks each call's
# archive reads, so a mutant that reads otherwise than Go is killed).
"""


def toml_string(text: str) -> str:
    """A TOML basic string."""
    text = json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate


def statements_of_all(explanations: Explanations) -> list[Statement]:
    """Every statement of the tool-logic modules, what is not tool logic included."""
    out = []
    for module in explanations.tool_logic_modules():
        file = module_file(module)
        out += statements_of((project_root() / file).read_text("utf-8"), file=file)
    return out


def parse_explanations(text: str, *, source: str = "explanations.toml") -> Explanations:
    """The explanations in a TOML text; StrengthDataError names a bad entry."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise StrengthDataError(f"{source}: {err}") from err
    unknown = set(doc) - {"not_modules", "not_tool_logic", *_KINDS}
    if unknown:
        raise StrengthDataError(f"{source}: unknown table(s) {sorted(unknown)}")
    ex = Explanations()
    for table in ("not_modules", "not_tool_logic"):
        value = doc.get(table, {})
        if not all(isinstance(v, str) for v in value.values()):
            raise StrengthDataError(f"{source}: [{table}] must map names to reasons")
        setattr(ex, table, dict(value))
    seen: set[str] = set()
    for kind in _KINDS:
        for i, g in enumerate(doc.get(kind, []), 1):
            where = f"{source}: [[{kind}]] #{i}"
            _check(g, {"id", "why", "entries"}, where)
            if g["id"] in seen:
                raise StrengthDataError(f"{where}: id {g['id']!r} is used twice")
            seen.add(g["id"])
            entries = []
            for j, e in enumerate(g["entries"], 1):
                at = f"{where} ({g['id']}) entry #{j}"
                change = {"before", "after"} if kind == "equivalent" else set()
                _check(
                    e,
                    {"in", "line"} | change,
                    at,
                    optional=frozenset({"nth"}) if change else frozenset(),
                )
                entries.append(
                    Entry(
                        e["in"], e["line"], e.get("before", ""), e.get("after", ""), e.get("nth", 1)
                    )
                )
            ex.groups.append(Group(kind, g["id"], g["why"], tuple(entries)))
    return ex


_KINDS = ("unreachable", "go_unreachable", "equivalent")


def _check(
    entry: Any, keys: set[str], where: str, *, optional: frozenset[str] = frozenset()
) -> None:
    if not isinstance(entry, dict):
        raise StrengthDataError(f"{where}: must be a table")
    for k in sorted(keys):
        value = entry.get(k)
        if value is None:
            raise StrengthDataError(f"{where}: `{k}` is missing")
        if not (
            isinstance(value, list) if k == "entries" else isinstance(value, str) and value.strip()
        ):
            raise StrengthDataError(
                f"{where}: `{k}` must be a non-empty {'array' if k == 'entries' else 'string'}"
            )
    unknown = set(entry) - keys - optional
    if unknown:
        raise StrengthDataError(f"{where}: unknown key(s) {sorted(unknown)}")


@functools.cache
def load_explanations(path: Path = EXPLANATIONS_PATH) -> Explanations:
    """The explanations of ``explanations.toml`` (cached)."""
    try:
        text = path.read_text("utf-8")
    except OSError as err:
        raise StrengthDataError(f"cannot read {path}: {err}") from err
    return parse_explanations(text, source=path.name)


def _port_modules() -> list[str]:
    """Every module of the port, in a stable order."""
    root = project_root() / PACKAGE
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found.append(".".join([PACKAGE, *parts[: -1 if parts[-1] == "__init__" else None]]))
    return found
