"""benchmark_cloth_warp.py's WpIntegrator and kernels, for Warp (`import warp`) and mlwarp (`import mlwarp`) alike:
`wp` is the module passed in. Arrays are built with `wp.array(numpy, dtype=...)` (the shipped file's
`wp.from_numpy` does the same), on the CPU. bench/cloth.py steps the same kernels (cloth_kernels)."""


def cloth_kernels(wp):
    """(eval_springs, integrate_particles): benchmark_cloth_warp.py's kernels, as Warp ships them."""

    @wp.kernel
    def eval_springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), spring_indices: wp.array(dtype=int),
                     spring_rest_lengths: wp.array(dtype=float), spring_stiffness: wp.array(dtype=float),
                     spring_damping: wp.array(dtype=float), f: wp.array(dtype=wp.vec3)):
        tid = wp.tid()
        i = spring_indices[tid * 2 + 0]
        j = spring_indices[tid * 2 + 1]
        ke = spring_stiffness[tid]
        kd = spring_damping[tid]
        rest = spring_rest_lengths[tid]
        xi = x[i]
        xj = x[j]
        vi = v[i]
        vj = v[j]
        xij = xi - xj
        vij = vi - vj
        l = wp.length(xij)  # noqa: E741
        l_inv = 1.0 / l
        dir = xij * l_inv
        c = l - rest
        dcdt = wp.dot(dir, vij)
        fs = dir * (ke * c + kd * dcdt)
        wp.atomic_sub(f, i, fs)
        wp.atomic_add(f, j, fs)

    @wp.kernel
    def integrate_particles(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
                            w: wp.array(dtype=float), dt: float):
        tid = wp.tid()
        x0 = x[tid]
        v0 = v[tid]
        f0 = f[tid]
        inv_mass = w[tid]
        g = wp.vec3()
        if inv_mass > 0.0:  # inverse mass 0: a fixed particle
            g = wp.vec3(0.0, 0.0 - 9.81, 0.0)  # cloth_setup.GRAVITY_Y, as the shipped kernel writes it
        v1 = v0 + (f0 * inv_mass + g) * dt
        x1 = x0 + v1 * dt
        x[tid] = x1
        v[tid] = v1
        f[tid] = wp.vec3()

    return eval_springs, integrate_particles


def integrator_class(wp):
    eval_springs, integrate_particles = cloth_kernels(wp)

    class WpIntegrator:
        def __init__(self, cloth):
            self.cloth = cloth
            self.positions = wp.array(cloth.positions, dtype=wp.vec3, device="cpu")
            self.invmass = wp.array(cloth.inv_masses, dtype=float, device="cpu")
            self.velocities = wp.zeros(cloth.num_particles, dtype=wp.vec3, device="cpu")
            self.forces = wp.zeros(cloth.num_particles, dtype=wp.vec3, device="cpu")
            self.spring_indices = wp.array(cloth.spring_indices, dtype=int, device="cpu")
            self.spring_lengths = wp.array(cloth.spring_lengths, dtype=float, device="cpu")
            self.spring_stiffness = wp.array(cloth.spring_stiffness, dtype=float, device="cpu")
            self.spring_damping = wp.array(cloth.spring_damping, dtype=float, device="cpu")

        def simulate(self, dt, substeps):
            sim_dt = dt / substeps
            for _ in range(substeps):
                wp.launch(eval_springs, dim=self.cloth.num_springs,
                          inputs=[self.positions, self.velocities, self.spring_indices, self.spring_lengths,
                                  self.spring_stiffness, self.spring_damping, self.forces], device="cpu")
                wp.launch(integrate_particles, dim=self.cloth.num_particles,
                          inputs=[self.positions, self.velocities, self.forces, self.invmass, sim_dt], device="cpu")
            return self.positions.numpy()

    return WpIntegrator
