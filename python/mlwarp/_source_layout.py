"""Running from a source checkout without installing it (`PYTHONPATH=python`, a second worktree, a device machine
that got a copy of the tree): compiler/, core/, runtime/ and tools/mlwarp-opt/ sit beside python/ (the design card's
layout), and pyproject.toml's [tool.setuptools.package-dir] maps them into this package. This finder applies that
table to the checkout this package was imported from, ahead of any installed copy, so that `mlwarp.compiler` is
always the one beside this `mlwarp`. An installed wheel has them inside the package and no pyproject.toml above it.
"""

import importlib.abc
import importlib.util
import sys
import tomllib
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def checkout_root():
    """The repository this package was imported from, or None for an installed wheel."""
    root = _PACKAGE.parents[1]
    if _PACKAGE.parent.name == "python" and (root / "pyproject.toml").is_file():
        return root
    return None


class SourceLayoutFinder(importlib.abc.MetaPathFinder):
    def __init__(self, folders: dict):
        self.folders = folders  # subpackage name -> its folder in the checkout

    def find_spec(self, fullname, path=None, target=None):
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


def install() -> None:
    root = checkout_root()
    if root is None or any(isinstance(f, SourceLayoutFinder) for f in sys.meta_path):
        return
    with open(root / "pyproject.toml", "rb") as f:
        package_dirs = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    folders = {name: root / folder for name, folder in package_dirs.items() if name != __package__}
    sys.meta_path.insert(0, SourceLayoutFinder(folders))
