"""The mutants of the Python tool logic: where a module can be changed, and how.

Each mutant is one change to one node of a module's AST, compiled in memory
(``Mutant.code``): the file is never written."""

from __future__ import annotations

import ast
import copy
import functools
import random
import re
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from parity.project import project_root


def squeeze(text: str) -> str:
    """A text without any white space: what explanations compare."""
    return re.sub(r"\s+", "", text)


@functools.cache
def _lines(source: str) -> list[str]:
    return source.splitlines()


def code_at(source: str, line: int, count: int = 1) -> str:
    """The text of ``count`` lines of ``source`` ending with line ``line``, squeezed."""
    return squeeze("".join(_lines(source)[max(line - count, 0) : line]))


@dataclass(frozen=True)
class Mutant:
    """One change to one module of the tool logic."""

    id: int
    module: str
    """The module's import name, e.g. ``recall._tools``."""
    file: str
    """Its file, relative to the project."""
    line: int
    function: str
    """The qualified name of the enclosing function or class, or the name a module-level
    statement assigns, or ``<module>``."""
    operator: str
    before: str
    """The changed code (``ast.unparse``; a regular expression's range as ``[a-z] at 1``)."""
    after: str
    text: str
    """The changed line's text, stripped."""
    node: int = field(default=0, repr=False, compare=False)
    """The index of the changed node in ``ast.walk`` order."""
    variant: int = field(default=0, repr=False, compare=False)
    source: str = field(default="", repr=False, compare=False)
    """The module's source when the mutant was made (the file may change meanwhile)."""

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"

    @property
    def change(self) -> str:
        """``before -> after``, for a report."""
        return f"{short(self.before)} -> {short(self.after)}"

    def code(self) -> types.CodeType:
        """The mutated module, compiled (with the file's name and line numbers)."""
        path = project_root() / self.file
        tree = ast.parse(self.source or path.read_text("utf-8"), filename=str(path))
        target = list(ast.walk(tree))[self.node]
        new = _Mutator(tree).variants(target)[self.variant][1]
        for parent in ast.walk(tree):
            for name, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, name, new)
                elif isinstance(value, list) and target in value:
                    value[value.index(target)] = new
        ast.fix_missing_locations(tree)
        return compile(tree, str(path), "exec", dont_inherit=True)


def short(text: str, width: int = 70) -> str:
    """One line of at most ``width`` characters, escapes visible."""
    text = text.replace("\n", "\\n").encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= width else text[: width - 1] + "…"


_CMP_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SKIP_NAMES = frozenset({"__all__", "__slots__"})
_NO_DROP = frozenset({"re.compile", "frozenset", "tuple", "dict", "list", "chr", "ord", "len"})
_REGEX_RANGE = re.compile(r"(\\.|[^\\\]])-(\\.|[^\\\]])")
_REGEX_COUNT = re.compile(r"\{(\d+)(,?)(\d*)\}")


def _bump_char(c: str, delta: int) -> str | None:
    code = ord(c) + delta
    if not 0x20 <= code < 0x110000 or 0xD800 <= code <= 0xDFFF:
        return None
    ch = chr(code)
    return "\\" + ch if ch in "]\\^-[" else ch


def regex_variants(pattern: str) -> list[tuple[str, str, str]]:
    """(what, changed to, mutated pattern): each class range bound moved by one, each count.

    ``what`` names the range or count and its offset in the pattern, as in ``[a-z] at 1``."""
    out: list[tuple[str, str, str]] = []
    for cls in re.finditer(r"\[((?:\\.|[^\\\]])*)\]", pattern):
        for rng in _REGEX_RANGE.finditer(cls.group(1)):
            lo, hi = rng.group(1), rng.group(2)
            what = f"[{lo}-{hi}] at {cls.start(1) + rng.start()}"
            for side, ch in ((1, lo), (2, hi)):
                for delta in (-1, 1) if len(ch) == 1 else ():
                    if (new := _bump_char(ch, delta)) is not None:
                        start = cls.start(1) + rng.start(side)
                        to = f"[{new}-{hi}]" if side == 1 else f"[{lo}-{new}]"
                        out.append((what, to, pattern[:start] + new + pattern[start + 1 :]))
    for cnt in _REGEX_COUNT.finditer(pattern):
        for n in (int(cnt.group(1)) - 1, int(cnt.group(1)) + 1):
            if n >= 0:
                to = "{" + str(n) + cnt.group(2) + cnt.group(3) + "}"
                mutated = pattern[: cnt.start(1)] + str(n) + pattern[cnt.end(1) :]
                out.append((f"{cnt.group()} at {cnt.start()}", to, mutated))
    return [v for v in out if _compiles(v[2])]


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@dataclass(frozen=True)
class _Site:
    function: str
    regex: bool


_Variant = tuple[str, ast.AST, tuple[str, str] | None]
"""(operator, replacement node, (before, after) when the nodes do not say it)."""


def _with(node: Any, **fields: Any) -> Any:
    new = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(new, name, value)
    return new


class _Mutator:
    """Where a module can be mutated, and how: each node's variants, in a stable order."""

    def __init__(
        self, tree: ast.Module, *, skip: Callable[[str], object] = lambda qualname: False
    ) -> None:
        self.skip = skip
        self.sites: dict[int, _Site] = {}
        self._statement_calls = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        self._visit(tree, "<module>", regex=False)

    def _visit(self, node: ast.AST, function: str, *, regex: bool) -> None:
        self.sites[id(node)] = _Site(function, regex)
        scope = isinstance(node, _SCOPES)
        inner = _qualify(function, node.name) if isinstance(node, _SCOPES) else function
        if isinstance(node, ast.Import | ast.ImportFrom) or _assigns_skipped(node):
            return
        for name, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST) or _is_docstring(child) or name == "annotation":
                    continue
                if scope and name in ("decorator_list", "returns"):
                    continue
                at = _assigned_name(child) if isinstance(node, ast.Module) else None
                at = at or inner
                if isinstance(child, _SCOPES) and self.skip(_qualify(at, child.name)):
                    continue
                regex = (
                    isinstance(node, ast.Call)
                    and _call_name(node) == "re.compile"
                    and name == "args"
                    and child is node.args[0]
                )
                self._visit(child, at, regex=regex)

    def variants(self, node: ast.AST) -> list[_Variant]:
        """(operator, replacement node, (before, after) or None) for each mutation of ``node``."""
        site = self.sites[id(node)]
        out: list[_Variant] = []

        def add(operator: str, new: ast.AST, desc: tuple[str, str] | None = None) -> None:
            out.append((operator, ast.copy_location(new, node), desc))

        flip = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.And: ast.Or, ast.Or: ast.And}
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for swap in _CMP_SWAPS.get(type(op), ()):
                    new = _with(node)
                    new.ops[i] = swap()
                    add("comparison", new)
        elif isinstance(node, ast.BoolOp):
            add("boolean operator", _with(node, op=flip[type(node.op)]()))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            add("drop unary operator", copy.deepcopy(node.operand))
        elif isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
            add("arithmetic", _with(node, op=flip[type(node.op)]()))
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                add("constant", ast.Constant(not value))
            elif isinstance(value, int):
                for n in (value + 1, value - 1):
                    if n >= 0 or value < 0:
                        add("constant", ast.Constant(n))
            elif isinstance(value, str) and site.regex:
                for what, to, pattern in regex_variants(value):
                    add("regex", ast.Constant(pattern), (what, to))
            elif isinstance(value, str):
                swapped = value.swapcase()
                for text in (
                    ["X"] if value == "" else ["", swapped if swapped != value else value + "X"]
                ):
                    add("string", ast.Constant(text))
        elif isinstance(node, ast.Slice):
            for bound in ("lower", "upper"):
                value = getattr(node, bound)
                if value is not None and not isinstance(value, ast.Constant):  # else a constant
                    for arith in (ast.Add(), ast.Sub()):
                        bumped = ast.BinOp(copy.deepcopy(value), arith, ast.Constant(1))
                        add("slice bound", _with(node, **{bound: bumped}))
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            if name in ("min", "max"):
                add(
                    "min/max",
                    _with(node, func=ast.Name("max" if name == "min" else "min", ast.Load())),
                )
            if name.endswith(".sort") or name == "sorted":
                if node.keywords:
                    add("sort key", _with(node, keywords=[]))
                reverse = ast.keyword("reverse", ast.Constant(True))
                add("sort order", _with(node, keywords=[*copy.deepcopy(node.keywords), reverse]))
            if (
                len(node.args) == 1
                and not node.keywords
                and not isinstance(node.args[0], ast.Starred)
                and name not in _NO_DROP
                and site.function != "<module>"
                and id(node) not in self._statement_calls
            ):
                add("drop call", copy.deepcopy(node.args[0]))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            add("drop statement", ast.Pass())
        elif isinstance(node, ast.Continue | ast.Break):
            add("continue/break", ast.Break() if isinstance(node, ast.Continue) else ast.Continue())
        elif (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) == 2
            and site.function.endswith("_rank")
        ):
            new = _with(node)
            new.value.elts.reverse()
            add("sort key order", new)
        if isinstance(node, ast.If | ast.While | ast.IfExp) and not isinstance(
            node.test, ast.Compare | ast.UnaryOp
        ):
            add(
                "negate condition",
                _with(node, test=ast.UnaryOp(ast.Not(), copy.deepcopy(node.test))),
            )
        return out


def _source(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.If | ast.While):
        return f"{'if' if isinstance(node, ast.If) else 'while'} {ast.unparse(node.test)}:"
    if isinstance(node, ast.Pass):
        return "pass"
    if isinstance(node, ast.Slice):
        bounds = (ast.unparse(b) if b else "" for b in (node.lower, node.upper))
        return "[{}:{}]".format(*bounds)
    return ast.unparse(node)


def _qualify(function: str, name: str) -> str:
    return name if function == "<module>" else f"{function}.{name}"


def _is_docstring(node: ast.AST) -> bool:
    """A statement that is a bare string: a docstring, or an attribute's (after it)."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _call_name(node: ast.Call) -> str:
    parts: list[str] = []
    func: ast.AST = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    parts.append(func.id if isinstance(func, ast.Name) else "?")
    return ".".join(reversed(parts))


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target] if isinstance(node, ast.AnnAssign) else []


def _assigns_skipped(node: ast.AST) -> bool:
    return any(isinstance(t, ast.Name) and t.id in _SKIP_NAMES for t in _targets(node))


def _assigned_name(node: ast.AST) -> str | None:
    """The name a statement assigns, if it assigns one name."""
    targets = _targets(node)
    return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None


def mutants_of_source(
    source: str,
    *,
    module: str,
    file: str,
    first_id: int = 1,
    skip: Callable[[str], object] = lambda qualname: False,
) -> list[Mutant]:
    """Every mutant of one module's source, less the functions ``skip`` names, by position."""
    tree = ast.parse(source, filename=file)
    mutator, found, lines = _Mutator(tree, skip=skip), [], _lines(source)
    for index, node in enumerate(ast.walk(tree)):
        if (site := mutator.sites.get(id(node))) is None:
            continue
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        for variant, (operator, new, desc) in enumerate(mutator.variants(node)):
            before, after = desc or (_source(node), _source(new))
            m = Mutant(0, module, file, line, site.function, operator, before, after, text)
            found.append(((line, col, index, variant), replace(m, node=index, variant=variant)))
    found.sort(key=lambda f: f[0])
    return [replace(m, id=first_id + i, source=source) for i, (_, m) in enumerate(found)]


def sample_mutants(mutants: Sequence[Mutant], size: int, *, seed: int) -> list[Mutant]:
    """``size`` mutants drawn with ``seed`` (the same ones for the same list), in order."""
    if size >= len(mutants):
        return list(mutants)
    chosen = random.Random(seed).sample(range(len(mutants)), max(size, 0))
    return [mutants[i] for i in sorted(chosen)]
