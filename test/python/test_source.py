"""core/source.py: a function's text read from its code object's line range, without tokenizing,
must equal what inspect.getsource gives (the cache key and the frontend both read it)."""

import inspect
import textwrap

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core import source as src


def _decorated(f):
    return f


@_decorated
def plain(a, b):
    c = a + b
    return c


def trailing_pass(a):
    if a > 0:
        a = 1
    else:
        pass


def closing_paren_at_def_level(a):
    return max(
        a,
        1,
)


def docstring_and_comments(a):
    """Doc."""
    # a comment
    b = a * 2  # another

    # a comment after the last statement
    return b


def multiline_string(a):
    s = """first
second"""
    return s


def outer():
    def nested(x):
        if x:
            return 1
        return 2

    return nested


@pytest.mark.parametrize("func", [plain, trailing_pass, closing_paren_at_def_level, docstring_and_comments,
                                  multiline_string, outer(), outer])
def test_text_matches_inspect(func):
    found = src.function_source(func)
    lines, first = inspect.getsourcelines(func)
    assert found.text == textwrap.dedent("".join(lines))
    assert found.first_line == first
    assert found.filename == __file__
    assert found.tree.body[0].name == func.__name__


def test_fast_path_does_not_tokenize(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("inspect.getsourcelines called")

    def fresh(a):
        return a * 3

    monkeypatch.setattr(inspect, "getsourcelines", refuse)
    assert src.function_source(fresh).text == "def fresh(a):\n    return a * 3\n"


def test_function_without_file_raises_oserror():
    scope = {}
    exec("def made_by_exec(a):\n    return a\n", scope)
    with pytest.raises(OSError):
        src.function_source(scope["made_by_exec"])


def test_kernel_key_names_the_line():
    # the same text at another line is another entry: debug builds and expect_* carry file:line
    scope = {"wp": wp}
    text = "@wp.kernel\ndef moved(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n"
    keys = []
    for pad in ("", "\n\n"):
        filename = f"/tmp/mlwarp_test_source_{len(pad)}.py"
        import linecache

        linecache.cache[filename] = (0, None, (pad + text).splitlines(True), filename)
        exec(compile(pad + text, filename, "exec"), scope)
        keys.append(scope["moved"].cache_key(wp.get_device("cpu")))
        a = wp.zeros(3, dtype=float, device="cpu")
        wp.launch(scope["moved"], 3, inputs=[a], device="cpu")
        np.testing.assert_array_equal(a.numpy(), [1.0, 1.0, 1.0])
    assert keys[0] != keys[1]


def test_file_edited_since_import_is_a_clear_error(tmp_path):
    import importlib.util
    import linecache

    path = tmp_path / "edited_kernel.py"
    path.write_text("def kernel_in_file(a):\n    return a + 1\n")
    spec = importlib.util.spec_from_file_location("edited_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text("x = 1\ny = 2\nz = 3\n")  # the function's lines are now something else
    linecache.checkcache(str(path))
    with pytest.raises(OSError, match=r"the source of 'kernel_in_file' at .*edited_kernel.py:1 is not its "
                                      r"definition: was the file edited since it was imported\?"):
        src.function_source(module.kernel_in_file)
