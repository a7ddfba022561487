"""The mutants of the Python tool logic: where a module can be changed, and how.

Each mutant is one change to one node of a module's AST, compiled in memory
(``Mutant.code``): the file is never written. A mutant is named, for the
explanations, by its ``key``: the function it is in, the text of its line, and the
change (``parity.strength._explain``), so it is found again wherever its code moves.
"""

from __future__ import annotations

import ast
import copy
import random
import re
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from parity.project import project_root

__all__ = [
    "Key",
    "Mutant",
    "generate_mutants",
    "mutants_of_source",
    "regex_variants",
    "sample_mutants",
    "squeeze",
]

Key = tuple[str, str, str, str, int]
"""(function, line text without spaces, before, after, nth): a mutant wherever it is."""


def squeeze(text: str) -> str:
    """A line's text without any white space: what its key compares."""
    return re.sub(r"\s+", "", text)


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
    nth: int = 1
    """1 + the earlier mutants of the function with the same text and change."""
    node: int = field(default=0, repr=False, compare=False)
    """The index of the changed node in ``ast.walk`` order."""
    variant: int = field(default=0, repr=False, compare=False)
    source: str = field(default="", repr=False, compare=False)
    """The module's source when the mutant was made (the file may change meanwhile)."""

    @property
    def key(self) -> Key:
        """What explanations name it by."""
        return (self.function, squeeze(self.text), self.before, self.after, self.nth)

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
        _replace(tree, target, _Mutator(tree).replacement(target, self.variant))
        ast.fix_missing_locations(tree)
        return compile(tree, str(path), "exec", dont_inherit=True)


def short(text: str, width: int = 70) -> str:
    """One line of at most ``width`` characters, escapes visible."""
    text = text.replace("\n", "\\n").encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= width else text[: width - 1] + "…"


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return
    raise ValueError("node not found")


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

    ``what`` names the range or count and its offset in the pattern, as in ``[a-z] at 1``.
    """
    out: list[tuple[str, str, str]] = []
    for cls in re.finditer(r"\[((?:\\.|[^\\\]])*)\]", pattern):
        body_start = cls.start(1)
        for rng in _REGEX_RANGE.finditer(cls.group(1)):
            lo, hi = rng.group(1), rng.group(2)
            what = f"[{lo}-{hi}] at {body_start + rng.start()}"
            for side, ch in (("low", lo), ("high", hi)):
                if len(ch) != 1:
                    continue
                for delta in (-1, 1):
                    new = _bump_char(ch, delta)
                    if new is None:
                        continue
                    start = body_start + (rng.start(1) if side == "low" else rng.start(2))
                    mutated = pattern[:start] + new + pattern[start + 1 :]
                    to = f"[{new}-{hi}]" if side == "low" else f"[{lo}-{new}]"
                    out.append((what, to, mutated))
    for cnt in _REGEX_COUNT.finditer(pattern):
        n = int(cnt.group(1))
        for delta in (-1, 1):
            if n + delta < 0:
                continue
            mutated = pattern[: cnt.start(1)] + str(n + delta) + pattern[cnt.end(1) :]
            to = "{" + str(n + delta) + cnt.group(2) + cnt.group(3) + "}"
            out.append((f"{cnt.group()} at {cnt.start()}", to, mutated))
    valid = []
    for what, to, mutated in out:
        try:
            re.compile(mutated)
        except re.error:
            continue
        valid.append((what, to, mutated))
    return valid


@dataclass(frozen=True)
class _Site:
    function: str
    regex: bool


_Variant = tuple[str, ast.AST, tuple[str, str] | None]
"""(operator, replacement node, (before, after) when the nodes do not say it)."""


class _Mutator:
    """Where a module can be mutated, and how: each node's variants, in a stable order."""

    def __init__(
        self, tree: ast.Module, *, skip: Callable[[str], bool] = lambda qualname: False
    ) -> None:
        self.tree = tree
        self.skip = skip
        self.sites: dict[int, _Site] = {}
        self._statement_calls = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        self._visit(tree, "<module>", skip=False, regex=False)

    def _visit(self, node: ast.AST, function: str, *, skip: bool, regex: bool) -> None:
        if not skip:
            self.sites[id(node)] = _Site(function, regex)
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST):
                    continue
                child_function = function
                child_skip = skip or _is_docstring(child)
                child_regex = False
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    if name in ("decorator_list", "returns"):
                        child_skip = True
                    prefix = "" if function == "<module>" else function + "."
                    child_function = prefix + node.name
                if name == "annotation" or isinstance(node, ast.Import | ast.ImportFrom):
                    child_skip = True
                if isinstance(node, ast.Assign | ast.AnnAssign) and _assigns_skipped(node):
                    child_skip = True
                if isinstance(node, ast.Module) and isinstance(child, ast.Assign | ast.AnnAssign):
                    targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                    if len(targets) == 1 and isinstance(targets[0], ast.Name):
                        child_function = targets[0].id
                if isinstance(node, ast.Call) and _call_name(node) == "re.compile":
                    child_regex = name == "args" and child is node.args[0]
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    prefix = "" if child_function == "<module>" else child_function + "."
                    if self.skip(prefix + child.name):
                        child_skip = True
                self._visit(child, child_function, skip=child_skip, regex=child_regex)

    def mutants(self, module: str, file: str, first_id: int, source: str) -> list[Mutant]:
        """Every mutant of the tree, by position in the file."""
        lines = source.splitlines()
        found: list[tuple[int, int, int, int, str, str, str, str]] = []
        for index, node in enumerate(ast.walk(self.tree)):
            site = self.sites.get(id(node))
            if site is None:
                continue
            line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
            for variant, (operator, new, desc) in enumerate(self._variants(node, site)):
                before, after = desc or (_source(node), _source(new))
                found.append((line, col, index, variant, site.function, operator, before, after))
        found.sort(key=lambda f: f[:4])
        seen: dict[tuple[str, str, str, str], int] = {}
        out = []
        for i, (line, _, index, variant, function, operator, before, after) in enumerate(found):
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            same = (function, squeeze(text), before, after)
            seen[same] = seen.get(same, 0) + 1
            out.append(
                Mutant(
                    first_id + i, module, file, line, function, operator, before, after, text,
                    seen[same], index, variant, source,
                )
            )  # fmt: skip
        return out

    def _variants(self, node: ast.AST, site: _Site) -> list[_Variant]:
        """(operator, replacement node, (before, after) or None) for each mutation of ``node``."""
        out: list[tuple[str, ast.AST]] = []
        described: list[_Variant] = []
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for swap in _CMP_SWAPS.get(type(op), ()):
                    new = copy.deepcopy(node)
                    new.ops[i] = swap()
                    out.append(("comparison", new))
        elif isinstance(node, ast.BoolOp):
            new_b = copy.deepcopy(node)
            new_b.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            out.append(("boolean operator", new_b))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            out.append(("drop unary operator", copy.deepcopy(node.operand)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            new_o = copy.deepcopy(node)
            new_o.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            out.append(("arithmetic", new_o))
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
            new_a = copy.deepcopy(node)
            new_a.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            out.append(("arithmetic", new_a))
        elif isinstance(node, ast.Constant):
            described += self._constant_variants(node, site)
        elif isinstance(node, ast.Slice):
            for bound in ("lower", "upper"):
                value = getattr(node, bound)
                if value is None or isinstance(value, ast.Constant):
                    continue  # constants are mutated as constants
                for arith in (ast.Add(), ast.Sub()):
                    new_s = copy.deepcopy(node)
                    bumped = ast.BinOp(copy.deepcopy(value), arith, ast.Constant(1))
                    setattr(new_s, bound, bumped)
                    out.append(("slice bound", new_s))
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            if name in ("min", "max"):
                new_c = copy.deepcopy(node)
                new_c.func = ast.Name("max" if name == "min" else "min", ast.Load())
                out.append(("min/max", new_c))
            if name.endswith(".sort") or name == "sorted":
                if node.keywords:
                    new_k = copy.deepcopy(node)
                    new_k.keywords = []
                    out.append(("sort key", new_k))
                new_r = copy.deepcopy(node)
                new_r.keywords.append(ast.keyword("reverse", ast.Constant(True)))
                out.append(("sort order", new_r))
            if (
                len(node.args) == 1
                and not node.keywords
                and not isinstance(node.args[0], ast.Starred)
                and name not in _NO_DROP
                and site.function != "<module>"
                and id(node) not in self._statement_calls
            ):
                out.append(("drop call", copy.deepcopy(node.args[0])))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            out.append(("drop statement", ast.Pass()))
        elif isinstance(node, ast.Continue):
            out.append(("continue/break", ast.Break()))
        elif isinstance(node, ast.Break):
            out.append(("continue/break", ast.Continue()))
        elif (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) == 2
            and site.function.endswith("_rank")
        ):
            new_t = copy.deepcopy(node)
            assert isinstance(new_t.value, ast.Tuple)
            new_t.value.elts.reverse()
            out.append(("sort key order", new_t))
        if isinstance(node, ast.If | ast.While | ast.IfExp) and not isinstance(
            node.test, ast.Compare | ast.UnaryOp
        ):
            new_n = copy.deepcopy(node)
            new_n.test = ast.UnaryOp(ast.Not(), copy.deepcopy(node.test))
            out.append(("negate condition", new_n))
        described += [(op, new, None) for op, new in out]
        return [(op, ast.copy_location(new, node), desc) for op, new, desc in described]

    def _constant_variants(self, node: ast.Constant, site: _Site) -> list[_Variant]:
        value = node.value
        out: list[_Variant] = []
        if isinstance(value, bool):
            out.append(("constant", ast.Constant(not value), None))
        elif isinstance(value, int):
            for delta in (1, -1):
                if value + delta >= 0 or value < 0:
                    out.append(("constant", ast.Constant(value + delta), None))
        elif isinstance(value, str):
            if site.regex:
                for what, to, pattern in regex_variants(value):
                    out.append(("regex", ast.Constant(pattern), (what, to)))
            elif value == "":
                out.append(("string", ast.Constant("X"), None))
            else:
                out.append(("string", ast.Constant(""), None))
                swapped = value.swapcase()
                changed = swapped if swapped != value else value + "X"
                out.append(("string", ast.Constant(changed), None))
        return out

    def replacement(self, node: ast.AST, variant: int) -> ast.AST:
        """The node that replaces ``node`` in its ``variant``-th mutant."""
        return self._variants(node, self.sites[id(node)])[variant][1]


def _source(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.If | ast.While):
        keyword = "if" if isinstance(node, ast.If) else "while"
        return f"{keyword} {ast.unparse(node.test)}:"
    if isinstance(node, ast.Pass):
        return "pass"
    if isinstance(node, ast.Slice):
        return _slice(node, ast.unparse)
    return ast.unparse(node)


def _slice(node: ast.Slice, render: Callable[[ast.AST], str]) -> str:
    """``[lower:upper]``, each bound as ``render`` writes it."""
    lower = render(node.lower) if node.lower else ""
    upper = render(node.upper) if node.upper else ""
    return f"[{lower}:{upper}]"


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


def _assigns_skipped(node: ast.Assign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id in _SKIP_NAMES for t in targets)


def mutants_of_source(
    source: str,
    *,
    module: str,
    file: str,
    first_id: int = 1,
    skip: Callable[[str], bool] = lambda qualname: False,
) -> list[Mutant]:
    """Every mutant of one module's source, less the functions ``skip`` names."""
    return _Mutator(ast.parse(source, filename=file), skip=skip).mutants(
        module, file, first_id, source
    )


def generate_mutants(modules: Sequence[str] | None = None) -> list[Mutant]:
    """Every mutant of these modules (default: the tool logic), less what is not tool logic."""
    from parity.strength._explain import load_explanations, module_file

    explained = load_explanations()
    out: list[Mutant] = []
    for module in modules if modules is not None else explained.tool_logic_modules():
        file = module_file(module)
        out += mutants_of_source(
            (project_root() / file).read_text("utf-8"),
            module=module,
            file=file,
            first_id=len(out) + 1,
            skip=lambda name: explained.not_tool_logic_reason(name) is not None,
        )
    return out


def sample_mutants(mutants: Sequence[Mutant], size: int, *, seed: int) -> list[Mutant]:
    """``size`` mutants drawn at random with ``seed`` (the same ones for the same list),
    in their order."""
    if size >= len(mutants):
        return list(mutants)
    chosen = random.Random(seed).sample(range(len(mutants)), max(size, 0))
    return [mutants[i] for i in sorted(chosen)]
