"""The packages of the design card's layout: each folder of pyproject.toml's [tool.setuptools.package-dir] with the
packages found under it (python/mlwarp -> mlwarp, compiler/ -> mlwarp.compiler, ...). Everything else about the
build is in pyproject.toml."""

import tomllib

from setuptools import find_packages, setup

with open("pyproject.toml", "rb") as f:
    package_dirs = tomllib.load(f)["tool"]["setuptools"]["package-dir"]

setup(packages=[name for package, folder in package_dirs.items()
                for name in [package] + [f"{package}.{sub}" for sub in find_packages(folder)]])
