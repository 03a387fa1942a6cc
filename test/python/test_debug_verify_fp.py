"""wp.config.verify_fp: after each launch, a NaN or Inf in a float array argument raises, naming the kernel
and the argument."""

import re

import numpy as np
import pytest

import mlwarp as wp


@pytest.fixture
def verify_fp():
    wp.config.verify_fp = True
    try:
        yield
    finally:
        wp.config.verify_fp = False


@wp.kernel
def divide(a: wp.array(dtype=wp.float32), d: float, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = a[i] / d


@wp.kernel
def log_of(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64), counts: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.log(a[i])
    counts[i] = i


def test_nan_in_an_output_names_kernel_and_argument(verify_fp):
    a = wp.array(np.array([0, 1, 2], dtype=np.float32))
    out = wp.zeros(3, dtype=wp.float32)
    with pytest.raises(wp.FloatingPointCheckError, match=re.escape(
            "kernel 'divide': argument 'out' holds a non-finite value after the launch (nan at index [0]; "
            "3 non-finite element(s))")):
        wp.launch(divide, 3, inputs=[a, 0.0], outputs=[out])


def test_inf_in_a_float64_output(verify_fp):
    a = wp.array(np.array([1.0, 2.0, 0.0, 0.0]))
    out = wp.zeros(4, dtype=wp.float64)
    counts = wp.zeros(4, dtype=wp.int32)
    with pytest.raises(wp.FloatingPointCheckError, match=re.escape(
            "kernel 'log_of': argument 'out' holds a non-finite value after the launch (-inf at index [2]; "
            "2 non-finite element(s))")):
        wp.launch(log_of, 4, inputs=[a], outputs=[out, counts])


def test_finite_results_pass_and_verify_fp_off_checks_nothing(verify_fp):
    a = wp.array(np.array([1, 4, 2], dtype=np.float32))
    out = wp.zeros(3, dtype=wp.float32)
    wp.launch(divide, 3, inputs=[a, 2.0], outputs=[out])
    np.testing.assert_array_equal(out.numpy(), [0.5, 2, 1])
    wp.config.verify_fp = False
    wp.launch(divide, 3, inputs=[a, 0.0], outputs=[out])
    assert np.isinf(out.numpy()).all()
