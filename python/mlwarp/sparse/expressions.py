"""The arithmetic of matrices, as in Warp: `A + B`, `A - B`, `alpha * A`, `A / alpha`, `-A`, `A @ B`, `A @ x`,
`x @ A` (x an array: the transposed product), the in-place forms, and `A.transpose()`.

A scaled matrix stays an unevaluated `BsrScalingExpression` (`alpha * A`): operations fold its scale into
their own (`(2 * A) @ x` is one `bsr_mv` with alpha 2), and `.eval()` copies it into a new matrix. The operators
of `BsrMatrix` are attached to it here because they are the operations of assign.py and products.py, which
build on matrix.py where the class is defined."""

from mlwarp.core import types as wt
from mlwarp.sparse.assign import bsr_copy, bsr_scale, bsr_transposed
from mlwarp.sparse.matrix import BsrMatrix, BsrScalingExpression
from mlwarp.sparse.products import bsr_axpy, bsr_mm, bsr_mv


def _matrix_operators():
    def __add__(self, y):
        return bsr_axpy(y, bsr_copy(self))

    def __iadd__(self, y):
        return bsr_axpy(y, self)

    def __sub__(self, y):
        return bsr_axpy(y, bsr_copy(self), alpha=-1.0)

    def __rsub__(self, x):
        return bsr_axpy(x, bsr_copy(self), beta=-1.0)

    def __isub__(self, y):
        return bsr_axpy(y, self, alpha=-1.0)

    def __mul__(self, y):
        return BsrScalingExpression(self, y)

    def __imul__(self, y):
        return bsr_scale(self, y)

    def __matmul__(self, y):
        return bsr_mv(self, y) if wt.is_array(y) else bsr_mm(self, y)

    def __rmatmul__(self, x):
        return bsr_mv(self, x, transpose=True) if wt.is_array(x) else bsr_mm(x, self)

    def __imatmul__(self, y):
        return bsr_mm(self, y, self)

    def __truediv__(self, y):
        return BsrScalingExpression(self, 1.0 / y)

    def __neg__(self):
        return BsrScalingExpression(self, -1.0)

    def transpose(self):
        """A transposed copy of this matrix."""
        return bsr_transposed(self)

    return dict(__add__=__add__, __radd__=__add__, __iadd__=__iadd__, __sub__=__sub__, __rsub__=__rsub__,
                __isub__=__isub__, __mul__=__mul__, __rmul__=__mul__, __imul__=__imul__, __matmul__=__matmul__,
                __rmatmul__=__rmatmul__, __imatmul__=__imatmul__, __truediv__=__truediv__, __neg__=__neg__,
                transpose=transpose)


def _expression_operators():
    def eval(self):
        """The expression's value, as a new matrix."""
        return bsr_copy(self)

    def __add__(self, y):
        return bsr_axpy(y, bsr_copy(self.mat), beta=self.scale)

    def __sub__(self, y):
        return bsr_axpy(y, bsr_copy(self.mat), alpha=-1.0, beta=self.scale)

    def __rsub__(self, x):
        return bsr_axpy(x, bsr_copy(self.mat), beta=-self.scale)

    def __mul__(self, y):
        return BsrScalingExpression(self.mat, y * self.scale)

    def __matmul__(self, y):
        return bsr_mv(self.mat, y, alpha=self.scale) if wt.is_array(y) else bsr_mm(self.mat, y, alpha=self.scale)

    def __rmatmul__(self, x):
        if wt.is_array(x):
            return bsr_mv(self.mat, x, alpha=self.scale, transpose=True)
        return bsr_mm(x, self.mat, alpha=self.scale)

    def __truediv__(self, y):
        return BsrScalingExpression(self.mat, self.scale / y)

    def __neg__(self):
        return BsrScalingExpression(self.mat, -self.scale)

    def transpose(self):
        """The transposed expression (the matrix transposed into a copy, the scale kept)."""
        return BsrScalingExpression(bsr_transposed(self.mat), self.scale)

    return dict(eval=eval, __add__=__add__, __radd__=__add__, __sub__=__sub__, __rsub__=__rsub__, __mul__=__mul__,
                __rmul__=__mul__, __matmul__=__matmul__, __rmatmul__=__rmatmul__, __truediv__=__truediv__,
                __neg__=__neg__, transpose=transpose)


for _cls, _operators in ((BsrMatrix, _matrix_operators()), (BsrScalingExpression, _expression_operators())):
    for _name, _operator in _operators.items():
        _operator.__qualname__ = f"{_cls.__name__}.{_name}"
        setattr(_cls, _name, _operator)
del _cls, _operators, _name, _operator
