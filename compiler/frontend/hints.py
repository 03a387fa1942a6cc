"""The compiler hints of core/hints.py: `prefetch(a[i])` becomes llvm.intr.prefetch of the element's
address (a read, kept in every cache level); LLVM's NVPTX backend emits nothing for it."""

from __future__ import annotations

import ast

from mlwarp.core.errors import CompileError

from ..dialects import llvm
from ..dialects.warp import builders as wb
from . import types as ft
from .values import Var

READ, KEEP_IN_ALL_CACHES, DATA = 0, 3, 1


def prefetch(em, node: ast.Call) -> Var:
    if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Subscript) or \
            not isinstance(em.expr(node.args[0].value).type, ft.ArrayT):
        raise em.error(node, "prefetch() takes one array element, as prefetch(a[i])", CompileError)
    arr, indices = em.array_access(node.args[0])
    with em.loc(node):
        llvm.intr_prefetch(wb.address(arr.value, indices), READ, KEEP_IN_ALL_CACHES, DATA)
    return None
