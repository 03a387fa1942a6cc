"""`wp.types`: Warp's scalar types, array annotations and type helpers.

Defined in mlwarp.core.types (the bottom layer the compiler and the runtime share); Warp's composite type
constructors `wp.types.vector`, `matrix`, `quaternion` and `transformation` come from mlwarp.core.vector.
Warp's public introspection is here: `type_repr`, `types_equal`, `type_size_in_bytes`, `type_ctype`,
`type_is_int/float/scalar/vector/matrix/quaternion/transformation/composite/value/struct/array/tile` (of types),
`is_vector/matrix/quaternion/transformation/value/tile` (of values), and the generic annotations `Int`,
`Float`, `Scalar`.

Where mlwarp's internal helpers of the same name take types (`is_int`, `is_float`, `is_scalar`, `is_struct`,
`is_composite`), they keep that meaning until the API modules import them from mlwarp.core.types (Warp's
`is_int(x)` and friends take values).
"""

from mlwarp.core.types import *  # noqa: F401,F403
from mlwarp.core.vector import matrix, quaternion, transformation, vector  # noqa: F401
