"""wp.Kernel(func, code_transformers=[...], source=...): Warp's way for libraries to compile a function through
AST transformers or from generated source. They belong to the kernel, not to the function (values checked
under warp-lang 1.19)."""

import ast

import numpy as np

import mlwarp as wp


class AddToSub(ast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Add):
            node.op = ast.Sub()
        return node


def raw(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] + 10.0


def test_transformers_change_the_kernel_and_not_the_function():
    a, out = wp.array(np.array([1.0, 2.0], np.float32)), wp.zeros(2)
    transformed = wp.Kernel(raw, module=wp.get_module("code_transformers_minus"), code_transformers=[AddToSub()])
    wp.launch(transformed, 2, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), [-9.0, -8.0])
    plain = wp.Kernel(raw, module=wp.get_module("code_transformers_plain"))
    wp.launch(plain, 2, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), [11.0, 12.0])


def placeholder(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    pass


GENERATED = """
def placeholder(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * SCALE
"""
SCALE = 3.0


def test_a_kernel_from_generated_source():
    a, out = wp.array(np.array([1.0, 2.0], np.float32)), wp.zeros(2)
    k = wp.Kernel(placeholder, module=wp.get_module("code_transformers_source"), source=GENERATED)
    wp.launch(k, 2, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), [3.0, 6.0])


def test_transformed_and_plain_kernels_have_different_cache_keys():
    transformed = wp.Kernel(raw, module=wp.get_module("code_transformers_keys"), code_transformers=[AddToSub()])
    plain = wp.Kernel(raw, module=wp.get_module("code_transformers_keys2"))
    assert transformed.cache_key("cpu") != plain.cache_key("cpu")
