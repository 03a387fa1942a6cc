"""Warp's user guide as a specification: every Python block of Warp's documentation pages run under Warp and under
mlwarp, block by block, and their printed output and arrays compared. A client check, not a test (it needs
warp-lang and Warp's documentation sources, neither of which the repository holds):

    git --git-dir=/work/.mirror/NVIDIA+warp/repo archive HEAD docs | tar -x -C /tmp/warp-docs
    PYTHONPATH=$PWD/python .venv/bin/python bench/warp_docs_snippets.py table /tmp/warp-docs/docs \
        --warp-python /tmp/compatvenv/bin/python [--work /tmp/docsnip] [--pages runtime basics ...] [--verbose]

Blocks: `.. code:: python`, `.. code-block:: python`, `.. testcode::`, `.. doctest::` (`>>>` prompts stripped), a
directive with no language and `::` literal blocks (Sphinx highlights them as Python, Warp's `highlight_language`)
of the pages under `user_guide/` and `domain_modules/`. The blocks of a page run in order in one process, in one
namespace, as a reader pastes them, after Warp's `doctest_global_setup` (`import numpy as np`, `import warp as wp`,
`from typing import Any`); each block is written to a file first (kernels need their source). A block that raises
is recorded and the page goes on. The page is one module, as Sphinx's doctest runs a page: Warp builds a module's
kernels together, so a block whose kernel does not compile under Warp fails Warp's later launches of that page (the
tiles page's `compute`: 6 blocks), and a block's `wp.config` change holds for the kernels of later blocks (a module
per block would make differentiability's `wp.config.enable_backward = False` disable the rest of its page). Device strings "cuda"/"cuda:N" in a block become "cpu" (the checks run on a CPU);
numpy's global and `default_rng()` generators are seeded and `wp.empty`/`wp.empty_like` give zeroed memory, so that
both runs start from the same numbers; a block that ends the process (Warp's debug-mode `assert` aborts) is recorded
as an error and the page is run again without it. Under mlwarp,
`import warp` is mlwarp (bench/clients/warp_alias.py).

Per block: the output it printed (Python's and the kernels' `printf`, captured at the file descriptor) and the value
of every array (`wp.array`, numpy) in the namespace that the block made or changed. `table` compares the two runs:
a block that raises under Warp on a CPU (a fragment, a GPU-only API, an error the page shows) does not count; of
the others, a block matches when mlwarp ran it, printed the same lines (numbers within 1e-4 relative; module-load
and timing lines, addresses and kernel hashes left out) and made the same arrays (within 1e-4 of the array's
largest |value|). One page by hand: `... run mlwarp PAGE.json OUT.json` (what `table` starts per page).
`--only mlwarp` reruns one side and compares it with the other's results already in `--work` (`--only none`
compares only): an mlwarp tree's figures against one Warp run, with PYTHONPATH naming that tree's python/.
"""

import argparse
import concurrent.futures
import ctypes
import json
import os
import pathlib
import re
import resource
import signal
import subprocess
import sys
import tempfile
import traceback
import types

PAGE_DIRS = ("user_guide", "domain_modules")
PRELUDE = "from typing import Any\nimport numpy as np\nimport warp as wp\n"
BLOCK_TIMEOUT_S = 240
PAGE_TIMEOUT_S = 1500
MAX_PAGE_RESTARTS = 6
TOLERANCE = 1e-4
MAX_SAVED_ELEMENTS = 1 << 20
ADDRESS_SPACE_LIMIT = 8 << 30

_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+(?P<kind>code-block|code|testcode|doctest|testsetup)::\s*(?P<lang>\S*)")
_LITERAL_INTRO = re.compile(r"::\s*$")
_PYTHON_LANGS = {"", "python", "py", "python3", "pycon"}


# ---------------------------------------------------------------------------------------------------- extraction


def _indented_body(lines, start, parent_indent):
    """The lines after `start` indented deeper than `parent_indent` (options and blank lines before it skipped)."""
    body = []
    i = start
    while i < len(lines) and (not lines[i].strip() or re.match(r"^\s+:[\w-]+:", lines[i])):
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= parent_indent:
            return [], i
        i += 1
    first = i
    while i < len(lines):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= parent_indent:
            break
        body.append(line)
        i += 1
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return [], first
    indent = min(len(l) - len(l.lstrip()) for l in body if l.strip())
    return [l[indent:] for l in body], first


def _strip_prompts(code: str) -> str:
    if not any(l.startswith(">>>") for l in code.splitlines()):
        return code
    out = []
    for line in code.splitlines():
        if line.startswith(">>> ") or line == ">>>":
            out.append(line[4:])
        elif line.startswith("... ") or line == "...":
            out.append(line[4:])
    return "\n".join(out)


def extract_page(text: str):
    """[(first line number, kind, code)] of the Python blocks of one reStructuredText page, in order."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        indent = len(line) - len(line.lstrip())
        if directive:
            body, first = _indented_body(lines, i + 1, indent)
            if directive["lang"] in _PYTHON_LANGS and body:
                blocks.append((first + 1, directive["kind"], _strip_prompts("\n".join(body))))
            i = max(first + len(body), i + 1)
            continue
        if _LITERAL_INTRO.search(line) and not line.lstrip().startswith(".."):
            body, first = _indented_body(lines, i + 1, indent)
            if body:
                blocks.append((first + 1, "literal", _strip_prompts("\n".join(body))))
                i = first + len(body)
                continue
        i += 1
    return blocks


def _markdown_blocks(text: str):
    blocks = []
    for match in re.finditer(r"^```(?:python|py)\s*\n(.*?)^```", text, re.M | re.S):
        blocks.append((text[: match.start()].count("\n") + 2, "markdown", match.group(1)))
    return blocks


def extract_docs(docs_root: pathlib.Path):
    pages = {}
    for sub in PAGE_DIRS:
        for path in sorted((docs_root / sub).rglob("*")):
            if path.suffix == ".rst":
                blocks = extract_page(path.read_text())
            elif path.suffix == ".md":
                blocks = _markdown_blocks(path.read_text())
            else:
                continue
            if blocks:
                pages[str(path.relative_to(docs_root).with_suffix(""))] = blocks
    return pages


_CUDA_LITERAL = re.compile(r"""(["'])cuda(?::\d+)?\1""")


def for_cpu(code: str) -> str:
    return _CUDA_LITERAL.sub('"cpu"', code)


# ---------------------------------------------------------------------------------------------------- one page


class _BlockTimeout(Exception):
    pass


def _seed_numpy():
    import numpy as np

    np.random.seed(0)
    original = np.random.default_rng
    if not getattr(original, "_docsnip_seeded", False):

        def default_rng(seed=None):
            return original(0 if seed is None else seed)

        default_rng._docsnip_seeded = True
        np.random.default_rng = default_rng


def _zeroed_empty(wp):
    """`wp.empty` leaves its memory as the allocator found it, which two runs cannot share: both runs zero it."""
    wp.empty = wp.zeros
    wp.empty_like = wp.zeros_like


def _array_values(namespace, previous):
    import numpy as np

    values = {}
    for name, value in list(namespace.items()):
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        try:
            if type(value).__name__ in ("array", "indexedarray") and hasattr(value, "numpy"):
                if value.size > MAX_SAVED_ELEMENTS:
                    continue
                data = np.array(value.numpy(), copy=True)
            elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.size <= MAX_SAVED_ELEMENTS:
                data = value.copy()
            else:
                continue
        except Exception:
            continue
        if data.dtype.kind not in "biuf" and not data.dtype.fields:
            continue
        if data.dtype.fields:
            continue
        if name in previous and previous[name].shape == data.shape and np.array_equal(previous[name], data):
            continue
        values[name] = data
    return values


def run_page(impl: str, page_path: str, out_path: str, skip=()) -> None:
    """Runs the page's blocks but those in `skip` (blocks that killed an earlier run of the page: Warp's debug-mode
    `assert` aborts the process), writing the index of each block it starts to OUT.started."""
    page = json.loads(pathlib.Path(page_path).read_text())
    started = open(out_path + ".started", "w", buffering=1)
    # a page may allocate past this machine (user_guide/basics fills a 16 GiB array): such a block fails alike in both
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    if impl == "mlwarp":
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "clients"))
        import warp_alias

        warp_alias.install()
    import numpy as np

    libc = ctypes.CDLL(None)
    capture = tempfile.TemporaryFile()
    saved_stdout = os.dup(1)
    os.dup2(capture.fileno(), 1)
    sys.stdout = os.fdopen(os.dup(1), "w", buffering=1)

    def captured_since(offset):
        sys.stdout.flush()
        libc.fflush(None)
        capture.seek(offset)
        data = capture.read()
        capture.seek(0, 2)
        return data.decode(errors="replace"), offset + len(data)

    module = types.ModuleType("docpage")
    sys.modules["docpage"] = module
    namespace = module.__dict__
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="docsnip_"))
    os.chdir(workdir)
    _seed_numpy()
    exec(compile(PRELUDE, str(workdir / "prelude.py"), "exec"), namespace)
    _zeroed_empty(namespace["wp"])
    namespace["wp"].config.quiet = True
    namespace["wp"].config.log_level = getattr(namespace["wp"], "LOG_WARNING", 30)

    def on_alarm(signum, frame):
        raise _BlockTimeout(f"block ran past {BLOCK_TIMEOUT_S} s")

    signal.signal(signal.SIGALRM, on_alarm)
    offset = captured_since(0)[1]
    arrays = {}
    results = []
    saved = {}
    for index, (line, kind, code) in enumerate(page["blocks"]):
        source = workdir / f"block_{index:03d}_line{line}.py"
        source.write_text(for_cpu(code))
        if index in skip:
            results.append({"index": index, "line": line, "kind": kind, "status": "error",
                            "error": "ProcessDied: the block ended the process", "stdout": "", "arrays": []})
            continue
        started.write(f"{index}\n")
        status, error = "ok", None
        signal.alarm(BLOCK_TIMEOUT_S)
        try:
            exec(compile(source.read_text(), str(source), "exec"), namespace)
            wp = sys.modules.get("warp")
            if wp is not None and hasattr(wp, "synchronize"):
                wp.synchronize()
        except BaseException as exc:  # a block's SystemExit or KeyboardInterrupt is its result too
            status = "error"
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
            traceback.print_exc(file=sys.stderr)
        finally:
            signal.alarm(0)
        text, offset = captured_since(offset)
        values = _array_values(namespace, arrays)
        arrays.update(values)
        for name, data in values.items():
            saved[f"{index}:{name}"] = data
        results.append({"index": index, "line": line, "kind": kind, "status": status, "error": error,
                        "stdout": text, "arrays": sorted(values)})
    os.dup2(saved_stdout, 1)
    np.savez(out_path + ".npz", **saved)
    pathlib.Path(out_path).write_text(json.dumps(results))
    os._exit(0)  # leftover threads or streams of a snippet must not hang the page


# ---------------------------------------------------------------------------------------------------- comparison

_NOISE = [
    re.compile(r"^Module .* load on device"),
    re.compile(r"^Warp \d.* initialized"),
    re.compile(r"^\s*(CUDA Toolkit|Devices:|Kernel cache:|\"cpu\"|\"cuda)"),
    re.compile(r"\b(took|elapsed|time:?)\b.*\d+(\.\d+)?\s*(ms|s|us|µs|sec)", re.I),
]
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")
_VOLATILE = [re.compile(r"0x[0-9a-fA-F]{6,}"), re.compile(r"\b[0-9a-f]{7,}\b")]
# a class's module path is the implementation's (warp._src.types.array, mlwarp.arrays.array.array): its name is the API
_CLASS_PATH = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")


def _normalized_lines(text: str):
    lines = []
    for line in text.splitlines():
        if not line.strip() or any(p.search(line) for p in _NOISE):
            continue
        for pattern in _VOLATILE:
            line = pattern.sub("<id>", line)
        line = _CLASS_PATH.sub(r"<class \1>", line)
        lines.append(line.strip())
    return lines


def _same_text(warp_text: str, mlwarp_text: str) -> bool:
    a, b = _normalized_lines(warp_text), _normalized_lines(mlwarp_text)
    joined_a, joined_b = " ".join(a), " ".join(b)
    if joined_a == joined_b:
        return True
    if _NUMBER.sub("#", joined_a).replace(" ", "") != _NUMBER.sub("#", joined_b).replace(" ", ""):
        return False
    numbers_a, numbers_b = _NUMBER.findall(joined_a), _NUMBER.findall(joined_b)
    if len(numbers_a) != len(numbers_b):
        return False
    for x, y in zip(numbers_a, numbers_b):
        x, y = float(x), float(y)
        if x == y or (x != x and y != y):
            continue
        if abs(x - y) > TOLERANCE * max(abs(x), abs(y), 1e-6):
            return False
    return True


def _array_difference(warp_data, mlwarp_data):
    import numpy as np

    if warp_data.shape != mlwarp_data.shape:
        return f"shape {warp_data.shape} vs {mlwarp_data.shape}"
    a = warp_data.astype(np.float64)
    b = mlwarp_data.astype(np.float64)
    if np.array_equal(a, b, equal_nan=True):
        return None
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return "inf/nan differ"
    scale = max(np.abs(a[finite]).max(initial=0.0), 1e-6)
    err = np.abs(a[finite] - b[finite]).max(initial=0.0) / scale
    return None if err <= TOLERANCE else f"rel {err:.2e}"


def compare_page(warp_out: str, mlwarp_out: str):
    import numpy as np

    warp_blocks = json.loads(pathlib.Path(warp_out).read_text())
    mlwarp_blocks = json.loads(pathlib.Path(mlwarp_out).read_text())
    warp_arrays = np.load(warp_out + ".npz")
    mlwarp_arrays = np.load(mlwarp_out + ".npz")
    rows = []
    for w, m in zip(warp_blocks, mlwarp_blocks):
        row = {"line": w["line"], "kind": w["kind"]}
        if w["status"] != "ok":
            row["verdict"] = "warp-error"
            row["detail"] = w["error"]
            row["same_error"] = m["status"] != "ok" and m["error"].split(":")[0] == w["error"].split(":")[0]
        elif m["status"] != "ok":
            row["verdict"] = "mlwarp-error"
            row["detail"] = m["error"]
        elif not _same_text(w["stdout"], m["stdout"]):
            row["verdict"] = "stdout-differs"
            row["detail"] = {"warp": w["stdout"][-600:], "mlwarp": m["stdout"][-600:]}
        else:
            bad = []
            for name in w["arrays"]:
                key = f"{w['index']}:{name}"
                if key not in mlwarp_arrays.files:
                    bad.append(f"{name}: not made")
                    continue
                difference = _array_difference(warp_arrays[key], mlwarp_arrays[key])
                if difference:
                    bad.append(f"{name}: {difference}")
            row["verdict"] = "array-differs" if bad else "match"
            if bad:
                row["detail"] = bad
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------------- driver


def _run_one(python, impl, page_file, out_file, env):
    """Runs a page; when a block ends the process, runs the page again without it (and so on, a few times)."""
    if pathlib.Path(out_file).exists():
        pathlib.Path(out_file).unlink()
    skip = []
    log = []
    for _ in range(MAX_PAGE_RESTARTS):
        command = [python, os.path.abspath(__file__), "run", impl, page_file, out_file, "--skip", *map(str, skip)]
        try:
            proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=PAGE_TIMEOUT_S)
            log.append(proc.stderr + (f"\nexit status {proc.returncode}\n" if proc.returncode else ""))
        except subprocess.TimeoutExpired as exc:
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            log.append(f"page timed out after {PAGE_TIMEOUT_S} s\n{stderr}")
        if pathlib.Path(out_file).exists():
            break
        started = pathlib.Path(out_file + ".started").read_text().split()
        if not started:
            break
        skip.append(int(started[-1]))
    pathlib.Path(out_file + ".stderr").write_text("\n".join(log))
    return pathlib.Path(out_file).exists()


def table(args) -> int:
    pages = extract_docs(pathlib.Path(args.docs))
    if args.pages:
        pages = {k: v for k, v in pages.items() if any(k.endswith(p) for p in args.pages)}
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    env_mlwarp = dict(os.environ)
    env_warp = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env_warp["CUDA_VISIBLE_DEVICES"] = ""
    jobs = []
    for name, blocks in pages.items():
        stem = name.replace("/", "__")
        page_file = work / f"{stem}.page.json"
        page_file.write_text(json.dumps({"name": name, "blocks": blocks}))
        for impl, python, env in (("warp", args.warp_python, env_warp), ("mlwarp", sys.executable, env_mlwarp)):
            out_file = work / f"{stem}.{impl}.json"
            if (args.reuse and impl in args.reuse and out_file.exists()) or (args.only and impl != args.only):
                continue
            jobs.append((python, impl, str(page_file), str(out_file), env))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda job: _run_one(*job), jobs))

    totals = {"blocks": 0, "warp_ok": 0, "match": 0}
    report = {}
    print(f"{'page':58} {'blocks':>6} {'warp ok':>7} {'match':>5}")
    for name in pages:
        stem = name.replace("/", "__")
        warp_out, mlwarp_out = work / f"{stem}.warp.json", work / f"{stem}.mlwarp.json"
        if not warp_out.exists() or not mlwarp_out.exists():
            print(f"{name:58} page crashed: see {work}/{stem}.*.stderr")
            continue
        rows = compare_page(str(warp_out), str(mlwarp_out))
        report[name] = rows
        warp_ok = sum(r["verdict"] != "warp-error" for r in rows)
        match = sum(r["verdict"] == "match" for r in rows)
        totals["blocks"] += len(rows)
        totals["warp_ok"] += warp_ok
        totals["match"] += match
        print(f"{name:58} {len(rows):6} {warp_ok:7} {match:5}")
        for r in rows:
            if r["verdict"] not in ("match", "warp-error"):
                detail = r.get("detail")
                if not args.verbose and isinstance(detail, dict):
                    detail = "(output differs; --verbose)"
                print(f"    line {r['line']:5} {r['verdict']:15} {detail}")
    print(f"{'total':58} {totals['blocks']:6} {totals['warp_ok']:7} {totals['match']:5}")
    (work / "report.json").write_text(json.dumps(report, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table")
    t.add_argument("docs", help="Warp's docs/ folder (git archive of NVIDIA/warp)")
    t.add_argument("--warp-python", default="/tmp/compatvenv/bin/python")
    t.add_argument("--work", default="/tmp/docsnip")
    t.add_argument("--pages", nargs="*")
    t.add_argument("--jobs", type=int, default=2)
    t.add_argument("--reuse", nargs="*", default=[], help="impls whose earlier page results to keep (warp)")
    t.add_argument("--only", choices=["warp", "mlwarp", "none"], help="run one side or none: the results already in --work are compared")
    t.add_argument("--verbose", action="store_true")
    r = sub.add_parser("run")
    r.add_argument("impl", choices=["warp", "mlwarp"])
    r.add_argument("page")
    r.add_argument("out")
    r.add_argument("--skip", nargs="*", type=int, default=[])
    e = sub.add_parser("extract")
    e.add_argument("docs")
    args = parser.parse_args()
    if args.command == "run":
        run_page(args.impl, args.page, args.out, set(args.skip))
        return 0
    if args.command == "extract":
        pages = extract_docs(pathlib.Path(args.docs))
        for name, blocks in pages.items():
            print(f"{name}: {len(blocks)} blocks ({sum(k != 'literal' for _, k, _ in blocks)} directives)")
        print("total", sum(len(b) for b in pages.values()))
        return 0
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
