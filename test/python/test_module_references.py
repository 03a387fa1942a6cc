"""Module dependency edges (Warp's `Module.references` / `Module.dependents`) and what they mean at run time: a
kernel that calls a function of a reloaded module runs the new function (Warp unloads a reloaded module's
dependents), while Warp's rule for plain globals (captured when the module is built) still holds."""

import importlib
import sys

import numpy as np
import pytest

import mlwarp as wp


@pytest.fixture
def make_module(tmp_path, monkeypatch):
    """Writes a Python module into tmp_path and imports (or reloads) it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written = []

    def make(name: str, text: str):
        (tmp_path / f"{name}.py").write_text(text)
        importlib.invalidate_caches()
        written.append(name)
        if name in sys.modules:
            return importlib.reload(sys.modules[name])
        return importlib.import_module(name)

    yield make
    for name in written:
        sys.modules.pop(name, None)


PROVIDER = """
import mlwarp as wp

@wp.func
def magic(x: float) -> float:
    return x * {scale}

@wp.func
def more_magic(x: float) -> float:
    return x + 1.0

@wp.struct
class Params:
    offset: float
"""

CONSUMER = """
import mlwarp as wp
import mref_provider as ref

@wp.func
def apply(f: wp.Function, x: float) -> float:
    return f(x)

@wp.func
def apply_default(x: float, f: wp.Function = ref.more_magic) -> float:
    return f(x)

@wp.kernel
def direct(out: wp.array[float]):
    out[0] = ref.magic(1.0)

@wp.kernel
def through_locals(out: wp.array[float], p: ref.Params):
    f, g = ref.magic, ref.more_magic
    out[0] = f(1.0) + g(0.0) + p.offset

@wp.kernel
def as_argument(out: wp.array[float]):
    out[0] = apply(ref.magic, 1.0) + apply_default(0.0)
"""


def _run(kernel, *extra):
    out = wp.zeros(1, dtype=float, device="cpu")
    wp.launch(kernel, dim=1, inputs=[out, *extra], device="cpu")
    return float(out.numpy()[0])


def test_references_and_dependents_are_the_modules_a_module_uses(make_module):
    provider = make_module("mref_provider", PROVIDER.format(scale="2.0"))
    consumer = make_module("mref_consumer", CONSUMER)
    provider_module, consumer_module = provider.magic.module, consumer.direct.module
    assert isinstance(provider_module, wp.Module) and provider_module.name == "mref_provider"
    # a direct call, locals bound by (tuple) assignment, a wp.Function argument and a default all count
    assert provider_module in consumer_module.references
    assert consumer_module in provider_module.dependents
    assert consumer_module not in consumer_module.references and provider_module.references == set()


@pytest.mark.parametrize("kernel_name", ["direct", "through_locals", "as_argument"])
def test_a_reloaded_module_s_new_function_is_called(make_module, kernel_name):
    provider = make_module("mref_provider", PROVIDER.format(scale="2.0"))
    consumer = make_module("mref_consumer", CONSUMER)
    kernel = getattr(consumer, kernel_name)
    extra = [provider.Params()] if kernel_name == "through_locals" else []
    # closed forms: magic(1) = scale, more_magic(0) = 1
    expected = {"direct": lambda s: s, "through_locals": lambda s: s + 1.0, "as_argument": lambda s: s + 1.0}
    assert _run(kernel, *extra) == expected[kernel_name](2.0)
    provider = make_module("mref_provider", PROVIDER.format(scale="3.0"))  # edited and reloaded
    extra = [provider.Params()] if kernel_name == "through_locals" else []
    assert _run(kernel, *extra) == expected[kernel_name](3.0)


def test_a_function_defined_elsewhere_does_not_refresh_captured_globals(make_module):
    # Warp's rule: a global read by a built kernel changes nothing until its own module is modified
    consumer = make_module("mref_globals", """
import mlwarp as wp
C = 17.0

@wp.kernel
def read_c(out: wp.array[float]):
    out[0] = C
""")
    assert _run(consumer.read_c) == 17.0
    consumer.C = 42.0

    @wp.func
    def unrelated(x: float) -> float:  # another module gets a new function
        return x

    assert _run(consumer.read_c) == 17.0
    consumer.read_c.module.mark_modified()
    assert _run(consumer.read_c) == 42.0


def test_a_hand_made_module_has_its_edges(make_module):
    provider_module = wp.Module("mref_hand_provider")
    consumer_module = wp.Module("mref_hand_consumer")

    @wp.func(module=provider_module)
    def twice(x: float) -> float:
        return 2.0 * x

    @wp.kernel(module=consumer_module)
    def use(out: wp.array[float]):
        out[0] = twice(4.0)

    assert np.isclose(_run(use), 8.0)
    assert twice.module is provider_module
    assert provider_module in consumer_module.references and consumer_module in provider_module.dependents
    assert consumer_module.hashers  # loaded
    consumer_module.unload()
    assert not consumer_module.hashers
