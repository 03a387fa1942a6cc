"""mlwarp-opt: mlir-opt for mlwarp. Reads MLIR (a file or stdin), runs passes, prints the result.

    mlwarp-opt in.mlir --convert-warp-builtins-to-arith --canonicalize
    mlwarp-opt in.mlir --pass-pipeline='builtin.module(warp-cpu-entry, cse)'
    mlwarp-opt --list-passes

Passes are mlwarp's (compiler/passes/registry.PASSES) or any upstream MLIR pass,
given as flags in the order they run (`--name` or `--name="opt=1 other=2"`) or as
a `--pass-pipeline`. Every failure is one line on stderr and exit status 1.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

from mlwarp.compiler.passes.registry import PASSES, declared
from mlwarp.compiler.pipeline_text import format_pipeline

from .errors import DiagnosticsError, ToolError
from .stages import targets
from .verify_diagnostics import expectations, mismatches

USAGE = """\
usage: mlwarp-opt [options] [input.mlir | -]

Reads MLIR from a file (or stdin), runs the passes in the order given, prints the result.

options:
  --<pass>[=<options>]        run a pass: mlwarp's (see --list-passes) or any upstream MLIR
                              pass; options as in --canonicalize="max-iterations=3 top-down=false"
  --pass-pipeline=<pipeline>  run a textual pipeline, e.g. 'builtin.module(warp-cpu-entry,cse)'
  --mlwarp-pipeline=<target>[:<stage>]
                              run the compiler's own stages for <target> (cpu, cuda), all of
                              them or up to and including <stage> (see --list-passes)
  -o <file>                   write the output to <file> (default: stdout)
  --split-input-file          process each chunk between '// -----' lines independently
  --mlir-print-ir-after-all   print the IR after each pass on stderr
  --mlir-print-op-generic     print operations in the generic form
  --mlir-print-debuginfo      print the locations of operations
  --allow-unregistered-dialect  accept ops of dialects that are not loaded
  --verify-diagnostics        check the errors against the input's `// expected-error {{...}}`
                              comments (also @+N, @-N, @above, @below); exit status 0 when they agree
  --list-passes               list mlwarp's passes with their options
  -h, --help                  show this help
"""

SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(r"^[ \t]*// -----[^\n]*$", re.MULTILINE)
_FLAGS = {"split-input-file", "mlir-print-ir-after-all", "mlir-print-op-generic", "mlir-print-debuginfo",
          "allow-unregistered-dialect", "verify-diagnostics", "list-passes", "help", "h"}


@dataclass
class Options:
    input: str = "-"
    output: str = "-"
    # in order: ("pass", name, options text | None), ("pipeline", text) or ("stages", "<target>[:<stage>]")
    steps: list = field(default_factory=list)
    flags: set = field(default_factory=set)


def parse_args(argv: list[str]) -> Options:
    opts, inputs, i = Options(), [], 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name in ("o", "pass-pipeline", "mlwarp-pipeline") and not eq:
            if i == len(argv):
                raise ToolError(f"option '{arg}' needs a value")
            value, i = argv[i], i + 1
        if name == "o":
            opts.output = value
        elif name == "pass-pipeline":
            opts.steps.append(("pipeline", value))
        elif name == "mlwarp-pipeline":
            opts.steps.append(("stages", value))
        elif name in _FLAGS:
            if eq:
                raise ToolError(f"option '--{name}' takes no value")
            opts.flags.add("help" if name == "h" else name)
        elif name:
            opts.steps.append(("pass", name, value if eq else None))
        else:
            raise ToolError(f"bad option '{arg}'")
    if len(inputs) > 1:
        raise ToolError(f"expected at most one input file, got {len(inputs)}: {' '.join(inputs)}")
    if inputs:
        opts.input = inputs[0]
    return opts


def list_passes() -> str:
    """Every mlwarp pass with its options and defaults, then each stage of the release tables as pipeline text
    that --pass-pipeline takes back (compiler/pipeline_text.py prints it)."""
    width = max(len(n) for n in PASSES) + 4
    lines = ["mlwarp passes (any upstream MLIR pass is accepted as well):"]
    for name in sorted(PASSES):
        cls = declared(name)
        lines.append(f"  --{name:<{width}}{cls.description}")
        defaults = cls()
        for key, field in cls.option_fields().items():
            default = getattr(defaults, field.name)
            shown = str(default).lower() if isinstance(default, bool) else default
            lines.append(f"      {key}={shown}  ({type(default).__name__}, default)")
    lines.append("")
    lines.append("compiler stages (--mlwarp-pipeline=<target>[:<stage>]; or their text as --pass-pipeline=...):")
    for target, stages in targets().items():
        for stage, passes in stages:
            lines.append(f"  {target}:{stage:<{width - len(target) - 1}}{format_pipeline(passes)}")
    return "\n".join(lines) + "\n"


def read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ToolError(f"cannot read '{path}': {e.strerror}") from None


def split_chunks(text: str, split: bool) -> list[tuple[str, int]]:
    """[(chunk text, number of lines before it)]; line numbers in messages stay those of the file."""
    if not split:
        return [(text, 0)]
    chunks, start = [], 0
    for m in _SPLIT_LINE.finditer(text):
        chunks.append((text[start:m.start()], text.count("\n", 0, start)))
        start = m.end()
    chunks.append((text[start:], text.count("\n", 0, start)))
    return chunks


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = run(argv)
    except ToolError as e:
        print(f"mlwarp-opt: error: {e}", file=sys.stderr)
        code = 1
    except BrokenPipeError:
        code = 1
    except KeyboardInterrupt:
        code = 130
    except Exception as e:  # a bug in mlwarp-opt itself: still one line, unless asked for the traceback
        if os.environ.get("MLWARP_OPT_TRACEBACK"):
            raise
        print(f"mlwarp-opt: error: internal error: {type(e).__name__}: {e} "
              f"(set MLWARP_OPT_TRACEBACK=1 for the traceback)", file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.exit(code)


def run(argv: list[str]) -> int:
    opts = parse_args(argv)
    if "help" in opts.flags:
        sys.stdout.write(USAGE)
        return 0
    if "list-passes" in opts.flags:
        sys.stdout.write(list_passes())
        return 0

    from .driver import OptDriver  # loads MLIR: only when there is IR to process

    input_name = "<stdin>" if opts.input == "-" else opts.input
    # The passes are checked before the input is read, as mlir-opt does.
    driver = OptDriver(opts.steps, input_name,
                       print_ir_after_all="mlir-print-ir-after-all" in opts.flags,
                       generic="mlir-print-op-generic" in opts.flags,
                       debug_info="mlir-print-debuginfo" in opts.flags,
                       allow_unregistered="allow-unregistered-dialect" in opts.flags)
    text = read_input(opts.input)
    outputs, failed = [], False
    split = "split-input-file" in opts.flags
    whole_file = opts.input if opts.input != "-" and not split else None
    verify = "verify-diagnostics" in opts.flags
    for chunk, line_offset in split_chunks(text, split):
        errors = []
        try:
            outputs.append(driver.process(chunk, line_offset, path=whole_file))
        except DiagnosticsError as e:
            if not verify:
                print(f"mlwarp-opt: error: {e}", file=sys.stderr)
                failed = True
            errors = e.errors
        except ToolError as e:
            if verify:  # (no location: cannot be expected)
                errors = [(None, str(e))]
            else:
                print(f"mlwarp-opt: error: {e}", file=sys.stderr)
                failed = True
        if verify:
            for line in mismatches(expectations(chunk, line_offset), errors, input_name):
                print(f"mlwarp-opt: error: {line}", file=sys.stderr)
                failed = True
    result = (SPLIT_MARKER + "\n").join(outputs)
    if opts.output == "-":
        sys.stdout.write(result)
    elif not failed:
        try:
            with open(opts.output, "w", encoding="utf-8") as f:
                f.write(result)
        except OSError as e:
            raise ToolError(f"cannot write '{opts.output}': {e.strerror}") from None
    return 1 if failed else 0


if __name__ == "__main__":
    main()
