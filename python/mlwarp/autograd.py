"""`wp.autograd` (`import warp.autograd` in Warp 1.19): checking the gradients of kernels and Tape recordings.

    jacobian(k, dim, inputs, outputs)     {(input index, output index): Jacobian}, by the adjoint kernel
    jacobian_fd(k, dim, inputs, outputs)  the same by central finite differences of forward launches
    gradcheck(k, dim, inputs, outputs)    True when the two agree (|AD - FD| <= atol + rtol |FD|, no NaN)
    gradcheck_tape(tape)                  gradcheck on every kernel launch a Tape recorded

`function` is a `@wp.kernel` (its first `len(inputs)` arguments are the inputs, the rest the outputs) or a
Python function of `inputs` that launches kernels and returns an array or a list of arrays. Only arrays with
`requires_grad=True` take part. A Jacobian of input `x` and output `y` is an array of `x.dtype` and shape
(scalars of y, x.size): row r holds d y_r / d x over x's scalars (a vec3 input contributes 3 columns per
element); rows (AD) or columns (FD) beyond `max_outputs_per_var` / `max_inputs_per_var` stay NaN.

Built on wp.Tape and the adjoint launch (python/mlwarp/autodiff/tape.py, python/mlwarp/autodiff/adjoint.py): the AD Jacobian seeds one output
scalar's gradient with 1 per row and runs the tape backward. The perturbations, seeds and difference quotients
are written through the arrays' host views (numpy) instead of Warp's helper kernels: the same values, in the
same precision (the quotient in the output's, then cast to the input's dtype).

Where mlwarp differs from Warp: the error gradcheck raises names the first input/output pair that failed
(Warp's names the last pair it compared); between AD rows the tape's gradients are zeroed (`tape.zero()`), so
gradients of intermediate arrays of a Python function cannot leak from one row into the next.
`jacobian_plot` checks its arguments as Warp's does, then raises NotImplementedError (no plotting here).
"""

from __future__ import annotations

import inspect
import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, clone
from mlwarp.launching.cuda import get_preferred_device
from mlwarp.kernels.module import get_module_options
from mlwarp.kernels.kernel import Kernel
from mlwarp.launching.launch import launch, launch_dims
from mlwarp.runtime.abi import ArrayParam
from mlwarp.runtime.device import get_device
from mlwarp.autodiff.tape import Tape

__all__ = ["gradcheck", "gradcheck_tape", "jacobian", "jacobian_fd", "jacobian_plot"]

_BACKWARD_DISABLED = "Kernel must have backward pass enabled to compute Jacobians"
_NO_OUTPUTS = "A list of output arguments must be provided to compute kernel Jacobians"


def _is_kernel_backward_enabled(kernel) -> bool:
    """The kernel's own `enable_backward`, else its module's (`kernel.module.options`), else True."""
    own = kernel.options.get("enable_backward")
    if own is not None:
        return bool(own)
    options = getattr(getattr(kernel, "module", None), "options", None) or {}
    return bool(options.get("enable_backward", True))


# -- the scalars of an array ---------------------------------------------------------------------
def _check_scalarizable(a) -> None:
    t = a.dtype
    if not (t in wt.scalar_types or wt.composite_kind(t) in ("vec", "mat", "quat", "transform")):
        raise ValueError(f"Unsupported array dtype {wt.type_name(t)}: array to be flattened must be a "
                         f"scalar/vector/matrix array")


def _scalar_count(a) -> int:
    return a.size * int(np.prod(wt.inner_shape(a.dtype), dtype=np.int64))


def _read_scalars(a) -> np.ndarray:
    """A copy of the scalars of `a`, flattened row-major over its elements and their components."""
    _check_scalarizable(a)
    return np.array(a._values()).reshape(-1)


def _write_scalars(a, values) -> None:
    """Sets the scalars of `a` (a CPU array through its view, so a recording Tape sees no copy)."""
    if a.device.is_cpu:
        view = a._values()
        view[...] = np.asarray(values).reshape(view.shape)
    else:
        a.assign(np.asarray(values).reshape(a._values().shape))


def _add_to_scalar(a, i: int, delta: float) -> None:
    """a's scalar i += delta, in a's precision."""
    if a.device.is_cpu:
        view = a._values()
        view[np.unravel_index(i, view.shape)] += view.dtype.type(delta)
    else:
        host = np.array(a._values())
        host[np.unravel_index(i, host.shape)] += host.dtype.type(delta)
        a.assign(host)


def _jacobian_array(scalars: np.ndarray, input) -> array:
    """The (rows, input scalars) matrix as an array of the input's dtype and shape (rows, input.size)."""
    shape = (scalars.shape[0], input.size) + wt.inner_shape(input.dtype)
    return array(scalars.reshape(shape), dtype=input.dtype, device=input.device)


def _nan_matrix(rows: int, input) -> np.ndarray:
    return np.full((rows, _scalar_count(input)), np.nan, dtype=wt.numpy_dtype(input.dtype))


def _is_differentiable(value) -> bool:
    return isinstance(value, array) and not value.is_annotation and value.requires_grad


def zero_grads(arrays) -> None:
    """Zeroes the gradients of the arrays among `arrays` that have one."""
    for a in arrays:
        if _is_differentiable(a):
            a.grad.zero_()


def infer_device(values):
    """The device of the first array among `values` (or among a struct value's array fields), else the
    preferred device."""
    for v in values:
        if isinstance(v, array) and not v.is_annotation:
            return v.device
        if wt.is_struct(type(v)):
            for name, t in v._wp_fields_:
                field = getattr(v, name)
                if isinstance(field, array):
                    return field.device
    return get_preferred_device()


# -- restoring the inputs of a Python function ---------------------------------------------------
def _snapshot_array_inputs(inputs) -> list:
    """(host copy of the data, read flag) of each top-level array input; None for other inputs."""
    return [(np.array(x._values()), getattr(x, "_is_read", False)) if isinstance(x, array) else None
            for x in inputs]


def _restore_array_inputs(inputs, snapshot) -> None:
    """Writes the snapshot back: the data, and the read flag (wp.config.verify_autograd_array_access), so the
    check's own tape leaves no read marks but those a caller's pending tape made stay."""
    for x, s in zip(inputs, snapshot):
        if s is not None:
            data, was_read = s
            _write_scalars(x, data)
            x._is_read = was_read


def _eval_function(function, inputs, snapshot):
    """function(*inputs), restoring the inputs when it raises."""
    try:
        return function(*inputs)
    except BaseException:
        if snapshot is not None:
            _restore_array_inputs(inputs, snapshot)
        raise


def _as_outputs(outputs) -> list:
    return [outputs] if isinstance(outputs, array) else list(outputs)


class FunctionMetadata:
    """What the Jacobian functions know of the kernel or function checked: its key, the input and output
    labels (argument names; `output_<i>` for a Python function's results), strides and dtypes (None for
    arguments that are not arrays)."""

    def __init__(self, key=None, input_labels=None, output_labels=None, input_strides=None, output_strides=None,
                 input_dtypes=None, output_dtypes=None):
        self.key = key
        self.input_labels = input_labels
        self.output_labels = output_labels
        self.input_strides = input_strides
        self.output_strides = output_strides
        self.input_dtypes = input_dtypes
        self.output_dtypes = output_dtypes

    @property
    def is_empty(self) -> bool:
        return self.key is None

    def input_is_array(self, i: int) -> bool:
        return self.input_dtypes[i] is not None

    def output_is_array(self, i: int) -> bool:
        return self.output_dtypes[i] is not None

    def update_from_kernel(self, kernel, inputs) -> None:
        n = len(inputs)
        self.key = kernel.key
        self.input_labels = list(kernel.arg_names[:n])
        self.output_labels = list(kernel.arg_names[n:])
        self.input_strides, self.input_dtypes, self.output_strides, self.output_dtypes = [], [], [], []
        for p, value in zip(kernel.params[:n], inputs):
            is_arr = isinstance(p, ArrayParam)
            self.input_strides.append(getattr(value, "strides", None) if is_arr else None)
            self.input_dtypes.append(getattr(value, "dtype", p.dtype) if is_arr else None)
        for p in kernel.params[n:]:
            self.output_strides.append(None)
            self.output_dtypes.append(p.dtype if isinstance(p, ArrayParam) else None)

    def update_from_function(self, function, inputs, outputs=None) -> None:
        self.key = function.__name__
        self.input_labels = list(inspect.signature(function).parameters)
        if outputs is None:
            outputs = function(*inputs)
        outputs = _as_outputs(outputs)
        self.output_labels = [f"output_{i}" for i in range(len(outputs))]
        self.input_strides = [x.strides if isinstance(x, array) else None for x in inputs]
        self.input_dtypes = [x.dtype if isinstance(x, array) else None for x in inputs]
        self.output_strides = [y.strides if isinstance(y, array) else None for y in outputs]
        self.output_dtypes = [y.dtype if isinstance(y, array) else None for y in outputs]


def _resolve_mask(input_output_mask, metadata, n_inputs) -> set:
    """The (input index, output index) pairs of a mask given by indices or argument names."""
    names = metadata.input_labels + metadata.output_labels

    def index(name, offset=0):
        return name if isinstance(name, int) else names.index(name) + offset

    return {(index(i), index(o, -n_inputs)) for i, o in (input_output_mask or [])}


def _pairs(inputs, outputs, mask):
    """The differentiable (input index, output index) pairs, in Warp's order (inputs outer)."""
    for i, o in itertools.product(range(len(inputs)), range(len(outputs))):
        if mask and (i, o) not in mask:
            continue
        if _is_differentiable(inputs[i]) and _is_differentiable(outputs[o]):
            yield i, o


def _kernel_instance(kernel, args):
    """A generic kernel's instance for these arguments (what wp.launch would run)."""
    if getattr(kernel, "is_generic", False):
        return kernel.instance_for(list(args))
    return kernel


def _record_kernel(tape, kernel, dim, inputs, outputs, device, max_blocks, block_dim) -> None:
    """Records the launch on `tape` without running it (Warp's Tape.record_launch)."""
    inputs, outputs = list(inputs), list(outputs)
    instance = _kernel_instance(kernel, inputs + outputs)
    tape.launches.append(("launch", instance, launch_dims(dim, instance), inputs, outputs, get_device(device)))


def _launched_kernels(tape):
    for entry in tape.launches:
        if isinstance(entry, tuple) and entry and entry[0] == "launch":
            yield entry[1]


# -- the Jacobians -------------------------------------------------------------------------------
def jacobian(function: Kernel | Callable, dim=None, inputs: Sequence | None = None,
             outputs: Sequence | None = None, input_output_mask=None, device=None, max_blocks=0,
             block_dim: int | None = None, max_outputs_per_var=-1, plot_jacobians=False,
             metadata: FunctionMetadata | None = None, restore_inputs: bool = True) -> dict:
    """The Jacobians of `function` (a kernel, or a Python function launching kernels) by automatic
    differentiation: {(input index, output index): array} for every differentiable pair (`input_output_mask`:
    only these pairs, by index or argument name). A kernel is recorded on a Tape with `dim`, `inputs` and
    `outputs`; a Python function is run once on a Tape with `inputs` (and, with `restore_inputs`, its array
    inputs are put back as they were before returning). Row r of a Jacobian is the input's gradient after a
    backward pass seeded with 1 in output scalar r; rows from `max_outputs_per_var` on (when > 0) stay NaN."""
    inputs = list(inputs or [])
    if metadata is None:
        metadata = FunctionMetadata()
    snapshot = None
    tape = Tape()
    if isinstance(function, Kernel):
        if not _is_kernel_backward_enabled(function):
            raise ValueError(_BACKWARD_DISABLED)
        if outputs is None or len(outputs) == 0:
            raise ValueError(_NO_OUTPUTS)
        outputs = list(outputs)
        if device is None:
            device = infer_device(inputs + outputs)
        if metadata.is_empty:
            metadata.update_from_kernel(function, inputs)
        _record_kernel(tape, function, dim, inputs, outputs, device, max_blocks, block_dim)
    else:
        snapshot = _snapshot_array_inputs(inputs) if restore_inputs else None
        with tape:
            outputs = _eval_function(function, inputs, snapshot)
        outputs = _as_outputs(outputs)
    jacobians = {}
    try:
        if not isinstance(function, Kernel):
            for kernel in _launched_kernels(tape):
                if not _is_kernel_backward_enabled(kernel):
                    raise ValueError(_BACKWARD_DISABLED)
            if metadata.is_empty:
                metadata.update_from_function(function, inputs, outputs)
        mask = _resolve_mask(input_output_mask, metadata, len(inputs))
        zero_grads(inputs)
        zero_grads(outputs)
        for input_i, output_i in _pairs(inputs, outputs, mask):
            input, output = inputs[input_i], outputs[output_i]
            _check_scalarizable(output)
            _check_scalarizable(input)
            rows = _scalar_count(output)
            jac = _nan_matrix(rows, input)
            seed = np.zeros(rows, dtype=wt.numpy_dtype(output.dtype))
            for r in range(min(rows, max_outputs_per_var) if max_outputs_per_var > 0 else rows):
                seed[r] = 1
                _write_scalars(output.grad, seed)
                seed[r] = 0
                tape.backward()
                jac[r] = _read_scalars(input.grad)
                tape.zero()
                zero_grads(inputs)
                zero_grads(outputs)
            jacobians[input_i, output_i] = _jacobian_array(jac, input)
    finally:
        if snapshot is not None:
            _restore_array_inputs(inputs, snapshot)
    if plot_jacobians:
        jacobian_plot(jacobians, metadata)
    return jacobians


def jacobian_fd(function: Kernel | Callable, dim=None, inputs: Sequence | None = None,
                outputs: Sequence | None = None, input_output_mask=None, device=None, max_blocks=0,
                block_dim: int | None = None, max_inputs_per_var=-1, eps: float = 1e-4, plot_jacobians=False,
                metadata: FunctionMetadata | None = None, restore_inputs: bool = True) -> dict:
    """The Jacobians of `function` (as for `jacobian`) by central differences: column c is
    (f(x + eps e_c) - f(x - eps e_c)) / (2 eps) over the input's scalars, from forward launches only (a kernel
    whose backward is disabled is fine). A kernel writes into copies of `outputs`; a Python function's array
    inputs are, with `restore_inputs`, put back before each evaluation and before returning. Columns from
    `max_inputs_per_var` on (when > 0) stay NaN."""
    inputs = list(inputs or [])
    if metadata is None:
        metadata = FunctionMetadata()
    is_kernel = isinstance(function, Kernel)
    snapshot = None
    if is_kernel:
        if outputs is None or len(outputs) == 0:
            raise ValueError(_NO_OUTPUTS)
        outputs = list(outputs)
        if device is None:
            device = infer_device(inputs + outputs)
        if metadata.is_empty:
            metadata.update_from_kernel(function, inputs)
    else:
        snapshot = _snapshot_array_inputs(inputs) if restore_inputs else None
        outputs = _as_outputs(_eval_function(function, inputs, snapshot))
        try:
            if metadata.is_empty:
                metadata.update_from_function(function, inputs, outputs)
        finally:
            if snapshot is not None:
                _restore_array_inputs(inputs, snapshot)
    mask = _resolve_mask(input_output_mask, metadata, len(inputs))
    use_restore = snapshot is not None
    kernel_launch = dict(dim=dim, max_blocks=max_blocks, device=device)
    if block_dim is not None:
        kernel_launch["block_dim"] = block_dim
    # the kernel writes into copies of the outputs, each probe starting from the outputs' values at the call
    outputs_copy = [clone(y, requires_grad=False) if isinstance(y, array) else y for y in outputs]

    def evaluate(output_i):
        """The output's scalars after one evaluation at the current inputs."""
        if is_kernel:
            probe = [clone(y, requires_grad=False) if isinstance(y, array) else y for y in outputs_copy]
            launch(function, inputs=inputs, outputs=probe, **kernel_launch)
            return _read_scalars(probe[output_i])
        return _read_scalars(_as_outputs(_eval_function(function, inputs, snapshot))[output_i])

    jacobians = {}
    try:
        for input_i, output_i in _pairs(inputs, outputs, mask):
            input, output = inputs[input_i], outputs[output_i]
            _check_scalarizable(output)
            _check_scalarizable(input)
            out_t = wt.numpy_dtype(output.dtype).type
            jac = _nan_matrix(_scalar_count(output), input)
            columns = _scalar_count(input)
            if max_inputs_per_var > 0:
                columns = min(columns, max_inputs_per_var)
            original = None if use_restore else _read_scalars(input)
            for c in range(columns):
                _add_to_scalar(input, c, -eps)
                left = evaluate(output_i)
                if use_restore:  # the evaluation may have changed the inputs: start again from the snapshot
                    _restore_array_inputs(inputs, snapshot)
                    _add_to_scalar(input, c, eps)
                else:
                    _add_to_scalar(input, c, 2 * eps)
                right = evaluate(output_i)
                if use_restore:
                    _restore_array_inputs(inputs, snapshot)
                else:
                    _write_scalars(input, original)
                jac[:, c] = (right - left) / (out_t(2.0) * out_t(eps))
            jacobians[input_i, output_i] = _jacobian_array(jac, input)
    finally:
        if snapshot is not None:
            _restore_array_inputs(inputs, snapshot)
    if plot_jacobians:
        jacobian_plot(jacobians, metadata)
    return jacobians


# -- the checks ----------------------------------------------------------------------------------
class _Colors:
    OKGREEN = "\033[92m"
    FAIL = "\033[91m"
    ENDC = "\033[0m"


def gradcheck(function: Kernel | Callable, dim=None, inputs: Sequence | None = None,
              outputs: Sequence | None = None, *, eps: float = 1e-4, atol: float = 1e-3, rtol: float = 1e-2,
              raise_exception: bool = True, input_output_mask=None, device=None, max_blocks: int = 0,
              block_dim: int | None = None, max_inputs_per_var: int = -1, max_outputs_per_var: int = -1,
              plot_relative_error: bool = False, plot_absolute_error: bool = False, show_summary: bool = True,
              restore_inputs: bool = True) -> bool:
    """Whether the autodiff Jacobians of `function` match its finite-difference ones: for every pair,
    |AD - FD| <= atol + rtol |FD| (np.allclose, over the first `max_outputs_per_var` rows and
    `max_inputs_per_var` columns when > 0) and AD holds no NaN. `show_summary` prints a table per pair;
    `raise_exception` raises ValueError on a failure instead of returning False."""
    if inputs is None:
        raise ValueError("The inputs argument must be provided")
    metadata = FunctionMetadata()
    jacs_ad = jacobian(function, dim=dim, inputs=inputs, outputs=outputs, input_output_mask=input_output_mask,
                       device=device, max_blocks=max_blocks, block_dim=block_dim,
                       max_outputs_per_var=max_outputs_per_var, restore_inputs=restore_inputs,
                       plot_jacobians=False, metadata=metadata)
    jacs_fd = jacobian_fd(function, dim=dim, inputs=inputs, outputs=outputs, input_output_mask=input_output_mask,
                          device=device, max_blocks=max_blocks, block_dim=block_dim,
                          max_inputs_per_var=max_inputs_per_var, eps=eps, restore_inputs=restore_inputs,
                          plot_jacobians=False, metadata=metadata)
    success = True
    mismatch = nan = None  # the first pair that failed each way
    summary = []
    for (input_i, output_i), jac_fd in jacs_fd.items():
        # a vector input's Jacobian keeps its (outputs, inputs, components) shape: the summary's "at" index is Warp's
        ad = np.array(jacs_ad[input_i, output_i].numpy())
        fd = np.array(jac_fd.numpy())
        if max_outputs_per_var > 0:
            ad, fd = ad[:max_outputs_per_var], fd[:max_outputs_per_var]
        if max_inputs_per_var > 0:
            ad, fd = ad[:, :max_inputs_per_var], fd[:, :max_inputs_per_var]
        matches = bool(np.allclose(ad, fd, atol=atol, rtol=rtol))
        has_nan = bool(np.any(np.isnan(ad)))
        if not matches and mismatch is None:
            mismatch = (input_i, output_i)
        if has_nan and nan is None:
            nan = (input_i, output_i)
        success = success and matches and not has_nan
        if show_summary:
            diff = np.abs(ad - fd)
            at = np.unravel_index(np.argmax(diff), ad.shape) if diff.size else ()
            if has_nan:
                verdict = _Colors.FAIL + "NaN" + _Colors.ENDC
            elif matches:
                verdict = _Colors.OKGREEN + "PASS" + _Colors.ENDC
            else:
                verdict = _Colors.FAIL + "FAIL" + _Colors.ENDC
            summary.append([
                metadata.input_labels[input_i], metadata.output_labels[output_i],
                f"{diff.max():.3e} at {tuple(int(i) for i in at)}" if diff.size else "-",
                f"{ad[at]:.3e}" if diff.size else "-", f"{fd[at]:.3e}" if diff.size else "-",
                f"{np.abs((ad - fd) / (fd + 1e-8)).max():.3e}" if diff.size else "-", verdict])
    if show_summary:
        print_table(["Input", "Output", "Max Abs Error", "AD at MAE", "FD at MAE", "Max Rel Error", "Pass"],
                    summary)
        if success:
            print(_Colors.OKGREEN + f"Gradient check for kernel {metadata.key} passed" + _Colors.ENDC)
        else:
            print(_Colors.FAIL + f"Gradient check for kernel {metadata.key} failed" + _Colors.ENDC)
    if plot_relative_error or plot_absolute_error:  # (raises NotImplementedError once the metadata checks out)
        jacobian_plot(jacs_fd, metadata, title=f"{metadata.key} kernel Jacobian error")
    if raise_exception:
        if mismatch is not None:
            raise ValueError(f"Gradient check failed for kernel {metadata.key}, input {mismatch[0]}, output "
                             f"{mismatch[1]}: finite difference and autodiff gradients do not match")
        if nan is not None:
            raise ValueError(f"Gradient check failed for kernel {metadata.key}, input {nan[0]}, output {nan[1]}: "
                             f"gradient contains NaN values")
    return success


def gradcheck_tape(tape: Tape, *, eps=1e-4, atol=1e-3, rtol=1e-2, raise_exception=True, input_output_masks=None,
                   blacklist_kernels=None, whitelist_kernels=None, max_inputs_per_var=-1, max_outputs_per_var=-1,
                   plot_relative_error=False, plot_absolute_error=False, show_summary: bool = True,
                   reverse_launches: bool = False, skip_to_launch_index: int = 0) -> bool:
    """`gradcheck` on each kernel launch `tape` recorded (functions recorded with record_func, wp.copy, are
    not checked), with the launch's dim, inputs, outputs and device; True when all pass. `input_output_masks`:
    {kernel key: mask}; `blacklist_kernels` / `whitelist_kernels`: kernel keys to skip / to check alone;
    kernels whose backward is disabled are skipped; `reverse_launches`: last launch first;
    `skip_to_launch_index`: skip the launches before this index (in the order checked)."""
    masks = input_output_masks or {}
    blacklist = set(blacklist_kernels or [])
    whitelist = set(whitelist_kernels or [])
    launches = list(reversed(tape.launches)) if reverse_launches else list(tape.launches)
    overall = True
    for i, entry in enumerate(launches):
        if i < skip_to_launch_index:
            continue
        if not (isinstance(entry, tuple) and entry and entry[0] == "launch"):
            continue
        _, kernel, dims, inputs, outputs, device = entry[:6]
        if whitelist and kernel.key not in whitelist:
            continue
        if kernel.key in blacklist or not _is_kernel_backward_enabled(kernel):
            continue
        passed = gradcheck(kernel, dims, inputs, outputs, eps=eps, atol=atol, rtol=rtol,
                           raise_exception=raise_exception, input_output_mask=masks.get(kernel.key), device=device,
                           max_inputs_per_var=max_inputs_per_var, max_outputs_per_var=max_outputs_per_var,
                           plot_relative_error=plot_relative_error, plot_absolute_error=plot_absolute_error,
                           show_summary=show_summary)
        overall = overall and passed
    return overall


def jacobian_plot(jacobians: dict, kernel, inputs: Sequence | None = None, show_plot: bool = True,
                  show_colorbar: bool = True, scale_colors_per_submatrix: bool = False, title: str | None = None,
                  colormap: str = "coolwarm", log_scale: bool = False):
    """Warp's image plot of Jacobians. mlwarp checks the arguments as Warp does (a kernel needs `inputs`; the
    metadata must label every input and output a Jacobian refers to and give its array dtype), then raises
    NotImplementedError: it draws no plots. Inspect the arrays `jacobian` / `jacobian_fd` return instead."""
    if isinstance(kernel, Kernel):
        if inputs is None:
            raise ValueError("inputs must be provided when kernel is a Warp kernel")
        metadata = FunctionMetadata()
        metadata.update_from_kernel(kernel, inputs)
    elif isinstance(kernel, FunctionMetadata):
        metadata = kernel
    else:
        raise ValueError("Invalid kernel argument: must be a Warp kernel or a FunctionMetadata object")
    if not jacobians:
        return None
    for input_i in sorted({i for i, _ in jacobians}):
        count = len(metadata.input_labels or [])
        if not 0 <= input_i < count:
            raise ValueError(f"Invalid Jacobian input index {input_i}: plotting metadata defines {count} inputs")
        if metadata.input_labels[input_i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {input_i}: missing label")
        dtypes = metadata.input_dtypes or []
        if input_i >= len(dtypes) or dtypes[input_i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {input_i}: missing array dtype")
        if not (dtypes[input_i] in wt.scalar_types or wt.is_composite(dtypes[input_i])):
            raise ValueError(f"Invalid plotting metadata for Jacobian input index {input_i}: array dtype has no "
                             f"component count")
    for output_i in sorted({o for _, o in jacobians}):
        count = len(metadata.output_labels or [])
        if not 0 <= output_i < count:
            raise ValueError(f"Invalid Jacobian output index {output_i}: plotting metadata defines {count} "
                             f"outputs")
        if metadata.output_labels[output_i] is None:
            raise ValueError(f"Invalid plotting metadata for Jacobian output index {output_i}: missing label")
    raise NotImplementedError("mlwarp.autograd.jacobian_plot draws no plots (Warp's needs matplotlib); inspect "
                              "the Jacobian arrays that jacobian() / jacobian_fd() return instead")


def print_table(headers, cells) -> None:
    """Prints `cells` (rows of strings) under `headers`, columns as wide as their widest entry (colour codes
    not counted)."""
    def width(s):
        return len(re.sub(r"\033\[\d+m", "", str(s)))

    widths = [max(width(c) for c in column) for column in zip(headers, *cells)]
    for header, w in zip(headers, widths):
        print(f"{header:{w}}", end=" | ")
    print()
    print("-" * (sum(widths) + 3 * len(widths) - 1))
    for row in cells:
        for cell, w in zip(row, widths):
            print(f"{cell:{w}}", end=" | ")
        print()
