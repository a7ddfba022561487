"""Normalized forms of Python code: what explanations are keyed on.

A form is ``ast.unparse`` of a piece of code after three changes:

- each local name (a parameter, a name the function assigns, a comprehension or
  lambda variable) becomes ``_1``, ``_2``… in the order it first appears in the form;
- every other name loses its leading underscores (``_TERMS`` is ``TERMS``: a private
  helper made public when a module splits keeps its form);
- an imported module's name is dropped from an attribute (``strings.to_lower(x)`` is
  ``to_lower(_1)``).

So reformatting, renaming a local, and moving code to another function or module
leave a form as it was. A compound statement's form is its header (``if _1 is None:``,
``for _1 in _2:``); a branch other than the first says so (``if _1 is None: else:``).
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["ModuleIndex", "Namer", "canonical", "imported_module"]


def canonical(form: str) -> str:
    """A form written by hand (in the explanations' data), in the layout forms have.

    Forms are parsed and unparsed, so quotes and spaces may be written as one likes.
    A text that is no Python (a regular expression's range, ``[a-z] at 1``) is kept
    as it is, less surrounding spaces.
    """
    text = form.strip()
    if _VERBATIM.match(text):
        return text
    for suffix in (" else:", " finally:", ""):
        if suffix and not text.endswith(suffix):
            continue
        head = text.removesuffix(suffix) if suffix else text
        shaped = _canonical(head)
        if shaped is not None:
            return shaped + suffix
    return text


# A regular expression's class or count (``[a-z] at 1``, ``{2,}``), or a slice.
_VERBATIM = re.compile(r"^(?:\[[^\]]*\]|\{\d+,?\d*\})(?: at \d+)?$")


def _canonical(text: str) -> str | None:
    try:
        return ast.unparse(ast.parse(text, mode="eval"))
    except SyntaxError:
        pass
    for tail in ("", " pass"):
        try:
            tree = ast.parse(text + tail)
        except SyntaxError:
            continue
        if len(tree.body) != 1:
            return None
        if tail:
            return ast.unparse(tree.body[0]).split("\n")[0]
        return ast.unparse(tree.body[0])
    return None


def _is_compound(node: ast.AST) -> bool:
    return isinstance(
        node,
        ast.If | ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith | ast.Try,
    )


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


@dataclass
class Namer:
    """Numbers the local names of one form (and of the forms derived from it)."""

    local: frozenset[str]
    modules: frozenset[str] = frozenset()
    numbers: dict[str, str] = field(default_factory=dict)

    def form(self, node: ast.AST) -> str:
        """The normalized source of an expression or a simple statement."""
        return ast.unparse(self.rename(node))

    def rename(self, node: ast.AST) -> ast.AST:
        """A copy of ``node`` with the names normalized."""
        extra = frozenset(_bound_inside(node))
        renamed: ast.AST = _Renamer(self, extra).visit(copy.deepcopy(node))
        return renamed

    def header(self, node: ast.stmt, branch: str = "body") -> str:
        """The normalized header of a compound statement (``if …:``), or its form."""
        if isinstance(node, ast.If | ast.While):
            keyword = "if" if isinstance(node, ast.If) else "while"
            head = f"{keyword} {self.form(node.test)}:"
        elif isinstance(node, ast.For | ast.AsyncFor):
            head = f"for {self.form(node.target)} in {self.form(node.iter)}:"
        elif isinstance(node, ast.With | ast.AsyncWith):
            head = "with " + ", ".join(self.form(item) for item in node.items) + ":"
        elif isinstance(node, ast.Try):
            head = "try:"
        else:
            return self.form(node)
        if branch == "orelse":
            return head + " else:"
        if branch == "finalbody":
            return head + " finally:"
        return head

    def name(self, name: str) -> str:
        """A name's normal form: a number when it is local, else without leading ``_``."""
        if name in self.local:
            if name not in self.numbers:
                self.numbers[name] = f"_{len(self.numbers) + 1}"
            return self.numbers[name]
        if name.startswith("__") and name.endswith("__"):
            return name
        return name.lstrip("_") or name


class _Renamer(ast.NodeTransformer):
    def __init__(self, namer: Namer, extra: frozenset[str]) -> None:
        self.namer = namer
        self.extra = extra

    def _name(self, name: str) -> str:
        if name in self.extra and name not in self.namer.local:
            self.namer.local = self.namer.local | {name}
        return self.namer.name(name)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id in self.namer.modules:
            return ast.copy_location(ast.Name(self.namer.name(node.attr), ast.Load()), node)
        self.generic_visit(node)
        return node


def _bound_inside(node: ast.AST) -> Iterator[str]:
    """Names that comprehensions and lambdas inside ``node`` bind."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.comprehension):
            for target in ast.walk(sub.target):
                if isinstance(target, ast.Name):
                    yield target.id
        elif isinstance(sub, ast.Lambda):
            yield from (a.arg for a in _arguments(sub.args))
        elif isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
            yield sub.target.id


def _arguments(args: ast.arguments) -> list[ast.arg]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return every


def _locals_of(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    names = {a.arg for a in _arguments(function.args)}
    declared: set[str] = set()
    body = function.body if isinstance(function.body, list) else [function.body]
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                names.add(node.id)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                declared.update(node.names)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.ExceptHandler):
                names.update([node.name] if node.name else [])
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    names.update(_bound_inside(function))
    return frozenset(names - declared)


class ModuleIndex:
    """One module's tree with what forms need: parents, scopes, qualified names."""

    def __init__(self, tree: ast.Module, *, package: str = "") -> None:
        self.tree = tree
        self.parent: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
        self.modules = frozenset(_module_names(tree, package))
        self._locals: dict[int, frozenset[str]] = {}

    def ancestors(self, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(ancestor, the child of it that leads to ``node``), innermost first."""
        child = node
        while (up := self.parent.get(id(child))) is not None:
            yield up, child
            child = up

    def namer(self, node: ast.AST) -> Namer:
        """A fresh namer for forms of code at ``node``."""
        local: set[str] = set()
        for up, _ in self.ancestors(node):
            if isinstance(up, _SCOPES):
                names = self._locals.get(id(up))
                if names is None:
                    names = self._locals[id(up)] = _locals_of(up)
                local |= names
            elif isinstance(up, _COMPREHENSIONS):
                local.update(_bound_inside(up))
        return Namer(frozenset(local), self.modules)

    def qualname(self, node: ast.AST) -> str:
        """The qualified name of the function or class that holds ``node``.

        Code at the top of the module is named by the name it assigns (``_TERMS``),
        else ``<module>``.
        """
        parts: list[str] = []
        top: ast.AST = node
        for up, child in self.ancestors(node):
            if isinstance(
                up, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            ) and child not in (*up.decorator_list, getattr(up, "returns", None)):
                parts.append(up.name)
            if isinstance(up, ast.Module):
                top = child
        if parts:
            return ".".join(reversed(parts))
        if isinstance(top, ast.Assign | ast.AnnAssign):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return targets[0].id
        return "<module>"

    def contexts(self, node: ast.AST) -> tuple[str, ...]:
        """The headers of the compound statements around ``node``, innermost first.

        Each header is numbered on its own (its first local is ``_1``).
        """
        out: list[str] = []
        for up, child in self.ancestors(node):
            if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                break
            if isinstance(up, ast.ExceptHandler):
                kind = self.namer(up).form(up.type) if up.type is not None else ""
                out.append(f"except {kind}:".replace(" :", ":"))
            elif _is_compound(up) and isinstance(up, ast.stmt):
                branch = _branch(up, child)
                if branch is not None:
                    out.append(self.namer(up).header(up, branch))
        return tuple(out)

    def statement(self, node: ast.AST) -> ast.stmt | None:
        """The statement that holds ``node`` (``node`` itself when it is one)."""
        if isinstance(node, ast.stmt):
            return node
        for up, _ in self.ancestors(node):
            if isinstance(up, ast.stmt):
                return up
        return None


def _branch(stmt: ast.stmt, child: ast.AST) -> str | None:
    """Which list of ``stmt`` holds ``child``: ``body``, ``orelse``, ``finalbody``; None
    when ``child`` is part of the header (a test, an iterable)."""
    for name in ("body", "orelse", "finalbody", "handlers"):
        if child in getattr(stmt, name, ()):
            return "body" if name == "handlers" else name
    return None


def _module_names(tree: ast.Module, package: str) -> Iterator[str]:
    """Names the module binds to modules of its own top package (``from recall._go
    import strings``), whose attributes forms name without them."""
    top = package.split(".")[0]
    if not top:
        return
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.split(".")[0] == top:
                    yield alias.asname
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            base = imported_module(node, package)
            if base.split(".")[0] != top:
                continue
            for alias in node.names:
                if _is_module(f"{base}.{alias.name}"):
                    yield alias.asname or alias.name


def imported_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module ``node`` imports from, inside ``package``."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        kept = parts[: max(len(parts) - node.level + 1, 0)]
        base = ".".join([*kept, *([base] if base else [])])
    return base


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
