"""The guide's "Distributed computation" example on one machine: JAX over N host devices (the test that runs
this sets XLA_FLAGS=--xla_force_host_platform_device_count=N and JAX_PLATFORMS=cpu before jax is imported),
a Warp kernel inside shard_map (the guide's code: the first jax_kernel, jax.experimental.shard_map, check_rep),
inside jax.shard_map with wp.jax_kernel and wp.jax_callable, and inside pmap. Prints one line per check."""

import sys
import warnings

import numpy as np

import jax
import jax.numpy as jnp
from jax.experimental.multihost_utils import process_allgather as allgather
from jax.sharding import PartitionSpec as P

import mlwarp as wp

warnings.simplefilter("ignore", DeprecationWarning)  # jax.experimental.shard_map and the first jax_kernel

from jax.experimental.shard_map import shard_map  # noqa: E402  (the guide's import)

from mlwarp.jax_experimental import jax_kernel  # noqa: E402

num_devices = jax.device_count()
assert num_devices == int(sys.argv[1]), jax.devices()


@wp.kernel
def multiply_by_two_kernel(a_in: wp.array(dtype=wp.float32), a_out: wp.array(dtype=wp.float32)):
    index = wp.tid()
    a_out[index] = a_in[index] * 2.0


def triple_func(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    wp.launch(multiply_by_two_kernel, dim=x.shape, inputs=[x], outputs=[y])
    wp.launch(add_kernel, dim=x.shape, inputs=[x], outputs=[y])


@wp.kernel
def add_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = y[i] + x[i]


jax_warp_multiply = jax_kernel(multiply_by_two_kernel)


def warp_multiply(x):
    return jax_warp_multiply(x)


def warp_distributed_operator(a_in):
    def _sharded_operator(a_in):
        return warp_multiply(a_in)[0]  # a local shard of shape (M/N,)

    return shard_map(_sharded_operator, mesh=jax.sharding.Mesh(np.array(jax.devices()), "x"), in_specs=(P("x"),),
                     out_specs=P("x"), check_rep=False)(a_in)


devices = jax.devices()
mesh = jax.sharding.Mesh(np.array(devices), "x")
sharding_spec = jax.sharding.NamedSharding(mesh, P("x"))
input_size = num_devices * 5  # 5 elements per device
single_device_arrays = jnp.arange(input_size, dtype=jnp.float32)
shape = (input_size,)
arrays = [jax.device_put(single_device_arrays[index], d)
          for d, index in sharding_spec.addressable_devices_indices_map(shape).items()]
sharded_array = jax.make_array_from_single_device_arrays(shape, sharding_spec, arrays)
warp_result = warp_distributed_operator(sharded_array)
assert len(warp_result.sharding.device_set) == num_devices
expected = 2.0 * np.arange(input_size, dtype=np.float32)
np.testing.assert_array_equal(np.asarray(allgather(warp_result)).reshape(-1), expected)  # (one row per process)
print("guide shard_map ok")

# the current interfaces inside jax.shard_map (manual axes checked: outputs vary as their inputs)
kernel = wp.jax_kernel(multiply_by_two_kernel)
callable_ = wp.jax_callable(triple_func)
for name, wrapper, factor in (("jax_kernel", kernel, 2.0), ("jax_callable", callable_, 3.0)):
    run = jax.jit(jax.shard_map(lambda x, wrapper=wrapper: wrapper(x)[0], mesh=mesh, in_specs=P("x"),
                                out_specs=P("x")))
    np.testing.assert_array_equal(np.asarray(run(sharded_array)), factor * np.arange(input_size, dtype=np.float32))
    print(f"shard_map {name} ok")

# pmap: one row per device, each call on its own device's thread
rows = jnp.arange(num_devices * 8, dtype=jnp.float32).reshape(num_devices, 8)
for name, wrapper, factor in (("jax_kernel", kernel, 2.0), ("jax_callable", callable_, 3.0)):
    out = jax.pmap(lambda row, wrapper=wrapper: wrapper(row)[0])(rows)
    np.testing.assert_array_equal(np.asarray(out), factor * np.asarray(rows))
    print(f"pmap {name} ok")
