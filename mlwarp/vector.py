"""Warp's vector-like types (vectors, matrices, quaternions, transforms, spatial types) and the type
functions that build their values; defined in mlwarp.core.vector (the bottom layer)."""

from .core.vector import *  # noqa: F401,F403
from .core.vector import ALIASES, __all__, as_argument, matrix, spatial_matrix_type, spatial_vector_type, vector  # noqa: F401,E501
