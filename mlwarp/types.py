"""`wp.types`: Warp's scalar types, array annotations and type helpers.

Defined in mlwarp.core.types (the bottom layer the compiler and the runtime share); Warp's composite type
constructors `wp.types.vector` and `wp.types.matrix` come from mlwarp.core.vector.
"""

from .core.types import *  # noqa: F401,F403
from .core.vector import matrix, vector  # noqa: F401
