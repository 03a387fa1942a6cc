"""Tape.visualize(): the recorded launches as a GraphViz graph (Warp's API). The graph is checked by parsing its
edges and nodes: each launch reads the arrays it reads and writes the arrays it writes (by the kernel's code,
not by which list the array was passed in), scopes are clusters, repeated blocks are drawn once."""

import re

import numpy as np

import mlwarp as wp


@wp.kernel
def dot_product(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(z, 0, x[tid] * y[tid])


@wp.kernel
def double_into(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    dst[0] = src[0] * 2.0


def _graph(dot):
    nodes = dict(re.findall(r"^\s*(\w+) \[label=\"([^\"]*)\"", dot, re.M))
    edges = {(nodes[a], nodes[b]) for a, b in re.findall(r"^\s*(\w+) -> (\w+);", dot, re.M)}
    return nodes, edges


def _record():
    tape = wp.Tape()
    x = wp.array(np.ones(8, dtype=np.float32), requires_grad=True)
    y = wp.array(np.ones(8, dtype=np.float32), requires_grad=True)
    z = wp.zeros(1, dtype=float, requires_grad=True)
    w = wp.zeros(1, dtype=float, requires_grad=True)
    with tape:
        tape.record_scope_begin("my loop")
        for _ in range(16):
            wp.launch(dot_product, dim=8, inputs=[x, y], outputs=[z])
        tape.record_scope_end()
        wp.launch(double_into, dim=1, inputs=[z, w])  # w is written although passed as an input
    return tape, (x, y, z, w)


def test_graph_of_a_scoped_repeated_loop(tmp_path):
    tape, _ = _record()
    path = tmp_path / "tape.dot"
    dot = tape.visualize(str(path), simplify_graph=True)
    assert path.read_text() == dot and dot.startswith("digraph Tape {")
    assert "repeated 16x" in dot and "my loop" in dot and dot.count("dot_product") == 1
    nodes, edges = _graph(dot)
    # z is named by the longest parameter name it was passed as ("src" over "z")
    assert edges == {("x", "dot_product"), ("y", "dot_product"), ("dot_product", "src"), ("src", "double_into"),
                     ("double_into", "dst")}
    assert "array: dtype=float32, shape=(8,)" in dot


def test_unsimplified_graph_draws_every_launch_and_labels_arrays():
    tape, (x, y, z, w) = _record()
    dot = tape.visualize(simplify_graph=False, array_labels={w: "result"}, ignore_graph_scopes=True,
                         graph_direction="TB")
    nodes, edges = _graph(dot)
    assert list(nodes.values()).count("dot_product") == 16 and "repeated" not in dot and "my loop" not in dot
    assert ("double_into", "result") in edges and 'rankdir="TB"' in dot


def test_read_only_arrays_hidden_unless_tracked():
    tape, (x, y, z, w) = _record()
    nodes, _ = _graph(tape.visualize(hide_readonly_arrays=True))
    assert {"x", "y"}.isdisjoint(nodes.values()) and {"src", "dst"} <= set(nodes.values())
    nodes, _ = _graph(tape.visualize(hide_readonly_arrays=True, track_inputs=[x], track_input_names=["input x"]))
    assert "input x" in nodes.values() and "y" not in nodes.values()
