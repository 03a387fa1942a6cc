"""Matrix types: `matrix(shape, dtype)` (cached) and the Python-scope behaviour of their values (rows, columns,
2-d indexing and slicing, matrix products), row-major over the scalars."""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import types as wt
from .vector_components import assign_error, component_index, is_number, sequence_values, sliced_shape, to_raw
from .vector_params import checked_dtype, matrix_shape
from .vector_type import SUFFIX, VectorLike, make_type, vector


class MatrixLike(VectorLike):
    _wp_composite_ = "mat"
    _wp_constructor_ = "matrix"

    def __init__(self, *args):
        rows, cols = self._shape_
        if len(args) == 1 and not isinstance(args[0], VectorLike) and np.ndim(args[0]) > 0:
            args = tuple(args[0])  # mat22(((1, 2), (3, 4))), mat33(np.eye(3)), mat22([1, 2, 3, 4])
        elif len(args) == 1 and isinstance(args[0], MatrixLike) and args[0]._shape_ == self._shape_:
            args = args[0]._values()  # copy
        if len(args) == rows and rows != self._length_:
            flat = []
            for row in args:  # rows: sequences (or vectors) of `cols` values
                if np.ndim(row) != 1 or len(row) != cols:
                    raise TypeError(f"Invalid argument in matrix constructor, expected row of length {cols}, "
                                    f"got {row}")
                flat.extend(row)
            args = flat
        elif len(args) not in (0, 1, self._length_):
            raise ValueError(f"Invalid number of arguments in matrix constructor, expected {self._length_} "
                             f"elements, got {len(args)}")
        super().__init__(*args)

    def _check_row(self, r, what="row"):
        n = self._shape_[0] if what == "row" else self._shape_[1]
        r = component_index(r, n, "int or pair of ints", check=False)
        if not -n <= r < n:
            raise IndexError(f"Invalid {what} index")
        return r + n if r < 0 else r

    def get_row(self, r):
        """Row r as a vector (negative r counts from the end)."""
        rows, cols = self._shape_
        r = self._check_row(r)
        return vector(cols, self._wp_scalar_type_)(*[self._get(r * cols + j) for j in range(cols)])

    def get_col(self, c):
        """Column c as a vector (negative c counts from the end)."""
        rows, cols = self._shape_
        c = self._check_row(c, "column")
        return vector(rows, self._wp_scalar_type_)(*[self._get(i * cols + c) for i in range(rows)])

    def _assign(self, flat_indices, value):
        flat_indices = list(flat_indices)
        if is_number(value) and not isinstance(value, (str, bytes)):
            raw = [to_raw(self._wp_scalar_type_, value)] * len(flat_indices)
        else:
            raw = sequence_values(self._wp_scalar_type_, value, len(flat_indices))
        for k, r in zip(flat_indices, raw):
            ctypes.Array.__setitem__(self, k, r)

    def set_row(self, r, v):
        """Sets row r to `v`: a scalar (every element) or a sequence of `cols` values."""
        rows, cols = self._shape_
        r = self._check_row(r)
        self._assign(range(r * cols, (r + 1) * cols), v)

    def set_col(self, c, v):
        """Sets column c to `v`: a scalar (every element) or a sequence of `rows` values."""
        rows, cols = self._shape_
        c = self._check_row(c, "column")
        self._assign(range(c, rows * cols, cols), v)

    def _key2(self, key):
        if len(key) != 2:
            raise KeyError(f"Invalid key, expected one or two indices, got {len(key)}")
        rows, cols = self._shape_
        i, j = key
        ri = range(*i.indices(rows)) if isinstance(i, slice) else [component_index(i, rows, "int or pair of ints")]
        cj = range(*j.indices(cols)) if isinstance(j, slice) else [component_index(j, cols, "int or pair of ints")]
        return i, j, ri, cj

    def __getitem__(self, key):
        rows, cols = self._shape_
        s = self._wp_scalar_type_
        if isinstance(key, tuple):
            i, j, ri, cj = self._key2(key)
            vals = [[self._get(r * cols + c) for c in cj] for r in ri]
            if not isinstance(i, slice) and not isinstance(j, slice):
                return self._item(ri[0] * cols + cj[0])
            if isinstance(i, slice) and isinstance(j, slice):
                return matrix(sliced_shape(len(ri), len(cj)), s)(*[x for row in vals for x in row])
            flat = [x for row in vals for x in row]
            return vector(len(flat), s)(*flat)
        if isinstance(key, slice):
            ri = range(*key.indices(rows))
            return matrix(sliced_shape(len(ri), cols), s)(*[self._get(r * cols + c) for r in ri for c in range(cols)])
        return self.get_row(component_index(key, rows, "int or pair of ints", check=False))

    def __setitem__(self, key, value):
        rows, cols = self._shape_
        if isinstance(key, tuple):
            i, j, ri, cj = self._key2(key)
            if not isinstance(i, slice) and not isinstance(j, slice):
                if not is_number(value) or isinstance(value, (str, bytes)):
                    if np.ndim(value) > 0 and not isinstance(value, (str, bytes)):
                        raise RuntimeError(f"The provided value is expected to be a scalar but got an object of "
                                           f"shape {np.shape(value)} instead")
                    raise assign_error(self._wp_scalar_type_, value)
                self._set(ri[0] * cols + cj[0], value)
                return
            if not is_number(value):
                value = np.asarray(value).reshape(-1).tolist() if np.ndim(value) > 0 else value
            self._assign([r * cols + c for r in ri for c in cj], value)
            return
        if isinstance(key, slice):
            ri = range(*key.indices(rows))
            if not is_number(value):
                value = np.asarray(value).reshape(-1).tolist() if np.ndim(value) > 0 else value
            self._assign([r * cols + c for r in ri for c in range(cols)], value)
            return
        self.set_row(component_index(key, rows, "int or pair of ints", check=False), value)

    def __iter__(self):
        return (self.get_row(i) for i in range(self._shape_[0]))

    def __len__(self):
        return self._shape_[0]

    def __str__(self):
        return "[" + ",\n ".join(str(self.get_row(r)) for r in range(self._shape_[0])) + "]"

    def __repr__(self):
        rows = ", ".join(f"[{', '.join(map(repr, self.get_row(r)))}]" for r in range(self._shape_[0]))
        return f"{wt.type_repr(type(self))}([{rows}])"

    def __eq__(self, other):
        if isinstance(other, np.ndarray) and other.shape != self._shape_:
            return False
        try:
            if len(other) != self._shape_[0]:
                return False
            return all(self.get_row(r) == other[r] for r in range(self._shape_[0]))
        except (TypeError, KeyError, IndexError):
            return False

    def __hash__(self):
        return hash(tuple(self._values()))

    def __mul__(self, other):
        if isinstance(other, VectorLike):
            return self.__matmul__(other)
        return super().__mul__(other)

    def __rmul__(self, other):
        if isinstance(other, VectorLike):
            return self.__rmatmul__(other)
        return super().__rmul__(other)

    def __matmul__(self, other):
        if isinstance(other, MatrixLike):
            r = self.numpy() @ other.numpy()
            return matrix(r.shape, self._wp_scalar_type_)(*r.reshape(-1).tolist())
        if isinstance(other, VectorLike):
            return vector(self._shape_[0], self._wp_scalar_type_)(*(self.numpy() @ other.numpy()).tolist())
        return NotImplemented

    def __rmatmul__(self, other):
        if isinstance(other, VectorLike) and not isinstance(other, MatrixLike):
            return vector(self._shape_[1], self._wp_scalar_type_)(*(other.numpy() @ self.numpy()).tolist())
        return NotImplemented


@functools.lru_cache(maxsize=None)
def _matrix(shape, dtype):
    r, c = shape
    return make_type(MatrixLike, f"mat{r}{c}{SUFFIX.get(dtype, '')}", dtype, shape, "matrix")


def matrix(shape, dtype=wt.float32):
    """`wp.mat(shape, dtype)` / `wp.types.matrix`: a row-major matrix type; a dimension or `dtype` may be
    `typing.Any` (or a TypeVar) for a generic annotation."""
    return _matrix(matrix_shape(shape), checked_dtype(dtype))
