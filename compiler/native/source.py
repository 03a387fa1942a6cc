"""The C++ of a kernel's @wp.func_native functions: each snippet as the body of a C++ function with Warp's
parameter conventions, and the entry points the compiled kernel calls (convert-warp-native-calls).

A function's record (`NativeSpec.record()`, JSON: it travels from the frontend to the build as a module
attribute) holds its parameters' C++ types and kinds, its return type, its snippets and where they are in the
user's file. Warp's conventions (warp/_src/codegen.py, codegen_snippet):
  forward   static R f(T0 a, wp::array_t<T1> x, T2* _wp_ref_r)  { T2& r = *_wp_ref_r; <snippet> }
  adjoint   static void adj_f(<forward params>, T0& adj_a, wp::array_t<T1>& adj_x, T2* _wp_ref_adj_r, R& adj_ret)
  replay    static R replay_f(<forward params>)  { <replay_snippet> }
The entry points take every argument by address (mlwarp's calling convention: a copy of each value in its
storage layout, an array's descriptor), the forward's return slot last; the adjoint's slots of the arguments'
adjoints are read back after the call (warp-autodiff, passes/autodiff.py: native_call).
"""

from __future__ import annotations

import hashlib
import os

from mlwarp.core import types as wt

HEADER = "warp_snippet.h"
HEADER_DIR = os.path.dirname(__file__)

# parameter kinds: a value, a wp.ref[T] (read back after the call), an array (its descriptor), a uint64 address
# of a local's copy (wp.address_of(local): the slot's own address is the value; read back after the call)
VALUE, REF, ARRAY, ADDRESS = "v", "r", "a", "p"
WRITTEN = (REF, ADDRESS)

_SCALARS = {wt.int8: "wp::int8", wt.uint8: "wp::uint8", wt.int16: "wp::int16", wt.uint16: "wp::uint16",
            wt.int32: "wp::int32", wt.uint32: "wp::uint32", wt.int64: "wp::int64", wt.uint64: "wp::uint64",
            wt.float16: "wp::float16", wt.float32: "wp::float32", wt.float64: "wp::float64", wt.bool_: "bool"}


def value_ctype(t) -> str | None:
    """Warp's C++ spelling of a value of Warp type `t` (wp::vec_t<3, wp::float32>, ...); None for a type a
    snippet cannot take (structs, bfloat16)."""
    if t in _SCALARS:
        return _SCALARS[t]
    kind = wt.composite_kind(t)
    s = _SCALARS.get(getattr(t, "_wp_scalar_type_", None))
    if s is None:
        return None
    if kind == "vec":
        return f"wp::vec_t<{t._shape_[0]}, {s}>"
    if kind == "mat":
        return f"wp::mat_t<{t._shape_[0]}, {t._shape_[1]}, {s}>"
    if kind == "quat":
        return f"wp::quat_t<{s}>"
    if kind == "transform":
        return f"wp::transform_t<{s}>"
    return None


def array_ctype(dtype) -> str | None:
    element = value_ctype(dtype)
    return None if element is None else f"wp::array_t<{element}>"


class NativeSpec:
    """One @wp.func_native function as a kernel calls it: `params` (name, C++ type, kind, ndim), `ret` (C++ type,
    kind, ndim) or None, the snippets, and where they are (file, first line of each snippet, decorator line)."""

    def __init__(self, name, params, ret, snippet, adj_snippet, replay_snippet, filename, line, snippet_lines):
        self.name = name
        self.params = [tuple(p) for p in params]
        self.ret = tuple(ret) if ret else None
        self.snippet, self.adj_snippet, self.replay_snippet = snippet, adj_snippet, replay_snippet
        self.filename, self.line = filename, line
        self.snippet_lines = dict(snippet_lines)
        digest = hashlib.sha256(repr(self.record(symbol=False)).encode()).hexdigest()[:10]
        self.symbol = f"wp_native_{name}_{digest}"

    def record(self, symbol: bool = True) -> dict:
        r = {"name": self.name, "params": self.params, "ret": self.ret, "snippet": self.snippet,
             "adj_snippet": self.adj_snippet, "replay_snippet": self.replay_snippet, "filename": self.filename,
             "line": self.line, "snippet_lines": self.snippet_lines}
        if symbol:
            r["symbol"] = self.symbol
        return r

    @classmethod
    def from_record(cls, r: dict) -> "NativeSpec":
        return cls(r["name"], r["params"], r["ret"], r["snippet"], r["adj_snippet"], r["replay_snippet"],
                   r["filename"], r["line"], r["snippet_lines"])

    @property
    def has_adjoint(self) -> bool:
        return self.adj_snippet is not None

    @property
    def has_replay(self) -> bool:
        return self.replay_snippet is not None

    @property
    def adjoint_symbol(self) -> str:
        return self.symbol + "_adj"

    @property
    def replay_symbol(self) -> str:
        return self.symbol + "_replay"


class _Writer:
    """Lines of the translation unit; `#line` directives put a snippet's lines at its place in the user's file and
    the lines after it back at theirs in the generated file (`name`)."""

    def __init__(self, name: str):
        self.name = name
        self.lines: list = []

    def add(self, text: str) -> None:
        self.lines.extend(text.split("\n"))

    def snippet(self, body: str, filename: str, line: int | None, fallback: int) -> None:
        self.lines.append(f'#line {line if line is not None else fallback} "{_escape(filename)}"')
        self.lines.extend(body.split("\n"))
        self.lines.append(f'#line {len(self.lines) + 2} "{self.name}"')

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')


def _forward_params(spec: NativeSpec) -> tuple:
    """(the C++ parameter list, the alias lines of its wp.ref parameters) of the forward function."""
    params, aliases = [], []
    for name, ctype, kind, _ in spec.params:
        if kind == REF:
            params.append(f"{ctype}* _wp_ref_{name}")
            aliases.append(f"    {ctype}& {name} = *_wp_ref_{name};")
        else:
            params.append(f"{ctype} {name}")
    return params, aliases


def _forward_arguments(spec: NativeSpec, grads: bool = False) -> list:
    """The forward function's arguments read from the entry's slots `p<k>` (with `grads`: an array's grad
    pointer from its adjoint's slot `g<k>`)."""
    out = []
    for k, (name, ctype, kind, ndim) in enumerate(spec.params):
        if kind == ARRAY:
            element = ctype[len("wp::array_t<"):-1]
            out.append(f"mlwarp_native::to_array<{element}, {ndim}>(p{k}{f', g{k}' if grads else ''})")
        elif kind == REF:
            out.append(f"({ctype}*)p{k}")
        elif kind == ADDRESS:
            out.append(f"(wp::uint64)p{k}")
        else:
            out.append(f"*(const {ctype}*)p{k}")
    return out


def _store_result(spec: NativeSpec, call: str) -> str:
    if spec.ret is None:
        return f"    {call};"
    ctype, kind, ndim = spec.ret
    if kind == ARRAY:
        element = ctype[len("wp::array_t<"):-1]
        return f"    mlwarp_native::from_array<{element}, {ndim}>(ret, {call});"
    return f"    *({ctype}*)ret = {call};"


def _function(w: _Writer, spec: NativeSpec, fname: str, body: str, line_key: str) -> None:
    params, aliases = _forward_params(spec)
    ret = spec.ret[0] if spec.ret else "void"
    w.add(f"// {spec.filename}:{spec.line} ({line_key} of '{spec.name}')")
    w.add(f"static CUDA_CALLABLE {ret} {fname}({', '.join(params)})\n{{")
    if aliases:
        w.add("\n".join(aliases))
    w.snippet(body, spec.filename, spec.snippet_lines.get(line_key), spec.line)
    w.add("}\n")


def _entry_slots(spec: NativeSpec, prefix: str = "p") -> list:
    return [f"void* {prefix}{k}" for k in range(len(spec.params))]


def write_function(w: _Writer, spec: NativeSpec) -> None:
    """The snippet's forward function (and adjoint, replay) and their entry points."""
    fname = spec.symbol[len("wp_native_"):]  # `<name>_<digest>`: one function per kind of call, as Warp's `<name>_0`
    _function(w, spec, fname, spec.snippet, "snippet")
    slots = _entry_slots(spec) + (["void* ret"] if spec.ret else [])
    w.add(f"WP_NATIVE_ENTRY void {spec.symbol}({', '.join(slots) or 'void'})\n{{")
    w.add(_store_result(spec, f"{fname}({', '.join(_forward_arguments(spec))})"))
    w.add("}\n")
    if spec.has_replay:
        _function(w, spec, f"replay_{fname}", spec.replay_snippet, "replay_snippet")
        w.add(f"WP_NATIVE_ENTRY void {spec.replay_symbol}({', '.join(slots) or 'void'})\n{{")
        w.add(_store_result(spec, f"replay_{fname}({', '.join(_forward_arguments(spec))})"))
        w.add("}\n")
    if spec.has_adjoint:
        _adjoint(w, spec, fname)


def _adjoint(w: _Writer, spec: NativeSpec, fname: str) -> None:
    params, aliases = _forward_params(spec)
    for name, ctype, kind, _ in spec.params:
        if kind == REF:
            params.append(f"{ctype}* _wp_ref_adj_{name}")
            aliases.append(f"    {ctype}& adj_{name} = *_wp_ref_adj_{name};")
        else:
            params.append(f"{ctype}& adj_{name}")
    if spec.ret:
        params.append(f"{spec.ret[0]}& adj_ret")
    w.add(f"// {spec.filename}:{spec.line} (adj_snippet of '{spec.name}')")
    w.add(f"static CUDA_CALLABLE void adj_{fname}({', '.join(params)})\n{{")
    if aliases:
        w.add("\n".join(aliases))
    w.snippet(spec.adj_snippet, spec.filename, spec.snippet_lines.get("adj_snippet"), spec.line)
    w.add("}\n")
    slots = _entry_slots(spec) + _entry_slots(spec, "g") + (["void* gret"] if spec.ret else [])
    w.add(f"WP_NATIVE_ENTRY void {spec.adjoint_symbol}({', '.join(slots)})\n{{")
    adjoints = []
    for k, (name, ctype, kind, ndim) in enumerate(spec.params):
        if kind == ARRAY:  # the adjoint array, as an lvalue the snippet may change (Warp passes it by reference)
            element = ctype[len("wp::array_t<"):-1]
            w.add(f"    {ctype} adj_{k} = mlwarp_native::to_array<{element}, {ndim}>(g{k});")
            adjoints.append(f"adj_{k}")
        elif kind == REF:
            adjoints.append(f"({ctype}*)g{k}")
        elif kind == ADDRESS:  # (an address has no adjoint: its slot holds the local's type)
            w.add(f"    wp::uint64 adj_{k} = 0;")
            adjoints.append(f"adj_{k}")
        else:
            adjoints.append(f"*({ctype}*)g{k}")
    if spec.ret:
        adjoints.append(f"*({spec.ret[0]}*)gret")
    w.add(f"    adj_{fname}({', '.join(_forward_arguments(spec, grads=True) + adjoints)});\n}}\n")


def translation_unit(specs, name: str) -> str:
    """The C++ source of these functions (NativeSpec), one file named `name` (for #line)."""
    w = _Writer(name)
    w.add(f'#include "{HEADER}"\n')
    for spec in specs:
        write_function(w, spec)
    return w.text()
