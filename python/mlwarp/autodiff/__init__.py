"""Differentiation at Python scope: `wp.Tape` (recording, replaying adjoints, saving overwritten values), adjoint
launches (`adjoint=True`) and `wp.jvp`. The adjoint kernels themselves are built by the compiler (warp-autodiff)."""
