"""A function's source text, read once per code object: what the kernel cache key hashes and what the
frontend compiles, so the two always agree.

`inspect.getsource` tokenizes the whole block, and its first call compiles the tokenizer's regular
expressions: ~5 ms of a warm start's ~10. The code object already says where the function is: it
starts at `co_firstlineno` (its first decorator) and its instructions end at their last position.
The block is that range, extended over the following code lines indented deeper than the `def`
(a trailing `pass` or `else:` body emits no instruction). When that text does not parse, or the code
object has no line information, `inspect.getsource` decides.

Stdlib only: a warm start must not load the compiler.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import textwrap
import types
import weakref
from dataclasses import dataclass, field

from .stamps import per_text


@dataclass(frozen=True)
class FunctionSource:
    filename: str
    first_line: int  # file line of the text's first line (a decorator or the `def`)
    text: str  # dedented
    parsed: ast.Module | None = field(default=None, compare=False, repr=False)
    transformers: tuple = ()  # Warp's code_transformers: ast.NodeTransformers applied to every parse, in order

    @functools.cached_property
    def tree(self) -> ast.Module:
        """The text's syntax tree, parsed when first asked for: a warm start only hashes the text."""
        if self.transformers:
            return self.fresh_tree()
        return self.parsed if self.parsed is not None else ast.parse(self.text)

    def fresh_tree(self) -> ast.Module:
        """A tree of its own (transformers and the frontend may change it), transformed."""
        tree = ast.parse(self.text)
        for transformer in self.transformers:
            tree = ast.fix_missing_locations(transformer.visit(tree))
        return tree

    @functools.cached_property
    def transformed_dump(self) -> str:
        """What the transformers made of the text, for cache keys ('' without transformers)."""
        return ast.dump(self.tree, include_attributes=True) if self.transformers else ""


_by_code: dict = {}
# Python function -> the FunctionSource given in its place (Warp's Kernel(source=..., code_transformers=...))
_overrides: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def function_source(func) -> FunctionSource:
    """Raises OSError or TypeError when the source cannot be found (as inspect does)."""
    if _overrides:
        try:
            found = _overrides.get(func)
        except TypeError:
            found = None
        if found is not None:
            return found
    return per_code(_by_code, func, lambda f: _read_fast(f, f.__code__) or _read_with_inspect(f))


def _is_overridden(func) -> bool:
    try:
        return func in _overrides
    except TypeError:
        return False


def override_source(func, text=None, transformers=()):
    """`func`, or a copy of it compiled from `text` (its source, a `def` of that name) and/or through
    `transformers` (objects whose `visit(tree)` returns the tree: ast.NodeTransformer), as Warp's
    Kernel(source=, code_transformers=): the copy carries them, `func` itself compiles as before."""
    if text is None and not transformers:
        return func
    if text is not None:
        base = FunctionSource(func.__code__.co_filename, func.__code__.co_firstlineno, textwrap.dedent(text))
    else:
        base = function_source(func)
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    functools.update_wrapper(copy, func)
    del copy.__wrapped__  # (inspect would read the original's source through it)
    _overrides[copy] = FunctionSource(base.filename, base.first_line, base.text, None, tuple(transformers))
    return copy


def per_code(memo: dict, func, make):
    """`make(func)`, computed once per code object in `memo` (not for a copy given its own source: it shares
    the original's code object)."""
    if _overrides and _is_overridden(func):
        return make(func)
    code = func.__code__
    key = (code.co_filename, code)  # code objects compare by value, and not by their file
    found = memo.get(key)
    if found is None:
        found = memo[key] = make(func)
    return found


def _read_fast(func, code) -> FunctionSource | None:
    linecache.checkcache(code.co_filename)  # as inspect does: a file edited since it was read is read again
    lines = linecache.getlines(code.co_filename, func.__globals__)
    first = code.co_firstlineno
    last = _last_line(code)
    if not lines or last is None or not 0 < first <= last <= len(lines):
        return None
    head = lines[first - 1]
    indent = len(head) - len(head.lstrip())
    if not head.lstrip().startswith(("@", "def ", "async def ")):
        return None
    end = last
    while end < len(lines):
        line = lines[end].strip()
        if line and len(lines[end]) - len(lines[end].lstrip()) <= indent:
            break
        end += 1
        if line and not line.startswith("#"):
            last = end  # trailing blank and comment lines stay out, as inspect leaves them
    text = textwrap.dedent("".join(lines[first - 1:last]))
    parsed = []

    def defines():
        try:
            parsed.append(ast.parse(text))
        except SyntaxError:
            return False
        return _defines(parsed[0], func)

    # the same text was found to define a function of this name before: no parse until the tree is needed
    if not per_text("definitions", f"{func.__name__}\n{text}", defines):
        return None
    return FunctionSource(code.co_filename, first, text, parsed[0] if parsed else None)


def _defines(tree, func) -> bool:
    return len(tree.body) == 1 and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) and \
        tree.body[0].name == func.__name__


def _last_line(code) -> int | None:
    last = None
    for _, end, *_ in code.co_positions():
        if end is not None and (last is None or end > last):
            last = end
    for const in code.co_consts:
        if inspect.iscode(const):
            inner = _last_line(const)
            if inner is not None and (last is None or inner > last):
                last = inner
    return last


def _read_with_inspect(func) -> FunctionSource:
    lines, first = inspect.getsourcelines(func)
    text = textwrap.dedent("".join(lines))
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if tree is None or not _defines(tree, func):  # the file changed since the function was defined
        raise OSError(f"the source of '{func.__name__}' at {filename}:{first} is not its definition: "
                      f"was the file edited since it was imported?")
    return FunctionSource(filename, max(first, 1), text, tree)
