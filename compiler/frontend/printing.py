"""Diagnostics in kernels: `print(x)`, `wp.printf(fmt, ...)`, `wp.expect_eq/expect_neq/expect_near`.

They call libc's `printf` (then `fflush`, so the text is out when the launch returns) with the formats
of Warp's native `print` overloads: `%g` for floats, `%d`/`%lld` for signed, `%u`/`%llu` for unsigned
integers, `True`/`False` for bools. The frontend emits the LLVM calls directly (`llvm.call` to the
variadic `printf`, the format a private constant global); later passes leave them alone.
"""

from __future__ import annotations

import ast

from mlir import ir
from mlir.dialects import arith, scf

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError

from ..dialects import llvm
from ..dialects.warp import builders as wb
from . import composite_values
from . import types as ft
from .values import Var

# What Warp's generic print (and adj_print) writes for a type without a print overload: a struct, an array
NOT_PRINTABLE = "<type without print implementation>"
PRINTF = "printf"
FFLUSH = "fflush"
_FORMATS = {"float": "%g", "int": "%d", "uint": "%u"}


def _ptr():
    return ir.Type.parse("!llvm.ptr")


def _i32():
    return ir.IntegerType.get_signless(32)


def _declare_libc(em) -> None:
    declared = em.program.__dict__.setdefault("libc", set())
    if PRINTF not in declared:
        for text in (f"llvm.func @{PRINTF}(!llvm.ptr, ...) -> i32", f"llvm.func @{FFLUSH}(!llvm.ptr) -> i32"):
            ir.InsertionPoint(em.program.kernel_op).insert(ir.Operation.parse(text))
        declared.add(PRINTF)


def string_pointer(em, text: str) -> ir.Value:
    """A pointer to a NUL-terminated constant copy of `text` (one global per distinct text)."""
    strings = em.program.__dict__.setdefault("strings", {})
    name = strings.get(text)
    data = text.encode() + b"\0"
    if name is None:
        name = strings[text] = f"__wp_str_{len(strings)}"
        escaped = "".join(chr(b) if chr(b).isalnum() or chr(b) in " _.,:;=+-*/()[]<>!?|&^~#@'" else f"\\{b:02X}"
                          for b in data)
        ir.InsertionPoint(em.program.kernel_op).insert(ir.Operation.parse(
            f'llvm.mlir.global private constant @{name}("{escaped}") {{addr_space = 0 : i32}} '
            f': !llvm.array<{len(data)} x i8>'))
    return llvm.mlir_addressof(_ptr(), name)


def call_printf(em, fmt: str, values: list, flush: bool = True) -> None:
    """printf(fmt, values...) then (`flush`) fflush(NULL); `values` are C-promoted MLIR values."""
    _declare_libc(em)
    args = [string_pointer(em, fmt), *values]
    llvm.call(_i32(), args, [], [], var_callee_type=ir.TypeAttr.get(ir.Type.parse("!llvm.func<i32 (ptr, ...)>")),
              callee=ir.FlatSymbolRefAttr.get(PRINTF))
    if not flush:
        return
    null = llvm.mlir_zero(_ptr())
    llvm.call(_i32(), [null], [], [], callee=ir.FlatSymbolRefAttr.get(FFLUSH))


def promoted(em, node, v) -> tuple:
    """(printf conversion, value) for a scalar Var, with C's default argument promotions."""
    t = v.type
    if not wt.is_scalar(t):
        raise em.error(node, f"printing a value of type {ft.name(t)} is not supported", CompileTypeError)
    value = v.value
    if t is wt.bool_:
        return "%s", arith.SelectOp(value, string_pointer(em, "True"), string_pointer(em, "False")).result
    if wt.is_float(t):
        return "%g", value if t is wt.float64 else em.cast(v, wt.float64, node).value
    kind = t._kind_
    # C promotes narrow integers to int; LLVM calls take signless integers (the same bits)
    signless = wt.int64 if t._bits_ == 64 else wt.int32
    if t._bits_ < 32 and kind == "uint":
        v = em.cast(v, wt.uint32, node)
    conv = ("%lld" if kind == "int" else "%llu") if t._bits_ == 64 else _FORMATS[kind]
    return conv, em.cast(v, signless, node).value


def printable(t) -> bool:
    return wt.is_scalar(t) or isinstance(t, ft.TileT) or (wt.is_composite(t) and not wt.is_struct(t))


def print_values(em, node, parts: list) -> None:
    """Python's print: the parts separated by spaces, then a newline (Warp: one part). A tile prints as Warp
    prints one (_print_tile), the text before it printed first."""
    fmt, values = [], []
    for p in parts:
        if isinstance(p, Var) and isinstance(p.type, ft.TileT):
            if fmt:
                call_printf(em, " ".join(fmt) + " ", values, flush=False)
            fmt, values = [], []
            _print_tile(em, node, p)
            fmt.append("")
            continue
        if isinstance(p, str):
            fmt.append(p.replace("%", "%%"))
        elif not printable(p.type):
            fmt.append(NOT_PRINTABLE)
        elif wt.is_composite(p.type) and not wt.is_struct(p.type):  # Warp's print(vec/mat/quat/transform)
            text, parts_values = _composite_format(em, node, p)
            fmt.append(text)
            values.extend(parts_values)
        else:
            conv, value = promoted(em, node, p)
            fmt.append(conv)
            values.append(value)
    call_printf(em, " ".join(fmt) + "\n", values)


def _element_format(em, node, v) -> tuple:
    if wt.is_composite(v.type) and not wt.is_struct(v.type):
        text, values = _composite_format(em, node, v)
        return text.strip(), values
    conv, value = promoted(em, node, v)
    return conv, [value]


def _print_tile(em, node, tile: Var) -> None:
    """Warp's format of a tile (native tile.h, print_values): numpy-like nested brackets, elements separated
    by a space (`%d` / `%g`; a composite's components as Warp prints the composite), rows of a 2-d level on
    lines indented by the depth, higher levels separated by a blank line; then
    ` = tile(shape=(M,N), storage=register)`. One printf per element, in loops over the tile (its elements
    at run time: tile_extract). mlwarp's tiles all live in the thread's own memory: storage=register."""
    shape = tile.type.shape
    rank = len(shape)
    i32 = ft.to_mlir(wt.int32)

    def text(s):
        call_printf(em, s.replace("%", "%%"), [], flush=False)

    def separated(n, body, sep):
        """body(i) for i in [0, n), `sep` printed between them (an scf.for over i)."""
        loop = scf.ForOp(arith.ConstantOp(ir.IndexType.get(), 0).result,
                         arith.ConstantOp(ir.IndexType.get(), n).result,
                         arith.ConstantOp(ir.IndexType.get(), 1).result)
        with ir.InsertionPoint(loop.body):
            i = arith.IndexCastOp(i32, loop.induction_variable).result
            body(i)
            more = arith.CmpIOp(arith.CmpIPredicate.slt, i, arith.ConstantOp(i32, n - 1).result).result
            branch = scf.IfOp(more, [], has_else=False)
            with ir.InsertionPoint(branch.then_block):
                text(sep)
                scf.YieldOp([])
            scf.YieldOp([])

    def element(indices):
        value = wb.create("tile_extract", tile.value, indices, results=[ft.to_mlir(tile.type.dtype)]).result
        fmt, values = _element_format(em, node, Var(value, tile.type.dtype))
        call_printf(em, fmt, values, flush=False)

    def level(k, indices):
        text("[")
        if k == rank - 1:
            separated(shape[k], lambda i: element(indices + [i]), " ")
        elif k == rank - 2:
            def row(i):
                text("[")
                separated(shape[k + 1], lambda j: element(indices + [i, j]), " ")
                text("]")

            separated(shape[k], row, "\n" + " " * (rank - 1))
        else:
            separated(shape[k], lambda i: level(k + 1, indices + [i]), "\n\n" + " " * (k + 1))
        text("]")

    level(0, [])
    text(f" = tile(shape=({','.join(map(str, shape))}), storage=register)")


def _composite_format(em, node, v) -> tuple:
    """Warp's format of a composite: every component as a float with `%g`; vectors `1 2 3 `, matrices one such
    line per row, quaternions `x y z w`, transforms `(px py pz) (qx qy qz qw)`."""
    kind, shape = wt.composite_kind(v.type), wt.inner_shape(v.type)
    n = shape[0] * (shape[1] if len(shape) > 1 else 1)
    values = []
    for k in range(n):  # float(v[k]), promoted to double for printf
        c = composite_values.component(em, v, k)
        c = c if c.type is wt.float32 else em.cast(c, wt.float32, node)
        values.append(em.cast(c, wt.float64, node).value)
    if kind == "quat":
        return "%g %g %g %g", values
    if kind == "transform":
        return "(%g %g %g) (%g %g %g %g)", values
    if kind == "mat":
        return "\n".join("%g " * shape[1] for _ in range(shape[0])), values
    return "%g " * n, values


def stmt_print(em, node: ast.Call) -> None:
    if node.keywords:
        raise em.error(node, "print() in a kernel takes no keyword arguments", CompileError)
    parts = []
    for a in node.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            parts.append(a.value)
        else:
            parts.append(em.expr(a))
    print_values(em, node, parts)
    if len(parts) == 1:  # Warp's print(x) (its one form): the reverse sweep prints x's adjoint
        adjoint_print(em, node, parts[0])


def adjoint_print(em, node, part) -> None:
    """A warp.adjoint_print whose body prints as Warp's adj_print: `adj: ` then the adjoint of a scalar (its print
    format), of a vector (` %g` per component), matrix (one row a line, later rows indented under the first),
    quaternion and transform (their print formats); a text prints itself, a type without print implementation
    that text. A tile's adjoint is not printed (Warp has no adj_print of tiles)."""
    if not isinstance(part, str) and isinstance(part.type, ft.TileT):
        return
    carried = not isinstance(part, str) and printable(part.type)
    ir.Context.current.get_dialect_descriptor("gpu")  # gpu.yield ends the body (a CPU build's context lacks it)
    op = ir.Operation.create("warp.adjoint_print", operands=[part.value] if carried else [], regions=1)
    block = op.regions[0].blocks.append(*([part.value.type] if carried else []))
    with ir.InsertionPoint(block):
        if isinstance(part, str):
            call_printf(em, "adj: %s\n", [string_pointer(em, part)])
        elif not carried:
            call_printf(em, f"adj: {NOT_PRINTABLE}\n", [])
        else:
            text, values = _adjoint_format(em, node, Var(block.arguments[0], part.type))
            call_printf(em, text, values)
        ir.Operation.create("gpu.yield")


def _adjoint_format(em, node, v) -> tuple:
    t = v.type
    if wt.is_scalar(t):
        conv, value = promoted(em, node, v)
        return f"adj: {conv}\n", [value]
    _, values = _composite_format(em, node, v)
    kind, shape = wt.composite_kind(t), wt.inner_shape(t)
    if kind == "quat":
        return "adj: %g %g %g %g\n", values
    if kind == "transform":
        return "adj: (%g %g %g) (%g %g %g %g)\n", values
    if kind == "mat":
        rows = [("adj:" if r == 0 else "    ") + " %g" * shape[1] + "\n" for r in range(shape[0])]
        return "".join(rows), values
    return "adj:" + " %g" * shape[0] + "\n", values


def printf(em, node: ast.Call) -> None:
    if not node.args or not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        raise em.error(node, "wp.printf() needs a string literal format as its first argument", CompileError)
    if len(node.args) - 1 > 32:  # Warp's limit (its printf forwards a fixed argument list): portable kernels
        raise em.error(node, "the maximum number of variadic arguments that can be passed to `printf` is 32",
                       CompileError)
    values = []
    for a in node.args[1:]:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):  # a string literal for %s
            values.append(string_pointer(em, a.value))
            continue
        v = em.expr(a)
        if wt.is_composite(v.type) and not wt.is_struct(v.type):
            values.extend(_eightbytes(em, a, v))
            continue
        if not wt.is_scalar(v.type):
            raise em.error(a, f"wp.printf() cannot format a value of type {ft.name(v.type)}", CompileTypeError)
        if v.type is wt.bool_:
            v = em.cast(v, wt.int32, a)
        values.append(promoted(em, a, v)[1])
    call_printf(em, node.args[0].value, values)


def _eightbytes(em, node, v) -> list:
    """A vector/matrix/quaternion/transform given to wp.printf: Warp passes the C++ struct itself to the variadic
    printf (its compiler warns, the call compiles), so a conversion reads the struct's bytes: as CUDA's vprintf
    packs it and as the x86-64 C ABI passes one of at most 16 bytes, each 8-byte piece of the packed
    components is one argument, a double where the components are floats (`%f` of vec3(1, 2, 3) reads the bits
    of floats 1 and 2 as one double: 2.000000), else a 64-bit integer (`%d` of vec2i(1, 2) reads its low half:
    1). Padding past the last component reads as zero bits."""
    T = v.type
    scalar = T._wp_scalar_type_
    bits = scalar._bits_
    n = 1
    for d in wt.inner_shape(T):
        n *= d
    i64 = ir.IntegerType.get_signless(64)
    per = max(1, 64 // bits)
    out = []
    for start in range(0, n, per):
        word = None
        for j, k in enumerate(range(start, min(n, start + per))):
            c = composite_values.component(em, v, k).value
            ib = ir.IntegerType.get_signless(bits)
            if not isinstance(c.type, ir.IntegerType):
                c = arith.BitcastOp(ib, c).result
            elif c.type.width != bits:
                ib = c.type
            part = c if bits == 64 else arith.ExtUIOp(i64, c).result
            if j:
                part = arith.ShLIOp(part, arith.ConstantOp(i64, j * bits).result).result
            word = part if word is None else arith.OrIOp(word, part).result
        out.append(arith.BitcastOp(ir.F64Type.get(), word).result if wt.is_float(scalar) else word)
    return out


def _when(em, cond: ir.Value, emit) -> None:
    op = scf.IfOp(cond, [], has_else=False)
    with ir.InsertionPoint(op.then_block):
        emit()
        scf.YieldOp([])


def expect(em, node: ast.Call, which: str) -> None:
    """wp.expect_eq/expect_neq(actual, expected) and wp.expect_near(actual, expected, tolerance=1e-6):
    on failure, Warp's message."""
    if node.keywords and which != "near":
        raise em.error(node, f"expect_{which}() takes no keyword arguments", CompileError)
    args = [em.expr(a) for a in node.args]
    for kw in node.keywords:
        if kw.arg != "tolerance":
            raise em.error(node, f"expect_near() has no argument '{kw.arg}'", CompileError)
        args.append(em.expr(kw.value))
    wanted = (2, 3) if which == "near" else (2,)
    if len(args) not in wanted:
        raise em.error(node, f"expect_{which}() takes {' or '.join(map(str, wanted))} arguments, got {len(args)}")
    actual, expected = args[0], args[1]
    if actual.type != expected.type:
        raise em.error(node, f"expect_{which}() arguments must have the same type, got {ft.name(actual.type)} "
                             f"and {ft.name(expected.type)}: Can't test equality for objects with different types",
                       CompileTypeError)  # ends with Warp's message
    if which == "near":
        t = actual.type
        vector_like = wt.is_composite(t) and not wt.is_struct(t) and wt.composite_kind(t) in ("vec", "mat", "quat")
        scalar = wt.scalar_type_of(t) if vector_like else t
        if not wt.is_float(scalar):
            raise em.error(node, f"expect_near() takes floats, got {ft.name(actual.type)}", CompileTypeError)
        tol = args[2] if len(args) == 3 else em.const(1e-6, scalar)
        if tol.type != scalar:
            tol = em.cast(tol, scalar, node)
        if vector_like:  # Warp: the largest component difference, "Max absolute difference"
            diff = em.const(0.0, scalar)
            n = 1
            for d in wt.inner_shape(t):
                n *= d
            for k in range(n):
                a, b = composite_values.component(em, actual, k), composite_values.component(em, expected, k)
                d = em.call_builtin(node, "abs", [em.call_builtin(node, "sub", [a, b])])
                diff = Var(arith.SelectOp(em.call_builtin(node, "gt", [diff, d]).value, diff.value,
                                          d.value).result, scalar)  # Warp's max(diff, d)
        else:
            diff = em.call_builtin(node, "abs", [em.call_builtin(node, "sub", [actual, expected])])
        cond = em.call_builtin(node, "gt", [diff, tol]).value
        diff_label = "Max absolute difference" if vector_like else "Absolute difference"

        def report():
            call_printf(em, "Error, expect_near() failed with tolerance ", [])
            print_values(em, node, [tol])
            call_printf(em, "    Expected: ", [])
            print_values(em, node, [expected])
            call_printf(em, "    Actual: ", [])
            print_values(em, node, [actual])
            call_printf(em, f"    {diff_label}: ", [])
            print_values(em, node, [diff])
    else:
        cond = em.call_builtin(node, "ne" if which == "eq" else "eq", [actual, expected]).value

        def report():
            call_printf(em, f"Error, expect_{which}() failed:\n", [])
            call_printf(em, "\t Expected: ", [])
            print_values(em, node, [expected])
            call_printf(em, "\t Actual: ", [])
            print_values(em, node, [actual])
    _when(em, cond, report)


def call(em, node: ast.Call, what: str) -> None:
    """The statement forms: print, printf, expect_eq, expect_neq, expect_near (no value)."""
    if what == "print":
        stmt_print(em, node)
    elif what == "printf":
        printf(em, node)
    else:
        expect(em, node, what[len("expect_"):])
    return None


STATEMENTS = ("print", "printf", "expect_eq", "expect_neq", "expect_near")  # "print": wp.print, Python's print
