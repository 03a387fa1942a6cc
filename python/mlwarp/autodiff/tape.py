"""`wp.Tape`: records kernel launches and replays their adjoints in reverse order.

    tape = wp.Tape()
    with tape:
        wp.launch(loss_kernel, dim=n, inputs=[x], outputs=[l])
    tape.backward(loss=l)      # seeds l.grad with 1, then runs the adjoints
    x.grad                     # d l / d x

Gradients accumulate into the `.grad` arrays of `requires_grad=True` arrays,
as in Warp, also of those held in the array fields of struct arguments;
`tape.zero()` clears them, `tape.reset()` also forgets the launches.
"""

from __future__ import annotations

from functools import partial

from mlwarp.arrays import access
from mlwarp.core import types as wt
from mlwarp.autodiff.adjoint import has_adjoint_library, launch_adjoint, with_adjoint
from mlwarp.arrays.array import array
from mlwarp.config import config
from mlwarp.kernels.parallel_compile import compile_ahead, compile_in_background
from mlwarp.autodiff.overwrites import Overwrites, struct_arrays as _struct_arrays, swap
from mlwarp.launching.launch_args import launch_dims
from mlwarp.runtime import capture as _capture
from mlwarp.runtime.device import get_device
from mlwarp.autodiff.tape_graph import tape_dot
# what is recording (python/mlwarp/autodiff/recording.py, below wp.array); wp.launch, jvp.py and utils.py use it from here
from mlwarp.autodiff.recording import _active, paused, record_func, record_launch, recording  # noqa: F401


def _adjoint_of(value):
    """The adjoint a backward launch passes for the argument `value`: an array's `.grad`; for a struct, a struct
    of the same type whose array fields are the `.grad`s of the value's (None where there is none, and for
    every other argument: the adjoint launch makes it zero)."""
    if isinstance(value, array):
        return value.grad if not value.is_annotation and value.requires_grad else None
    if getattr(value, "_wp_indexed_", False):  # wp.indexedarray: the same indices into its data's .grad
        return value.grad
    if wt.is_struct(type(value)):
        adj = type(value)()
        for name, t in value._wp_fields_:
            field = getattr(value, name)
            if wt.is_array(t) or wt.is_struct(t):
                setattr(adj, name, None if field is None else _adjoint_of(field))
        return adj
    return None



def _arrays_in(values):
    for v in values:
        if isinstance(v, array):
            yield v
        elif wt.is_struct(type(v)):
            yield from _struct_arrays(v)


class Tape:
    def __init__(self):
        self.launches = []
        # for every array the backward pass wrote: array -> its gradient array; struct argument -> its adjoint
        # (a struct whose array fields are the fields' gradients), as Warp's
        self.gradients = {}
        self.loss = None
        self.scopes = []  # (launch index, name or None at a scope's end, metadata)
        self._overwrites = Overwrites()  # values the recorded launches overwrote that adjoints read (overwrites.py)

    def __enter__(self):
        if _active:  # as Warp: one tape records at a time
            raise RuntimeError("Warp: Error, entering a tape while one is already active")
        _active.append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _active.remove(self)

    def record_launch(self, kernel, dim, max_blocks, inputs, outputs, device, block_dim=0, metadata=None):
        """Records a launch of `kernel` made by other means than wp.launch (Warp's hook): backward() runs its
        adjoint with these arguments. `max_blocks` and `block_dim` shape CUDA grids in Warp; mlwarp's adjoint
        launches choose their own, so they change nothing here, nor does `metadata` (Warp's tape
        visualization)."""
        self.launches.append(("launch", kernel, launch_dims(dim, kernel), list(inputs), list(outputs),
                              get_device(device)))

    def record_func(self, backward, arrays):
        """Records a Python callable that `backward()` calls in its place (for work that is not a kernel)."""
        self.launches.append(("func", backward, list(arrays)))

    def save_overwritten(self, kernel, args, device):
        """Before a launch this tape records: saves the arrays it writes that it, or a recorded launch, read."""
        self._overwrites.before_launch(len(self.launches), kernel, args, device)

    def save_before_write(self, a):
        """Before wp.copy, assign, fill_ or zero_ writes `a` while this tape records: saves it if a recorded
        launch read it."""
        self._overwrites.before_write(len(self.launches), a)

    def backward(self, loss=None, grads=None):
        """Runs the recorded launches' adjoints, last first. `loss`: a one-element array whose gradient is
        set to 1; `grads`: {array: gradient array} seeds for several outputs."""
        if loss is not None:
            if loss.size != 1:
                raise RuntimeError(f"Can only return gradients for scalar loss functions, got an array of "
                                   f"shape {loss.shape}")
            if loss.grad is None:
                raise RuntimeError("the loss array needs requires_grad=True to be seeded")
            self.loss = loss
            loss.grad.fill_(1)
            self.gradients[loss] = loss.grad
        for a, g in (grads or {}).items():
            if a.grad is None:
                a.grad = g
            elif a.grad is not g:
                a.grad.assign(g)
            a.requires_grad = True
            self.gradients[a] = a.grad
        self._compile_adjoints_ahead()
        swapped = []  # each adjoint reads what its launch read (overwrites.py); undone at the end
        try:
            for position in range(len(self.launches), -1, -1):
                for pair in self._overwrites.swaps(position, before=True):
                    swap(pair)
                    swapped.append(pair)
                if position < len(self.launches):
                    self._backward_entry(self.launches[position])
                for pair in self._overwrites.swaps(position, before=False):
                    swap(pair)
                    swapped.append(pair)
        finally:
            for pair in reversed(swapped):
                swap(pair)
        if config.verify_autograd_array_access:  # the recorded reads are consumed
            access.clear_read_marks(self._arrays())

    def adjoint_needed_later(self, kernel, device) -> None:
        """A CPU launch this tape recorded: its kernel's adjoint library (which the forward library leaves out)
        starts compiling in the background, on a core the forward pass leaves idle (kernels/parallel_compile.py),
        since backward() will most likely launch it. Only a speed-up: a compile that fails is redone, and
        reported, where the adjoint is launched."""
        if device.is_cpu and has_adjoint_library(kernel):
            try:
                compile_in_background(with_adjoint(kernel), device)
            except Exception:  # noqa: BLE001
                pass

    def _compile_adjoints_ahead(self) -> None:
        """The CPU adjoint libraries this backward pass will load, compiled side by side before its first adjoint
        launch asks for one (kernels/parallel_compile.py): a program's first backward pass compiled one per
        kernel, one after another. Only a speed-up: whatever fails here fails again, and is reported, where the
        adjoint is launched."""
        seen, variants = set(), []
        for entry in self.launches:
            if entry[0] != "launch" or not entry[5].is_cpu:
                continue
            kernel = entry[1]
            if id(kernel) not in seen and has_adjoint_library(kernel):
                seen.add(id(kernel))
                variants.append(with_adjoint(kernel))
        if variants:  # (with one: it may be compiling in the background, and is waited for)
            try:
                compile_ahead(variants, get_device("cpu"))
            except Exception:  # noqa: BLE001 (the launches compile them, and raise what they raise)
                pass

    def _backward_entry(self, entry):
        if entry[0] == "func":
            entry[1]()
            return
        _, kernel, dims, inputs, outputs, device = entry
        adj_in = [_adjoint_of(v) for v in inputs]
        adj_out = [_adjoint_of(v) for v in outputs]
        for v in _arrays_in(inputs + outputs):
            if v.grad is not None:
                self.gradients[v] = v.grad
        for v, adj in zip(inputs + outputs, adj_in + adj_out):
            if wt.is_struct(type(v)):
                self.gradients[v] = adj
        # a graph capture (graph_capture.py) records the adjoint launch, with these adjoints, for its replays
        _capture.run_or_record(device, partial(launch_adjoint, kernel, dims, inputs, outputs, adj_in, adj_out,
                                               device))

    def record_scope_begin(self, scope_name, metadata=None):
        """Opens a named scope grouping the launches recorded from here (Warp uses them to draw the tape)."""
        self.scopes.append((len(self.launches), scope_name, {} if metadata is None else metadata))

    def record_scope_end(self, remove_scope_if_empty=True):
        """Closes the innermost open scope; `remove_scope_if_empty`: a scope with no launch is forgotten."""
        if sum(1 if name is not None else -1 for _, name, _ in self.scopes) <= 0:
            raise RuntimeError("Warp: Error, ended tape scope, but scope not present")
        if remove_scope_if_empty and self.scopes[-1][1] is not None and self.scopes[-1][0] == len(self.launches):
            self.scopes.pop()
        else:
            self.scopes.append((len(self.launches), None, None))

    def _arrays(self):
        for entry in self.launches:
            if entry[0] == "launch":
                yield from _arrays_in(entry[3] + entry[4])
            else:
                yield from (v for v in entry[2] if isinstance(v, array))
        yield from _arrays_in(self.gradients)

    def zero(self):
        """Zeroes the gradient of every array the tape has seen."""
        for a in self._arrays():
            if a.grad is not None:
                a.grad.zero_()

    def reset(self):
        """Forgets the recorded launches and zeroes the gradients (tape.gradients keeps its entries, zeroed, as
        Warp's)."""
        self.zero()
        if config.verify_autograd_array_access:
            access.clear_read_marks(list(self._arrays()))
        self.launches = []
        self.scopes = []
        self.loss = None
        self._overwrites.clear()

    def visualize(self, filename=None, simplify_graph=True, hide_readonly_arrays=False, array_labels=None,
                  choose_longest_node_name=True, ignore_graph_scopes=False, track_inputs=None, track_outputs=None,
                  track_input_names=None, track_output_names=None, graph_direction="LR") -> str:
        """The recorded launches as a GraphViz graph (tape_graph.py): returns its dot code and writes it to
        `filename` when given (render it with `dot -Tpng tape.dot -o tape.png`)."""
        dot = tape_dot(self, simplify_graph, hide_readonly_arrays, array_labels, choose_longest_node_name,
                       ignore_graph_scopes, track_inputs, track_outputs, track_input_names, track_output_names,
                       graph_direction)
        if filename is not None:
            with open(filename, "w") as f:
                f.write(dot)
        return dot

    def get_adjoint(self, a):
        return _adjoint_of(a)
