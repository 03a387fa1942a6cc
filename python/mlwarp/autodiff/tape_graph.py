"""`Tape.visualize()`: the recorded launches as a GraphViz graph, as Warp draws them.

A launch is a box named by its kernel; an array is an ellipse; an edge runs from each array a launch reads to the
launch, and from the launch to each array it writes (the compiled kernel's own account of its array accesses,
compiler/array_access.py, so an array passed as an input and written is drawn as written). The tape's scopes
(`record_scope_begin/end`) become nested clusters; with `simplify_graph` a block of launches repeated back to back
(the same kernels on the same arrays) is drawn once, in a cluster labelled "repeated Nx". Arrays no launch writes
are hidden with `hide_readonly_arrays` unless listed in `track_inputs`/`track_outputs`.

An array is labelled from `array_labels`, else by the kernel parameter it was passed as (the longest such name
with `choose_longest_node_name`, else the first); its tooltip gives its dtype and shape."""

from __future__ import annotations

from mlwarp.core import types as wt
from mlwarp.arrays.array import array
from mlwarp.launching.debug import for_launch
from mlwarp.autodiff.overwrites import _resolve


def _quote(text) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _arrays_of(value, path=()):
    """The arrays an argument holds: itself, or its struct fields' (recursively)."""
    if isinstance(value, array) and not value.is_annotation:
        yield value, path
    elif getattr(value, "_wp_indexed_", False):
        yield from _arrays_of(value.data, path)
    elif value is not None and wt.is_struct(type(value)):
        for name, _ in type(value)._wp_fields_:
            yield from _arrays_of(getattr(value, name), (*path, name))


class _Launch:
    def __init__(self, index, entry):
        self.index = index
        kind = entry[0]
        self.reads, self.writes, self.names = [], [], {}  # arrays; id(array) -> parameter names
        if kind == "func":
            _, backward, arrays = entry
            self.label = getattr(backward, "__name__", "function")
            self.tooltip = "recorded function"
            self.reads = self.writes = [a for a in arrays if isinstance(a, array)]
            self.key = ("func", self.label, tuple(id(a) for a in self.reads))
            return
        _, kernel, dims, inputs, outputs, device = entry
        args = list(inputs) + list(outputs)
        names = list(getattr(kernel, "arg_names", []))
        self.label = kernel.key
        self.tooltip = f"dim={tuple(dims)}, device={device}"
        access = self._access(kernel, device)
        for k, value in enumerate(args):
            for a, path in _arrays_of(value):
                name = ".".join([names[k] if k < len(names) else f"arg{k}", *path])
                self.names.setdefault(id(a), []).append(name)
        if access is None:  # unknown (a build that records none): inputs read, outputs written, as given
            self.reads = [a for v in inputs for a, _ in _arrays_of(v)]
            self.writes = [a for v in outputs for a, _ in _arrays_of(v)]
        else:
            def named(key):
                return [a for p in access.get(key, ()) if p[0] < len(args) for a in _resolve(args[p[0]], p[1:])]

            self.writes = _unique(named("writes"))
            self.reads = _unique(named("reads_first") + named("reads_after"))
        self.key = ("launch", kernel.key, tuple(dims), tuple(id(a) for a in self.reads),
                    tuple(id(a) for a in self.writes))

    @staticmethod
    def _access(kernel, device):
        try:
            meta = getattr(for_launch(kernel).compiled(device), "meta", None) or {}
        except Exception:  # noqa: BLE001  (drawing never fails on a kernel that no longer builds)
            return None
        return meta.get("array_access")


def _unique(arrays):
    seen, out = set(), []
    for a in arrays:
        if id(a) not in seen:
            seen.add(id(a))
            out.append(a)
    return out


def _repeats(items, start):
    """(block length, count) of the longest run of one block repeated from `start`, preferring more coverage;
    (1, 1) when nothing repeats."""
    best = (1, 1)
    n = len(items) - start
    for length in range(1, n // 2 + 1):
        block = [x.key for x in items[start:start + length]]
        count = 1
        while start + (count + 1) * length <= len(items) and \
                [x.key for x in items[start + count * length:start + (count + 1) * length]] == block:
            count += 1
        if count > 1 and count * length > best[0] * best[1]:
            best = (length, count)
    return best


def tape_dot(tape, simplify_graph=True, hide_readonly_arrays=False, array_labels=None, choose_longest_node_name=True,
             ignore_graph_scopes=False, track_inputs=None, track_outputs=None, track_input_names=None,
             track_output_names=None, graph_direction="LR") -> str:
    launches = [_Launch(k, e) for k, e in enumerate(tape.launches)]
    labels = {id(a): str(name) for a, name in (array_labels or {}).items()}
    for arrays, names in ((track_inputs or [], track_input_names or []), (track_outputs or [], track_output_names or [])):
        for a, name in zip(arrays, names):
            labels.setdefault(id(a), str(name))
    tracked = {id(a) for a in (track_inputs or []) + (track_outputs or [])}
    written = {id(a) for launch in launches for a in launch.writes}
    arrays, uses = {}, {}
    for launch in launches:
        for a in launch.reads + launch.writes:
            arrays.setdefault(id(a), a)
        for key, names in launch.names.items():
            uses.setdefault(key, []).extend(names)
    for a in (track_inputs or []) + (track_outputs or []):
        arrays.setdefault(id(a), a)
    shown = {k for k in arrays if not hide_readonly_arrays or k in written or k in tracked}
    node = {key: f"a{n}" for n, key in enumerate(arrays)}  # first seen, first numbered

    lines = ["digraph Tape {", f"  rankdir={_quote(graph_direction)};",
             '  node [fontname="Helvetica"]; edge [fontname="Helvetica"];']
    for key in (k for k in arrays if k in shown):
        a = arrays[key]
        if key in labels:
            label = labels[key]
        else:
            names = uses.get(key) or [f"array {node[key][1:]}"]
            label = max(names, key=len) if choose_longest_node_name else names[0]
        tooltip = f"array: dtype={wt.type_name(a.dtype)}, shape={tuple(a.shape)}"
        lines.append(f"  {node[key]} [label={_quote(label)}, tooltip={_quote(tooltip)}, shape=ellipse];")

    scope_events = {} if ignore_graph_scopes else _scope_events(tape.scopes)
    body, depth, cluster = [], 1, [0]

    def emit(text):
        body.append("  " * depth + text)

    def open_cluster(label, style):
        nonlocal depth
        cluster[0] += 1
        emit(f"subgraph cluster_{cluster[0]} {{")
        depth += 1
        emit(f"label={_quote(label)}; style={style};")

    def close_cluster():
        nonlocal depth
        depth -= 1
        emit("}")

    def draw(launch):
        emit(f"l{launch.index} [label={_quote(launch.label)}, tooltip={_quote(launch.tooltip)}, shape=box, "
             f"style=filled, fillcolor=lightgray];")

    k = 0
    while k < len(launches):
        for event in scope_events.get(k, ()):
            open_cluster(event, "rounded") if event is not None else close_cluster()
        stop = min([s for s in scope_events if s > k] + [len(launches)])  # a block never crosses a scope
        length, count = _repeats(launches[:stop], k) if simplify_graph else (1, 1)
        if count > 1:
            open_cluster(f"repeated {count}x", "dashed")
            for launch in launches[k:k + length]:
                draw(launch)
            close_cluster()
        else:
            draw(launches[k])
        for launch in launches[k:k + length * count]:  # the repeats' edges are the drawn block's
            launch.drawn_as = launches[k + (launch.index - k) % length].index
        k += length * count
    for event in scope_events.get(len(launches), ()):
        if event is None:
            close_cluster()
    while depth > 1:  # scopes left open
        close_cluster()
    lines += body

    edges = set()
    for launch in launches:
        box = f"l{launch.drawn_as}"
        edges.update((node[id(a)], box) for a in launch.reads if id(a) in shown)
        edges.update((box, node[id(a)]) for a in launch.writes if id(a) in shown)
    lines += [f"  {src} -> {dst};" for src, dst in sorted(edges)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _scope_events(scopes) -> dict:
    """launch index -> the scope openings (their names) and closings (None) before it, in order."""
    events = {}
    for index, name, _ in scopes:
        events.setdefault(index, []).append(name)
    return events
