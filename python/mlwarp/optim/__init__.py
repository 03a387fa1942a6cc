"""`warp.optim` for mlwarp: the gradient-descent optimizers `Adam` and `SGD`, and `linear`, iterative solvers of
linear systems (CG, CR, BiCGSTAB, GMRES) with their operators and preconditioners, as Warp 1.19 has them. All of
it runs as mlwarp kernels. Import it as Warp's: `import mlwarp.optim` (or use `wp.optim`)."""

from mlwarp.optim.adam import Adam
from mlwarp.optim.sgd import SGD
from mlwarp.optim import linear

__all__ = ["Adam", "SGD", "linear"]
