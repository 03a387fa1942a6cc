"""warp-cpu-vector-math: libm calls get glibc's libmvec variants, so LLVM vectorises the thread loop
around them.

LLVM's loop vectoriser widens a call only when it knows a vector version: the
`vector-function-abi-variant` attribute (`_ZGV_LLVM_N8v_cosf(_ZGVdN8v_cosf)`: cosf on 8 lanes
is `_ZGVdN8v_cosf`). Intrinsics (`llvm.intr.cos`) cannot carry it, so each intrinsic this
table names becomes a call of its libm function, whose declaration gets the attribute, no
memory effects (errno is not ours to keep) and the vector functions, kept by
`llvm.compiler.used` until the vectoriser has run. A loop LLVM does not vectorise still calls
the scalar function. The library then needs libmvec: `needed_libraries()` says which file to
give the JIT and the linker.

libmvec's results are within 4 ulp of the scalar libm (1-2 for sin/cos): with a given
launch, every element's value is the same whatever the thread count (runtime/cpu.py cuts
launches at multiples of the vector loop's step).

`isa`: "host" (this CPU's widest ISAs, the default), "none", or a comma-separated list of
"sse4", "avx2", "avx512".
"""

from __future__ import annotations

from mlir import ir

from ...dialects import llvm
from ...passes import registry
from ...passes.registry import PassError
from ...passes.ir_walk import ops_named
from .host import host_isas, libmvec_path

# the libm functions libmvec (glibc >= 2.35) provides on x86-64, with their argument counts
LIBMVEC = {"acos": 1, "acosh": 1, "asin": 1, "asinh": 1, "atan": 1, "atanh": 1, "cbrt": 1, "cos": 1, "cosh": 1,
           "erf": 1, "erfc": 1, "exp": 1, "exp10": 1, "exp2": 1, "expm1": 1, "log": 1, "log10": 1, "log1p": 1,
           "log2": 1, "sin": 1, "sinh": 1, "tan": 1, "tanh": 1, "atan2": 2, "hypot": 2, "pow": 2}
# ISA -> (the x86 vector ABI's ISA letter, vector bits)
ISAS = {"sse4": ("b", 128), "avx2": ("d", 256), "avx512": ("e", 512)}
_NO_MEMORY = ("#llvm.memory_effects<other = none, argMem = none, inaccessibleMem = none, errnoMem = none, "
              "targetMem0 = none, targetMem1 = none>")
_WIDTH = {"f32": (32, "f"), "f64": (64, "")}  # element type -> (bits, libm name suffix)
# libm name -> (LIBMVEC key, element type): "cosf" -> ("cos", "f32")
_SCALAR = {base + suffix: (base, t) for base in LIBMVEC for t, (_, suffix) in _WIDTH.items()}


def vector_name(isa: str, scalar: str, lanes: int) -> str:
    """libmvec's name of `scalar` (a libm name) on `lanes` lanes: ("avx2", "cosf", 8) -> _ZGVdN8v_cosf."""
    return f"_ZGV{ISAS[isa][0]}N{lanes}{'v' * LIBMVEC[_SCALAR[scalar][0]]}_{scalar}"


def needed_libraries(module: ir.Module) -> list:
    """[libmvec] when `module` declares a vector function, else []."""
    for op in module.body.operations:
        if op.operation.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value.startswith("_ZGV"):
            return [libmvec_path()]
    return []


class CpuVectorMath(registry.CpuVectorMath):
    def run(self, module):
        isas = self._isas()
        if not isas:
            return
        with ir.Location.unknown(), ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
            body = module.regions[0].blocks[0]
            declared = {ir.StringAttr(op.attributes["sym_name"]).value: op
                        for op in body.operations if op.operation.name == "llvm.func"}
            used = self._calls_from_intrinsics(module, declared) | self._existing_calls(module, declared)
            vectors = []
            for name in sorted(used):
                vectors += self._annotate(declared[name], name, isas)
            if vectors:
                self._declare(body, vectors)

    def _isas(self) -> tuple:
        text = self.isa
        if text == "host":
            return host_isas()
        if text == "none":
            return ()
        isas = tuple(s.strip() for s in text.split(","))
        unknown = [s for s in isas if s not in ISAS]
        if unknown:
            raise PassError(f"pass '{self.name}': unknown isa {unknown}; use host, none or {sorted(ISAS)}")
        return isas

    def _calls_from_intrinsics(self, module, declared) -> dict:
        """Each `llvm.intr.<f>` on a scalar f32/f64 named in LIBMVEC becomes `llvm.call @<f>[f]`."""
        found = set()
        for op in ops_named(module, {f"llvm.intr.{base}" for base in LIBMVEC}):
            if len(op.results) != 1 or str(op.results[0].type) not in _WIDTH:
                continue
            base = op.name.removeprefix("llvm.intr.")
            t = op.results[0].type
            name = base + _WIDTH[str(t)][1]
            if name not in declared:
                declared[name] = llvm.declare_function(name, ir.TypeAttr.get(ir.Type.parse(
                    f"!llvm.func<{t}({', '.join([str(t)] * LIBMVEC[base])})>")), sym_visibility="private")
            with ir.InsertionPoint(op), op.location:
                call = llvm.call(t, list(op.operands), [], [], callee=ir.FlatSymbolRefAttr.get(name))
            op.results[0].replace_all_uses_with(call)
            op.erase()
            found.add(name)
        return found

    def _existing_calls(self, module, declared) -> dict:
        """`llvm.call @erff` and the like, left by convert-math-to-libm."""
        found = set()
        for op in ops_named(module, {"llvm.call"}):
            if "callee" in op.attributes and len(op.results) == 1:
                name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                if name in declared and _SCALAR.get(name, (None, None))[1] == str(op.results[0].type):
                    found.add(name)
        return found

    def _annotate(self, decl, name, isas) -> list:
        """Marks `decl` pure with its vector variants; returns (vector name, lanes, type, nargs) to declare."""
        base, type_name = _SCALAR[name]
        nargs, bits = LIBMVEC[base], _WIDTH[type_name][0]
        variants = [(vector_name(isa, name, ISAS[isa][1] // bits), ISAS[isa][1] // bits) for isa in isas]
        abi = ",".join(f"_ZGV_LLVM_N{lanes}{'v' * nargs}_{name}({v})" for v, lanes in variants)
        decl.attributes["passthrough"] = ir.Attribute.parse(
            f'["nounwind", "willreturn", ["vector-function-abi-variant", "{abi}"]]')
        decl.attributes["memory_effects"] = ir.Attribute.parse(_NO_MEMORY)
        return [(v, lanes, type_name, nargs) for v, lanes in variants]

    def _declare(self, body, vectors) -> None:
        decls = "\n".join(
            f"llvm.func @{v}({', '.join([f'vector<{lanes}x{t}>'] * nargs)}) -> vector<{lanes}x{t}> attributes "
            f"{{memory_effects = {_NO_MEMORY}, "
            f"passthrough = [\"nounwind\", \"willreturn\"], sym_visibility = \"private\"}}"
            for v, lanes, t, nargs in vectors)
        refs = "\n".join(f"%a{i} = llvm.mlir.addressof @{v} : !llvm.ptr\n"
                         f"%u{i + 1} = llvm.insertvalue %a{i}, %u{i}[{i}] : !llvm.array<{len(vectors)} x ptr>"
                         for i, (v, *_) in enumerate(vectors))
        # the vector functions are unused until the vectoriser runs: llvm.compiler.used keeps them (as LLVM's
        # InjectTLIMappings does)
        text = (f"{decls}\nllvm.mlir.global appending @llvm.compiler.used() {{section = \"llvm.metadata\"}} : "
                f"!llvm.array<{len(vectors)} x ptr> {{\n%u0 = llvm.mlir.undef : !llvm.array<{len(vectors)} x ptr>\n"
                f"{refs}\nllvm.return %u{len(vectors)} : !llvm.array<{len(vectors)} x ptr>\n}}")
        parsed = ir.Module.parse(text)
        for op in list(parsed.body.operations):
            op.detach_from_parent()
            body.append(op)
