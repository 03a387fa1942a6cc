"""The tables of docs/compiler.md that come from the code: every mlwarp pass (passes/registry.py) and every
stage of the release tables (compiler/targets/) as pipeline text. test/python/test_pipeline_text.py fails when
the document differs; `python -m mlwarp.tools.doc_tables docs/compiler.md` rewrites them in place (between
their `<!-- generated: ... -->` and `<!-- end generated -->` lines). Imports no MLIR until a table is built."""

from __future__ import annotations

import re
import sys

from mlwarp.compiler.passes.registry import PASSES, declared
from mlwarp.compiler.pipeline_text import format_pipeline
from mlwarp.compiler.targets import TARGETS, STAGE_VARIANTS, stage_points, stage_table

_MODULE_PREFIX = "mlwarp.compiler."


def _value(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def pass_table_markdown() -> str:
    """One row per pass: name, the file that implements it, its options with their defaults, its description."""
    rows = ["| pass | file | options | what it does |", "| --- | --- | --- | --- |"]
    for name in sorted(PASSES):
        cls = declared(name)
        module = PASSES[name][0]
        path = module[len(_MODULE_PREFIX):].replace(".", "/") + ".py" if module.startswith(_MODULE_PREFIX) else module
        defaults = cls()
        options = ", ".join(f"`{k}={_value(getattr(defaults, f.name))}`" for k, f in cls.option_fields().items()) or "-"
        rows.append(f"| `{name}` | `{path}` | {options} | {cls.description} |")
    return "\n".join(rows) + "\n"


def stage_table_markdown() -> str:
    """One row per IR stage (targets.stage_points): each target's passes as pipeline text, from the release table
    (a stage only a debug build has: from the debug table); `only_if` stages say which modules run them."""
    variants = {t: [stage_table(t, o) for o in reversed(STAGE_VARIANTS)] for t in TARGETS}  # release first
    names = list(dict.fromkeys(p for t in TARGETS for p in stage_points(t)))
    rows = ["| stage | " + " | ".join(TARGETS) + " |", "| --- |" + " --- |" * len(TARGETS)]
    for name in names:
        cells = []
        for t in TARGETS:
            found = [(i, s) for i, table in enumerate(variants[t]) for s in table if s.name == name]
            if not found:
                cells.append("-")
                continue
            i, stage = found[0]
            when = ("debug builds: " if i else "") + (f"modules marked `{stage.only_if}`: " if stage.only_if else "")
            passes = format_pipeline(stage.passes, anchor=False)
            cells.append(when + (f"`{passes}`" if passes else "no passes (the frontend's output)"))
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


GENERATED = {"passes": pass_table_markdown, "stages": stage_table_markdown}
_BLOCK = re.compile(r"(<!-- generated: (\w+)[^\n]*-->\n)(.*?)(<!-- end generated -->)", re.S)


def regenerate(text: str) -> str:
    """The document with each generated block replaced by its table as the code makes it now."""
    return _BLOCK.sub(lambda m: m.group(1) + GENERATED[m.group(2)]() + m.group(4), text)


def main(argv=None) -> int:
    (path,) = argv if argv is not None else sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(regenerate(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
