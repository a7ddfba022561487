"""The explanations, as data (``explanations.toml``), and how they find their code.

What no golden can reach or no input can kill is explained in ``explanations.toml``
beside this module, keyed on what the code means rather than where it is: the
normalized form of the code (``parity.strength._normal``), the change a mutant makes,
the headers of the statements around it, and the function it was in (a hint, used
only to tell apart several places with the same code). Moving code, renaming a
local, reformatting or splitting a module leaves an explanation on its code; one
whose code is gone, or changed, is *orphaned*, and the report says which and why.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib.util
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from parity.errors import ParityError
from parity.strength._normal import ModuleIndex, canonical

__all__ = [
    "EXPLANATIONS_PATH",
    "Explanations",
    "GoRule",
    "LineRule",
    "MutantMatch",
    "MutantRule",
    "Problem",
    "Statement",
    "load_explanations",
    "statements_of",
]

EXPLANATIONS_PATH = Path(__file__).with_name("explanations.toml")


class StrengthDataError(ParityError):
    """``explanations.toml`` is not valid (a message naming the entry)."""


@dataclass(frozen=True)
class Problem:
    """An explanation that no longer fits the code (or a note on one that moved)."""

    rule: str
    """Which explanation: its label, as ``equivalent terms-u0100 #1``."""
    kind: str
    """``orphaned``, ``ambiguous``, ``overlap``, ``killed``, ``reached``; ``moved`` is a
    note, not a problem."""
    message: str

    @property
    def fails(self) -> bool:
        """Whether the gate fails on it (everything but ``moved``)."""
        return self.kind != "moved"

    def __str__(self) -> str:
        return f"{self.rule}: {self.kind}: {self.message}"


class _Shaped(Protocol):
    @property
    def ident(self) -> tuple[str, int, int]: ...
    @property
    def function(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def shape(self) -> Any: ...


@dataclass(frozen=True)
class MutantRule:
    """One mutant that no input through the host can kill, and why."""

    group: str
    index: int
    why: str
    site: str
    before: str
    after: str
    in_: str | None = None
    """The function it was explained in: a hint, to tell apart equal sites."""
    within: str | None = None
    """A header that must be around it, to tell apart equal sites in one function."""

    @property
    def label(self) -> str:
        """How a report names it."""
        return f"equivalent {self.group} #{self.index}"

    def describe(self) -> str:
        """The entry, on one line."""
        text = f"{self.site} | {self.before} -> {self.after}"
        if self.in_:
            text += f" (in {self.in_})"
        if self.within:
            text += f" (within {self.within})"
        return text

    def find(self, mutants: Sequence[_Shaped]) -> tuple[list[_Shaped], str]:
        """The mutants this entry names, and why none or several when not one."""
        at_site = [m for m in mutants if m.shape.site == self.site]
        change = (self.before, self.after)
        changed = [m for m in at_site if (m.shape.before, m.shape.after) == change]
        inside = [m for m in changed if self.within is None or self.within in m.shape.contexts]
        found = inside
        hinted = [m for m in found if m.function == self.in_] if self.in_ else found
        if len(found) > 1 and hinted:
            found = hinted
        if len(found) == 1:
            return found, ""
        if found:
            places = ", ".join(f"{m.where} in {m.function}" for m in found)
            if not hinted:
                return found, (
                    f"{self.in_}, where it was explained, has no such mutant any more (moved "
                    f"or removed), and {len(found)} others have it ({places})"
                )
            return found, f"names {len(found)} mutants ({places}): add `within` or `in`"
        if not at_site:
            return [], (
                f"no code of the tool logic has the form `{self.site}` any more "
                "(removed or rewritten)"
            )
        if not changed:
            same = [m for m in at_site if m.shape.before == self.before] or at_site
            changes = sorted({f"{m.shape.before} -> {m.shape.after}" for m in same})
            more = f" (and {len(changes) - 6} more)" if len(changes) > 6 else ""
            return [], (
                f"the code is there ({at_site[0].where}), but no mutant changes "
                f"`{self.before}` to `{self.after}` there; its mutants: "
                + "; ".join(changes[:6])
                + more
            )
        around = sorted({" / ".join(m.shape.contexts) or "nothing" for m in changed})
        return [], f"the change is there, but not within `{self.within}`: within {around}"


@dataclass(frozen=True)
class Statement:
    """A statement of the tool logic, as line explanations see it."""

    module: str
    file: str
    line: int
    function: str
    form: str
    contexts: tuple[str, ...]


@dataclass(frozen=True)
class LineRule:
    """Statements of the tool logic that no golden can reach, and why."""

    id: str
    why: str
    statement: str | None = None
    within: str | None = None
    in_: str | None = None
    """The function it was explained in: for the reader only."""

    @property
    def label(self) -> str:
        """How a report names it."""
        return f"unreachable {self.id}"

    def matches(self, s: Statement) -> bool:
        """Whether the entry explains this statement."""
        if self.statement is not None and s.form != self.statement:
            return False
        return self.within is None or self.within in s.contexts


@dataclass(frozen=True)
class GoRule:
    """A Go block of the tool logic that no recorded call can reach, and why."""

    function: str
    code: str
    why: str

    @property
    def label(self) -> str:
        """How a report names it."""
        return f"go_unreachable {self.function}"


@dataclass
class MutantMatch:
    """Which explanation names which mutant, and what no longer fits."""

    by_mutant: dict[tuple[str, int, int], MutantRule]
    """Mutant.ident -> the entry that names it."""
    problems: list[Problem]

    def why(self, mutant: _Shaped) -> str | None:
        """The explanation of a mutant, when one names it."""
        rule = self.by_mutant.get(mutant.ident)
        return rule.why if rule else None


@dataclass
class Explanations:
    """Everything ``explanations.toml`` says."""

    package: str
    not_modules: dict[str, str]
    not_tool_logic: dict[str, str]
    unreachable: list[LineRule]
    equivalent: list[MutantRule]
    go_unreachable: list[GoRule]

    # -- what the tool logic is

    def tool_logic_modules(self) -> list[str]:
        """The modules of the package less ``not_modules`` (names, or fnmatch patterns
        such as ``recall._go._unicode_*``), in a stable order."""
        return [
            name
            for name in self._package_modules()
            if not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.not_modules)
        ]

    def _package_modules(self) -> list[str]:
        """Every module of the package, in a stable order."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise StrengthDataError(f"no package {self.package}")
        root = Path(next(iter(spec.submodule_search_locations)))
        found: list[str] = []
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append(".".join([self.package, *parts]))
        return found

    def module_path(self, module: str) -> Path:
        """The file of a module (not imported)."""
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise StrengthDataError(f"no module {module}")
        return Path(spec.origin).resolve()

    def not_tool_logic_reason(self, qualname: str) -> str | None:
        """Why a function or class (or a member of one) is not tool logic, if it is not."""
        parts = qualname.split(".")
        for n in range(len(parts), 0, -1):
            why = self.not_tool_logic.get(".".join(parts[:n]))
            if why is not None:
                return why
        return None

    def not_tool_logic_of(self, module: str) -> Callable[[str], bool]:
        """The predicate the mutator skips functions by."""
        del module  # names are qualified names, whatever module holds them
        return lambda qualname: self.not_tool_logic_reason(qualname) is not None

    def tool_logic_statements(self, *, every: bool = False) -> list[Statement]:
        """Every statement of the tool logic (less what is not tool logic, unless
        ``every``), from the files."""
        from parity.project import project_root

        out: list[Statement] = []
        for module in self.tool_logic_modules():
            path = self.module_path(module)
            file = path.relative_to(project_root()).as_posix()
            out += [
                s
                for s in statements_of(path.read_text("utf-8"), module=module, file=file)
                if every or self.not_tool_logic_reason(s.function) is None
            ]
        return out

    # -- mutants

    def match_mutants(self, mutants: Sequence[_Shaped]) -> MutantMatch:
        """Each equivalent-mutant entry against the mutants; what no longer fits.

        Entries found in the function they name come first: an entry whose code left
        its function does not take a mutant from one found in place.
        """
        by_mutant: dict[tuple[str, int, int], MutantRule] = {}
        problems: list[Problem] = []
        placed: list[tuple[MutantRule, _Shaped]] = []
        for rule in self.equivalent:
            found, why = rule.find(mutants)
            if len(found) != 1:
                kind = "orphaned" if not found else "ambiguous"
                problems.append(Problem(rule.label, kind, f"{rule.describe()}: {why}"))
            else:
                placed.append((rule, found[0]))
        placed.sort(key=lambda p: bool(p[0].in_) and p[1].function != p[0].in_)
        for rule, mutant in placed:
            moved = bool(rule.in_) and mutant.function != rule.in_
            other = by_mutant.get(mutant.ident)
            if other is not None and moved:
                problems.append(
                    Problem(
                        rule.label,
                        "orphaned",
                        f"{rule.describe()}: {rule.in_}, where it was explained, has no such "
                        f"mutant any more; the one equal mutant left ({mutant.where} in "
                        f"{mutant.function}) is {other.label}'s",
                    )
                )
                continue
            if other is not None:
                problems.append(
                    Problem(
                        rule.label,
                        "overlap",
                        f"names the mutant {other.label} names ({mutant.where} in "
                        f"{mutant.function}): add `within` to tell them apart",
                    )
                )
                continue
            by_mutant[mutant.ident] = rule
            if moved:
                problems.append(
                    Problem(rule.label, "moved", f"now in {mutant.function} ({mutant.where})")
                )
        return MutantMatch(by_mutant, problems)

    # -- lines

    def line_reason(self, s: Statement) -> str | None:
        """Why no golden reaches this statement, when an entry says."""
        for rule in self.unreachable:
            if rule.matches(s):
                return rule.why
        return None

    def line_problems(
        self, statements: Iterable[Statement], reached: Callable[[Statement], bool] | None = None
    ) -> list[Problem]:
        """Entries that name no statement, or (given ``reached``) one a golden reaches."""
        every = list(statements)
        problems: list[Problem] = []
        for rule in self.unreachable:
            named = [s for s in every if rule.matches(s)]
            if not named:
                keys = (("statement", rule.statement), ("within", rule.within))
                what = " ".join(f"{k} `{v}`" for k, v in keys if v is not None)
                problems.append(
                    Problem(rule.label, "orphaned", f"no statement of the tool logic is {what}")
                )
            elif reached is not None:
                hit = [s for s in named if reached(s)]
                if hit:
                    where = ", ".join(f"{s.file}:{s.line}" for s in hit)
                    problems.append(
                        Problem(rule.label, "reached", f"the goldens reach {where}: delete it")
                    )
        return problems

    def name_problems(self) -> list[Problem]:
        """``not_tool_logic`` names that name nothing, ``not_modules`` that do not exist."""
        functions = {s.function for s in self.tool_logic_statements(every=True)}
        problems = [
            Problem(f"not_tool_logic {name}", "orphaned", "no function or class of that name")
            for name in self.not_tool_logic
            if not any(f == name or f.startswith(name + ".") for f in functions)
        ]
        problems += [
            Problem(f"not_modules {name}", "orphaned", "no such module")
            for name in self.not_modules
            if not any(fnmatch.fnmatchcase(m, name) for m in self._package_modules())
        ]
        return problems

    # -- Go

    def go_reason(self, function: str, code: str) -> str | None:
        """Why no recorded call reaches a Go block, when an entry says."""
        for rule in self.go_unreachable:
            if (rule.function, rule.code) == (function, code):
                return rule.why
        return None


def statements_of(source: str, *, module: str, file: str) -> Iterator[Statement]:
    """Every statement of a module, with its normalized form and headers around it."""
    tree = ast.parse(source, filename=file)
    index = ModuleIndex(tree, package=module.rpartition(".")[0])
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            keyword = "class" if isinstance(node, ast.ClassDef) else "def"
            form = f"{keyword} {node.name}"
        else:
            namer = index.namer(node)
            form = namer.header(node)
        yield Statement(module, file, node.lineno, index.qualname(node), form, index.contexts(node))


# -- loading


def _text(entry: dict[str, Any], key: str, where: str, *, form: bool = False) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise StrengthDataError(f"{where}: `{key}` must be a non-empty string")
    return canonical(value) if form else value.strip()


def _need(entry: dict[str, Any], key: str, where: str, *, form: bool = False) -> str:
    value = _text(entry, key, where, form=form)
    if value is None:
        raise StrengthDataError(f"{where}: `{key}` is missing")
    return value


def _table(doc: dict[str, Any], key: str) -> dict[str, str]:
    table = doc.get(key, {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise StrengthDataError(f"[{key}] must map names to reasons")
    return dict(table)


def _entries(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    entries = doc.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise StrengthDataError(f"[[{key}]] must be an array of tables")
    return entries


_KEYS = {
    "equivalent": {"id", "why", "mutant"},
    "mutant": {"site", "before", "after", "in", "within"},
    "unreachable": {"id", "why", "statement", "within", "in"},
    "go_unreachable": {"function", "code", "why"},
}


def _check_keys(entry: dict[str, Any], kind: str, where: str) -> None:
    unknown = set(entry) - _KEYS[kind]
    if unknown:
        raise StrengthDataError(f"{where}: unknown key(s) {sorted(unknown)}")


def parse_explanations(text: str, *, source: str = "explanations.toml") -> Explanations:
    """The explanations in a TOML text; StrengthDataError names a bad entry."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise StrengthDataError(f"{source}: {err}") from err
    tool_logic = doc.get("tool_logic", {})
    package = tool_logic.get("package", "recall") if isinstance(tool_logic, dict) else "recall"
    not_modules = _table(tool_logic, "not_modules") if isinstance(tool_logic, dict) else {}
    unreachable: list[LineRule] = []
    for i, e in enumerate(_entries(doc, "unreachable"), 1):
        where = f"{source}: [[unreachable]] #{i}"
        _check_keys(e, "unreachable", where)
        rule = LineRule(
            id=_need(e, "id", where),
            why=_need(e, "why", where),
            statement=_text(e, "statement", where, form=True),
            within=_text(e, "within", where, form=True),
            in_=_text(e, "in", where),
        )
        if rule.statement is None and rule.within is None:
            raise StrengthDataError(f"{where}: give `statement`, `within`, or both")
        unreachable.append(rule)
    equivalent: list[MutantRule] = []
    seen: set[str] = set()
    for i, e in enumerate(_entries(doc, "equivalent"), 1):
        where = f"{source}: [[equivalent]] #{i}"
        _check_keys(e, "equivalent", where)
        group = _need(e, "id", where)
        if group in seen:
            raise StrengthDataError(f"{where}: id {group!r} is used twice")
        seen.add(group)
        why = _need(e, "why", where)
        for j, m in enumerate(_entries(e, "mutant"), 1):
            at = f"{where} ({group}) mutant #{j}"
            _check_keys(m, "mutant", at)
            site = _text(m, "site", at, form=True)
            before = _need(m, "before", at, form=True)
            equivalent.append(
                MutantRule(
                    group=group,
                    index=j,
                    why=why,
                    site=site or before,
                    before=before,
                    after=_need(m, "after", at, form=True),
                    in_=_text(m, "in", at),
                    within=_text(m, "within", at, form=True),
                )
            )
    go_unreachable = []
    for i, e in enumerate(_entries(doc, "go_unreachable"), 1):
        where = f"{source}: [[go_unreachable]] #{i}"
        _check_keys(e, "go_unreachable", where)
        go_unreachable.append(
            GoRule(_need(e, "function", where), _need(e, "code", where), _need(e, "why", where))
        )
    return Explanations(
        package=str(package),
        not_modules=not_modules,
        not_tool_logic=_table(doc, "not_tool_logic"),
        unreachable=unreachable,
        equivalent=equivalent,
        go_unreachable=go_unreachable,
    )


@functools.cache
def load_explanations(path: Path = EXPLANATIONS_PATH) -> Explanations:
    """The explanations of ``explanations.toml`` (cached)."""
    try:
        text = path.read_text("utf-8")
    except OSError as err:
        raise StrengthDataError(f"cannot read {path}: {err}") from err
    return parse_explanations(text, source=path.name)
