"""mlwarp-opt: exit codes and one-line errors of the installed command, and its pieces in process."""

import os
import subprocess
import sys

import pytest

from mlwarp.tools.opt import ToolError, parse_args, split_chunks
from mlwarp.compiler.pipeline_text import PipelineSyntaxError, parse_options, parse_pipeline

OPT = os.path.join(os.path.dirname(sys.executable), "mlwarp-opt")

GOOD = """func.func @f(%a: i32) -> i32 {
  %0 = arith.constant 0 : i32
  %1 = arith.addi %a, %0 : i32
  return %1 : i32
}
"""


def run_opt(*args, stdin=""):
    return subprocess.run([OPT, *args], input=stdin, capture_output=True, text=True)


# -- the installed command ------------------------------------------------------

def test_runs_upstream_pass_on_stdin():
    r = run_opt("--canonicalize", stdin=GOOD)
    assert (r.returncode, r.stderr) == (0, "")
    assert "arith.addi" not in r.stdout
    assert "return %arg0 : i32" in r.stdout


def test_unknown_pass_is_one_line_and_exit_1():
    r = run_opt("--no-such-pass", stdin=GOOD)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "mlwarp-opt: error: unknown pass 'no-such-pass'\n")


def test_bad_ir_names_stdin_line_and_column():
    r = run_opt(stdin="func.func @f() {\n  %0 = arith.addi %x : i32\n}\n")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "mlwarp-opt: error: <stdin>:2:21: expected ','\n"


def test_failing_mlwarp_pass_is_one_line_without_traceback(tmp_path):
    src = tmp_path / "k.mlir"
    src.write_text('func.func @k(%a: f32) attributes {warp.kernel} {\n'
                   '  %0 = "warp.sin"(%a) : (f32) -> f32\n  return\n}\n')
    r = run_opt(str(src), "--warp-cpu-entry")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"mlwarp-opt: error: {src}: pass 'warp-cpu-entry' failed: "
                        "kernel 'k' still has warp ops; lower builtins and arrays first\n")


def test_output_file_and_help(tmp_path):
    out = tmp_path / "out.mlir"
    r = run_opt("-", "-o", str(out), "--cse", stdin=GOOD)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert "func.func @f(%arg0: i32) -> i32" in out.read_text()
    r = run_opt("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: mlwarp-opt")


def test_list_passes_shows_every_registered_pass():
    from mlwarp.compiler.passes.registry import PASSES, pass_class

    r = run_opt("--list-passes")
    assert r.returncode == 0
    for name in PASSES:
        cls = pass_class(name)
        line = next(line for line in r.stdout.splitlines() if line.strip().startswith(f"--{name} "))
        assert line.split(None, 1)[1] == cls.description


# -- in process ----------------------------------------------------------------------

def test_args_keep_pass_order_and_options():
    opts = parse_args(["in.mlir", "--cse", "--canonicalize=max-iterations=2 top-down=false",
                       "--pass-pipeline", "builtin.module(cse)", "-o=out.mlir", "--split-input-file"])
    assert opts.input == "in.mlir" and opts.output == "out.mlir"
    assert opts.steps == [("pass", "cse", None), ("pass", "canonicalize", "max-iterations=2 top-down=false"),
                          ("pipeline", "builtin.module(cse)")]
    assert opts.flags == {"split-input-file"}


@pytest.mark.parametrize("argv, message", [
    (["a.mlir", "b.mlir"], "expected at most one input file, got 2: a.mlir b.mlir"),
    (["-o"], "option '-o' needs a value"),
    (["--split-input-file=yes"], "option '--split-input-file' takes no value"),
])
def test_bad_arguments(argv, message):
    with pytest.raises(ToolError, match=f"^{message}$"):
        parse_args(argv)


def test_pipeline_text_nesting_and_options():
    els = parse_pipeline('builtin.module(cse, func.func(canonicalize{max-iterations=3}), warp-x{a=1 b="p q"})')
    assert [(e.name, e.options, e.nested) for e in els] == [
        ("cse", None, None),
        ("func.func", None, "canonicalize{max-iterations=3}"),
        ("warp-x", 'a=1 b="p q"', None)]
    assert [e.name for e in parse_pipeline("a,b")] == ["a", "b"]
    assert parse_options('a=1 b="p q" c=x,y') == {"a": "1", "b": "p q", "c": "x,y"}


@pytest.mark.parametrize("text, message", [
    ("builtin.module(cse", "unterminated ')' in pass pipeline 'builtin.module(cse'"),
    ("cse)", "unbalanced ')' in pass pipeline 'cse)'"),
    ("func.func(cse)", "the pass pipeline must be anchored on 'builtin.module', not 'func.func'"),
    ("cse junk", "unexpected 'junk' after 'cse' in pass pipeline"),
])
def test_pipeline_text_errors(text, message):
    with pytest.raises(PipelineSyntaxError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_pipeline(text)


def test_option_without_value_is_refused():
    with pytest.raises(PipelineSyntaxError, match="^pass option 'verbose' must be written key=value$"):
        parse_options("verbose")


def test_split_chunks_keep_file_line_numbers():
    text = "a\n// -----\nb\nc\n  // ----- trailing\nd\n"
    assert split_chunks(text, split=True) == [("a\n", 0), ("\nb\nc\n", 1), ("\nd\n", 4)]
    assert split_chunks(text, split=False) == [(text, 0)]


def _raises_class():
    """A registry pass with a bug: the tool must report it as the pass's failure, not crash."""
    from dataclasses import dataclass

    from mlwarp.compiler.passes.registry import Pass

    @dataclass(frozen=True)
    class Raises(Pass):
        name = "test-raises"
        description = "raises KeyError"
        limit: int = 4
        fast: bool = False

        def run(self, module):
            raise KeyError("missing")

    return Raises


_Raises = None  # built on first use: the registry module imports MLIR


def _register_raises(monkeypatch):
    global _Raises
    from mlwarp.compiler.passes.registry import PASSES

    if _Raises is None:
        _Raises = _raises_class()
    monkeypatch.setitem(PASSES, "test-raises", (__name__, "_Raises"))


def test_python_exception_in_a_pass_becomes_a_pass_failure(monkeypatch):
    from mlwarp.tools.driver import OptDriver

    _register_raises(monkeypatch)
    driver = OptDriver([("pass", "cse", None), ("pass", "test-raises", "limit=2")], "in.mlir")
    with pytest.raises(ToolError, match=r"^in.mlir: pass 'test-raises' failed: KeyError: 'missing'$"):
        driver.process(GOOD)


def test_list_passes_prints_options_with_defaults(monkeypatch):
    from mlwarp.tools.opt import list_passes

    _register_raises(monkeypatch)
    lines = list_passes().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("--test-raises "))
    assert [line.strip() for line in lines[at + 1:at + 3]] == ["limit=4  (int, default)", "fast=false  (bool, default)"]


def test_split_input_reports_lines_of_the_whole_file():
    from mlwarp.tools.driver import OptDriver

    driver = OptDriver([], "f.mlir")
    text = "func.func @a() { return }\n// -----\n\nfunc.func @b() {\n  return %x : i32\n}\n"
    (first, _), (second, offset) = split_chunks(text, split=True)
    assert "func.func @a()" in driver.process(first)
    with pytest.raises(ToolError, match=r"^f.mlir:5:10: use of undeclared SSA value name$"):
        driver.process(second, offset)
