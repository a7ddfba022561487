"""The mutants of the Python tool logic: where a module can be changed, and how.

Each mutant is one change to one node of a module's AST, compiled in memory
(``Mutant.code``): the file is never written. Besides where it is (file, line,
function), each mutant has a ``Shape``: the normalized form of the code it changes,
of the change, and of the statements around it, which explanations are keyed on
(``parity.strength._explain``).
"""

from __future__ import annotations

import ast
import copy
import random
import re
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from parity.project import project_root
from parity.strength._normal import ModuleIndex, Namer

__all__ = [
    "Mutant",
    "Shape",
    "generate_mutants",
    "mutants_of_source",
    "regex_variants",
    "sample_mutants",
    "select_mutants",
]

# CPython 3.11 keeps the AST converter's recursion depth in interpreter-wide state, so
# two threads parsing at once can fail with "SystemError: AST constructor recursion
# depth mismatch" (python/cpython#106905; seen in this project's CI on 3.11.7). The
# runner's threads build mutants concurrently, so that step takes this lock (it costs
# milliseconds beside a mutant's replay).
_AST_LOCK = threading.Lock()


@dataclass(frozen=True)
class Shape:
    """What a mutant changes, in normalized forms (``parity.strength._normal``)."""

    site: str
    """The code the change is made in: the changed expression, or for a constant the
    expression or simple statement that holds it, or a compound statement's header."""
    before: str
    after: str
    contexts: tuple[str, ...] = ()
    """The headers of the compound statements around the change, innermost first."""


@dataclass(frozen=True)
class Mutant:
    """One change to one module of the tool logic."""

    id: int
    module: str
    """The module's import name, e.g. ``recall._tools``."""
    file: str
    """Its file, relative to the project."""
    line: int
    col: int
    function: str
    """The qualified name of the enclosing function or class, or the name a module-level
    statement assigns, or ``<module>``."""
    operator: str
    before: str
    """The changed code as written (for a report)."""
    after: str
    shape: Shape
    node: int = field(repr=False, compare=False)
    """The index of the changed node in ``ast.walk`` order."""
    variant: int = field(repr=False, compare=False)
    source: str = field(default="", repr=False, compare=False)
    """The module's source when the mutant was made (the file may change meanwhile)."""

    @property
    def ident(self) -> tuple[str, int, int]:
        """(module, node, variant): the same mutant in any list made from the same source."""
        return (self.module, self.node, self.variant)

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"

    @property
    def change(self) -> str:
        """``before -> after``, for a report."""
        return f"{short(self.before)} -> {short(self.after)}"

    def code(self) -> types.CodeType:
        """The mutated module, compiled (with the file's name and line numbers).

        Safe from several threads: parsing and compiling are serialized (see ``_AST_LOCK``).
        """
        path = project_root() / self.file
        source = self.source or path.read_text("utf-8")
        with _AST_LOCK:
            tree = ast.parse(source, filename=str(path))
            target = list(ast.walk(tree))[self.node]
            replacement = _Mutator(tree, package=_package(self.module)).replacement(
                target, self.variant
            )
            _replace(tree, target, replacement)
            ast.fix_missing_locations(tree)
            return compile(tree, str(path), "exec", dont_inherit=True)


def short(text: str, width: int = 70) -> str:
    """One line of at most ``width`` characters, escapes visible."""
    text = text.replace("\n", "\\n").encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= width else text[: width - 1] + "…"


def _package(module: str) -> str:
    return module.rpartition(".")[0]


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
# Code in these is not the change's site: the site is the expression around it.
_ATOMIC = (
    ast.Constant,
    ast.Name,
    ast.Attribute,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.Starred,
    ast.keyword,
    ast.Slice,
)


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
        self,
        tree: ast.Module,
        *,
        package: str = "",
        skip: Callable[[str], bool] = lambda qualname: False,
    ) -> None:
        self.tree = tree
        self.index = ModuleIndex(tree, package=package)
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
        found: list[tuple[int, int, int, int, str, str, str, str, Shape]] = []
        for index, node in enumerate(ast.walk(self.tree)):
            site = self.sites.get(id(node))
            if site is None:
                continue
            line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
            for variant, (operator, new, desc) in enumerate(self._variants(node, site)):
                before, after = desc or (_source(node), _source(new))
                shape = self._shape(node, new, desc)
                found.append(
                    (line, col, index, variant, site.function, operator, before, after, shape)
                )
        found.sort(key=lambda f: f[:4])
        return [
            Mutant(
                id=first_id + i,
                module=module,
                file=file,
                line=line,
                col=col,
                function=function,
                operator=operator,
                before=before,
                after=after,
                shape=shape,
                node=index,
                variant=variant,
                source=source,
            )
            for i, (line, col, index, variant, function, operator, before, after, shape) in (
                enumerate(found)
            )
        ]

    def _site(self, node: ast.AST) -> ast.AST:
        """The code a change to ``node`` is named by (see ``Shape.site``)."""
        if isinstance(node, ast.Continue | ast.Break | ast.Pass):
            for holder, _ in self.index.ancestors(node):
                if isinstance(holder, ast.stmt):
                    return holder
            return node
        current = node
        while isinstance(current, _ATOMIC):
            up = self.index.parent.get(id(current))
            if up is None or not isinstance(up, ast.expr | ast.keyword | ast.stmt):
                break
            current = up
            if isinstance(up, ast.stmt):
                break
        return current

    def _shape(self, node: ast.AST, new: ast.AST, desc: tuple[str, str] | None) -> Shape:
        site = self._site(node)
        namer = self.index.namer(site)
        site_form = _form(namer, site)
        if desc is not None:
            before, after = desc
        elif isinstance(node, ast.Constant) and isinstance(new, ast.Constant):
            before, after = repr(node.value), repr(new.value)
        else:
            before, after = _form(namer, node), _form(namer, new)
        return Shape(site_form, before, after, self.index.contexts(node))

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
        site = self.sites[id(node)]
        return self._variants(node, site)[variant][1]


def _form(namer: Namer, node: ast.AST) -> str:
    """The normalized form of a changed node or of a site."""
    if isinstance(node, ast.If | ast.While | ast.For | ast.AsyncFor | ast.With | ast.Try):
        return namer.header(node)
    if isinstance(node, ast.Slice):
        return _slice(node, namer.form)
    return namer.form(node)


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
    tree = ast.parse(source, filename=file)
    mutator = _Mutator(tree, package=_package(module), skip=skip)
    return mutator.mutants(module, file, first_id, source)


def generate_mutants(
    modules: Sequence[str] | None = None,
    *,
    skip: Callable[[str], bool] | None = None,
) -> list[Mutant]:
    """Every mutant of these modules (default: the tool logic), less what is not tool logic."""
    from parity.strength._explain import load_explanations

    explained = load_explanations()
    chosen = list(modules) if modules is not None else explained.tool_logic_modules()
    out: list[Mutant] = []
    for module in chosen:
        path = explained.module_path(module)
        file = path.relative_to(project_root()).as_posix()
        out += mutants_of_source(
            path.read_text("utf-8"),
            module=module,
            file=file,
            first_id=len(out) + 1,
            skip=skip or explained.not_tool_logic_of(module),
        )
    return out


def select_mutants(mutants: Sequence[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` mutants, evenly spread over the list (all when ``limit`` is None)."""
    if limit is None or limit >= len(mutants):
        return list(mutants)
    if limit <= 0:
        return []
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def sample_mutants(mutants: Sequence[Mutant], size: int, *, seed: int) -> list[Mutant]:
    """``size`` mutants drawn at random with ``seed`` (the same ones for the same list),
    in their order."""
    if size >= len(mutants):
        return list(mutants)
    chosen = random.Random(seed).sample(range(len(mutants)), max(size, 0))
    return [mutants[i] for i in sorted(chosen)]
