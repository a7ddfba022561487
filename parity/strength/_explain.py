"""The explanations (``explanations.toml`` beside this module), what no longer fits, and
the mutants of the tool logic they mark out (``generate_mutants``). An entry names its
code by the text of its line, without white space (and the lines before it where one
line names more than one place), a mutant's also by its change: never a file, line
number or function (``docs/strength.md``, "Explanations as data")."""

from __future__ import annotations

import ast
import fnmatch
import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import msgspec

from parity.errors import ParityError
from parity.project import project_root
from parity.strength._mutants import Mutant, _lines, _Mutator, code_at, mutants_of_source, squeeze

EXPLANATIONS_PATH = Path(__file__).with_name("explanations.toml")
PACKAGE = "recall"
"""The port: its modules are the tool logic, less ``[not_modules]``."""

_Text = Annotated[str, msgspec.Meta(pattern=r"\S")]


class StrengthDataError(ParityError):
    """``explanations.toml`` is not valid (a message naming the entry)."""


class Line(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A line of code (with the lines before it where it is not unique)."""

    code: _Text

    def names(self, source: str, line: int) -> bool:
        """Whether it names line ``line`` of ``source``."""
        return code_at(source, line, self.code.count("\n") + 1) == squeeze(self.code)

    def __str__(self) -> str:
        return f"`{self.code}`"


class Change(Line, frozen=True, forbid_unknown_fields=True):
    """A mutant: its line and its change."""

    before: _Text
    after: _Text

    def __str__(self) -> str:
        return f"`{self.code}`: {self.before} -> {self.after}"


class Group(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Entries that one reason explains."""

    id: _Text
    why: _Text
    entries: tuple[Line, ...]


class Equivalent(Group, frozen=True, forbid_unknown_fields=True):
    """Mutants no input through GoTurnHost can kill."""

    entries: tuple[Change, ...]


@dataclass(frozen=True)
class Statement:
    """A statement of the tool logic: where it is, its function and text."""

    file: str
    line: int
    function: str
    text: str
    source: str


def module_file(module: str) -> str:
    """The file of a module of the port, relative to the project."""
    if (file := _port_files().get(module)) is None:
        raise StrengthDataError(f"no module {module} in {PACKAGE}/")
    return file


class Explanations(msgspec.Struct, forbid_unknown_fields=True):
    """Everything ``explanations.toml`` says."""

    not_modules: dict[str, _Text] = {}
    not_tool_logic: dict[str, _Text] = {}
    unreachable: list[Group] = []
    go_unreachable: list[Group] = []
    equivalent: list[Equivalent] = []

    def tool_logic_modules(self) -> list[str]:
        """The modules of the port less ``not_modules`` (names, or fnmatch patterns such
        as ``recall._go._unicode_*``), in a stable order."""
        return [
            name
            for name in _port_files()
            if not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.not_modules)
        ]

    def statements(self) -> list[Statement]:
        """Every statement of the tool-logic modules, what is not tool logic included."""
        out = []
        for module in self.tool_logic_modules():
            file = module_file(module)
            source = (project_root() / file).read_text("utf-8")
            tree = ast.parse(source, filename=file)
            sites, lines = _Mutator(tree).sites, _lines(source)
            for n in ast.walk(tree):
                if isinstance(n, ast.stmt) and id(n) in sites:
                    text = lines[n.lineno - 1].strip()
                    out.append(Statement(file, n.lineno, sites[id(n)].function, text, source))
        return out

    def not_tool_logic_reason(self, qualname: str) -> str | None:
        """Why a function or class (or a member of one) is not tool logic, if it is not."""
        parts = qualname.split(".")
        names = (".".join(parts[:n]) for n in range(len(parts), 0, -1))
        return next((self.not_tool_logic[n] for n in names if n in self.not_tool_logic), None)

    def why_equivalent(self, m: Mutant) -> str | None:
        """Why a surviving mutant is equivalent, if an entry says it."""
        named = (g for g in self.equivalent for e in g.entries if _names(e, m))
        return next((g.why for g in named), None)

    def why_unreachable(self, s: Statement) -> str | None:
        """Why no golden reaches a statement, if an entry says it."""
        named = (g for g in self.unreachable for e in g.entries if e.names(s.source, s.line))
        return next((g.why for g in named), None)

    def problems(
        self,
        mutants: Sequence[Mutant],
        statements: Sequence[Statement],
        *,
        reached: set[tuple[str, int]] | None = None,
        killed: Iterable[Mutant] = (),
    ) -> list[str]:
        """What no longer fits: entries that name nothing or more than one place, names of
        what is gone, and (given them) lines a golden reaches and mutants the replay kills."""
        measured = [s for s in statements if self.not_tool_logic_reason(s.function) is None]
        out = []
        for g in self.equivalent:
            for c in g.entries:
                out += _fits(f"equivalent {g.id}", c, [m for m in mutants if _names(c, m)])
        for u in self.unreachable:
            for e in u.entries:
                found = [s for s in measured if e.names(s.source, s.line)]
                out += _fits(f"unreachable {u.id}", e, found)
                at = [f"{s.file}:{s.line}" for s in found if (s.file, s.line) in (reached or ())]
                out += [f"unreachable {u.id}: reached: a golden reaches {at[0]}"] if at else []
        for m in killed:
            named = next((g for g in self.equivalent for e in g.entries if _names(e, m)), None)
            if named is not None:
                out.append(f"equivalent {named.id}: killed: the replay kills {m.where} {m.change}")
        functions = {s.function for s in statements}
        out += [
            f"not_tool_logic {name}: orphaned: no function or class of that name"
            for name in self.not_tool_logic
            if not any(f == name or f.startswith(name + ".") for f in functions)
        ]
        out += [
            f"not_modules {name}: orphaned: no such module"
            for name in self.not_modules
            if not any(fnmatch.fnmatchcase(module, name) for module in _port_files())
        ]
        return out


def _fits(rule: str, entry: Line, found: Sequence[object]) -> list[str]:
    if len(found) == 1:
        return []
    if found:
        return [f"{rule}: ambiguous: {len(found)} places are {entry}"]
    return [f"{rule}: orphaned: no code is {entry}"]


def _names(entry: Change, m: Mutant) -> bool:
    return (entry.before, entry.after) == (m.before, m.after) and entry.names(m.source, m.line)


def entry_for(m: Mutant, mutants: Sequence[Mutant]) -> str:
    """An entry naming ``m`` alone among ``mutants``, to paste into an ``[[equivalent]]``."""
    same = [o for o in mutants if (o.before, o.after) == (m.before, m.after) and o.id != m.id]
    count = 1
    while count < m.line and any(
        code_at(o.source, o.line, count) == code_at(m.source, m.line, count) for o in same
    ):
        count += 1
    code = "\n".join(line.strip() for line in _lines(m.source)[m.line - count : m.line])
    fields = {"code": code, "before": m.before, "after": m.after}
    return "{ " + ", ".join(f"{k} = {toml_string(v)}" for k, v in fields.items()) + " },"


def toml_string(text: str) -> str:
    """A TOML basic string."""
    text = json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate


def parse_explanations(text: str, *, source: str = "explanations.toml") -> Explanations:
    """The explanations in a TOML text; StrengthDataError names a bad entry."""
    try:
        ex = msgspec.toml.decode(text, type=Explanations)
    except msgspec.MsgspecError as err:
        raise StrengthDataError(f"{source}: {err}") from err
    ids = [g.id for g in [*ex.unreachable, *ex.go_unreachable, *ex.equivalent]]
    if twice := sorted({i for i in ids if ids.count(i) > 1}):
        raise StrengthDataError(f"{source}: id(s) used twice: {twice}")
    return ex


@functools.cache
def load_explanations(path: Path = EXPLANATIONS_PATH) -> Explanations:
    """The explanations of ``explanations.toml`` (cached)."""
    try:
        text = path.read_text("utf-8")
    except OSError as err:
        raise StrengthDataError(f"cannot read {path}: {err}") from err
    return parse_explanations(text, source=path.name)


@functools.cache
def _port_files() -> dict[str, str]:
    """Every module of the port and its file (relative to the project), in a stable order."""
    found = {}
    for path in sorted((project_root() / PACKAGE).rglob("*.py")):
        file = path.relative_to(project_root())
        parts = file.with_suffix("").parts
        found[".".join(parts[: -1 if parts[-1] == "__init__" else None])] = file.as_posix()
    return found


def generate_mutants(modules: Sequence[str] | None = None) -> list[Mutant]:
    """Every mutant of these modules (default: the tool logic), less what is not tool logic."""
    explained = load_explanations()
    out: list[Mutant] = []
    for module in modules if modules is not None else explained.tool_logic_modules():
        file = module_file(module)
        source = (project_root() / file).read_text("utf-8")
        skip = explained.not_tool_logic_reason
        out += mutants_of_source(source, module=module, file=file, first_id=len(out) + 1, skip=skip)
    return out
