"""wp.Launch(kernel, device): Warp's public constructor of a recorded launch. Its parameters start as null arrays,
zeros (composites all-zero, quaternions and transforms too) and default structs, its dim as 0."""
import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def _arange(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = i


@wp.kernel
def _composites(v: wp.vec3, m: wp.mat22, q: wp.quat, t: wp.transform, s: float, n: int, out: wp.array(dtype=float)):
    out[0] = v[0] + v[1] + v[2] + m[0, 0] + m[1, 1] + s + float(n)
    out[1] = q[0] + q[1] + q[2] + q[3]
    out[2] = t[0] + t[3] + t[6]


def test_default_constructed_launch_runs_after_its_parameters_are_set():
    out = wp.zeros(10, dtype=int)
    cmd = wp.Launch(_arange, "cpu")
    cmd.launch()  # dim 0: nothing runs (and the null array is not touched)
    cmd.set_dim(5)
    cmd.set_param_by_name("out", out)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 3, 4, 0, 0, 0, 0, 0])
    cmd.set_dim(10)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.arange(10))


def test_composite_parameters_default_to_zero():
    out = wp.full(3, -1.0, dtype=float)
    cmd = wp.Launch(_composites, wp.get_device("cpu"))
    cmd.set_param_by_name("out", out)
    cmd.set_dim(1)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0, 0.0])
    cmd.set_param_by_name("v", wp.vec3(1.0, 2.0, 3.0))
    cmd.set_param_by_name("n", 4)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [10.0, 0.0, 0.0])


def test_a_single_value_for_a_composite_is_refused_when_set():
    cmd = wp.Launch(_composites, None)
    for setter in (lambda: cmd.set_param_at_index(0, 123), lambda: cmd.set_param_by_name("v", 123)):
        with pytest.raises(wp.LaunchError) as e:
            setter()
        assert str(e.value) == ("Error launching kernel '_composites', argument 'v' expects vec3f but got a single "
                                "value of type int. Construct the value explicitly, e.g.: vec3f(...).")


@wp.kernel
def _square(input: wp.array(dtype=float), output: wp.array(dtype=float)):
    i = wp.tid()
    output[i] = input[i] * input[i]


def test_adjoint_launch_with_null_adjoints_uses_the_arrays_grads():
    # as Warp: a None adjoint array falls back to the array's own .grad
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.empty_like(x)
    y.grad.fill_(1.0)
    wp.launch(_square, 3, inputs=[x, y], adj_inputs=[None, None], adjoint=True)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_recorded_adjoint_launch_takes_adjoint_parameters():
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.empty_like(x)
    y.grad.fill_(1.0)
    cmd = wp.Launch(_square, "cpu", adjoint=True)
    cmd.set_param_by_name("input", x)
    cmd.set_param_by_name("output", y)
    cmd.set_dim(3)
    cmd.launch()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    a = wp.array([4.0, 5.0, 6.0, 7.0], dtype=float)
    a_grad, b, b_grad = wp.zeros_like(a), wp.empty_like(a), wp.full(4, 1.0, dtype=float)
    cmd.set_param_by_name("input", a)
    cmd.set_param_by_name("output", b)
    cmd.set_param_by_name("input", a_grad, adjoint=True)
    cmd.set_param_by_name("output", b_grad, adjoint=True)
    cmd.set_dim(4)
    cmd.launch()
    np.testing.assert_array_equal(a_grad.numpy(), [8.0, 10.0, 12.0, 14.0])  # 2 * a


def test_adjoint_parameters_of_a_forward_replay_are_refused():
    cmd = wp.Launch(_composites, "cpu")
    with pytest.raises(wp.LaunchError) as e:
        cmd.set_param_by_name("v", wp.vec3(), adjoint=True)
    assert str(e.value) == ("Error launching kernel '_composites': adjoint parameters belong to an adjoint launch "
                            "(adjoint=True)")
