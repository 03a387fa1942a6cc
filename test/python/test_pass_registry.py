"""The pass registry: every listed pass loads lazily, names itself as listed, and its options
are typed fields that print back to the upstream syntax they were parsed from."""

import dataclasses
import subprocess
import sys

import pytest

from mlwarp.compiler.passes.registry import DECLARED, PASSES, Pass, PassError, implemented, pass_class


@pytest.mark.parametrize("name", sorted(PASSES))
def test_every_registered_pass_loads_and_round_trips(name):
    cls = pass_class(name)
    assert issubclass(cls, Pass) and cls.name == name and cls.description
    # the implementation runs its MLIR-free declaration (what tables hold and pipeline text parses to)
    declaration = DECLARED[name]
    assert issubclass(cls, declaration) and cls.__name__ == declaration.__name__ and cls.run is not Pass.run
    assert type(implemented(declaration())) is cls and implemented(declaration()) == cls()
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    default = cls.parse({})
    assert str(default) == name and cls.parse({}) == default
    # every option set to a value other than its default prints as `name{opt=v}` and parses back
    changed = {}
    for option, field in cls.option_fields().items():
        value = getattr(default, field.name)
        changed[option] = {bool: lambda v: not v, int: lambda v: v + 3, str: lambda v: "none"}[type(value)](value)
    p = cls.parse(changed)
    text = str(p)
    if changed:
        body = text[len(name) + 1:-1]
        assert text.startswith(name + "{") and text.endswith("}")
        assert cls.parse(dict(item.split("=", 1) for item in body.split())) == p
    else:
        assert text == name


def test_options_are_typed_and_errors_name_the_pass_and_option():
    unroll = pass_class("warp-unroll-loops")
    assert unroll.parse({"max-unroll": "4"}).max_unroll == 4
    assert str(unroll.parse({"max-unroll": 4})) == "warp-unroll-loops{max-unroll=4}"
    autodiff = pass_class("warp-autodiff")
    assert autodiff.parse({"strict": "true"}).strict is True
    assert str(autodiff.parse({"strict": True})) == "warp-autodiff{strict=true}"
    with pytest.raises(PassError, match=r"^pass 'warp-autodiff': option strict='maybe' is not a valid bool$"):
        autodiff.parse({"strict": "maybe"})
    with pytest.raises(PassError, match=r"^pass 'warp-unroll-loops': option max-unroll=1.5 is not a valid int$"):
        unroll.parse({"max-unroll": 1.5})
    with pytest.raises(PassError, match=r"^pass 'warp-inline' has no option\(s\) \['depth'\]; options: none$"):
        pass_class("warp-inline").parse({"depth": "2"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        unroll.parse({}).max_unroll = 2


def test_the_registry_imports_a_pass_module_on_first_use_only():
    assert pass_class("no-such-pass") is None  # not ours: an upstream pass name
    script = ("import sys; from mlwarp.compiler.passes.registry import PASSES, pass_class; "
              "mods = {m for m, _ in PASSES.values()}; print(sorted(mods & set(sys.modules))); "
              "pass_class('warp-bounds-check'); print('mlwarp.compiler.passes.bounds_check' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "True"]
