"""Warp's device queries on the CPU (no CUDA device is needed): memory pools, peer access, architectures, and
the CPU device's CUDA attributes, as Warp answers them for its CPU device."""
import pytest

import mlwarp as wp


def test_cpu_device_cuda_attributes():
    cpu = wp.get_device("cpu")
    assert (cpu.sm_count, cpu.max_shared_memory_per_block, cpu.ordinal) == (0, 0, -1)
    assert cpu.is_mempool_supported is False and cpu.is_mempool_enabled is False


def test_pool_and_peer_queries_are_false_for_the_cpu():
    assert wp.is_mempool_enabled("cpu") is False
    assert wp.is_mempool_supported("cpu") is False
    assert wp.is_mempool_access_supported("cpu", "cpu") is False
    assert wp.is_mempool_access_enabled("cpu", "cpu") is False
    assert wp.is_peer_access_supported("cpu", "cpu") is False
    assert wp.is_peer_access_enabled("cpu", "cpu") is False


def test_supported_archs():
    archs = wp.get_cuda_supported_archs()
    assert isinstance(archs, list)
    if not wp.is_cuda_available():
        assert archs == []
    else:
        assert archs == sorted(archs) and 90 in archs and all(isinstance(a, int) for a in archs)


@pytest.mark.parametrize("alias", ["imaginary_device:0", "cpu"])
def test_unmap_rejects_what_is_no_cuda_device(alias):
    with pytest.raises(RuntimeError) as e:
        wp.unmap_cuda_device(alias)
    assert str(e.value) == f"Invalid CUDA device alias '{alias}'"
    assert wp.get_device("cpu").alias == "cpu"  # still there
