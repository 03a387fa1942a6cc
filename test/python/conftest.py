"""Shared pytest setup: a private kernel cache for the whole test session."""

import os
import tempfile

# Set before any kernel compiles, so tests never touch (or trust) the user's cache.
os.environ.setdefault("MLWARP_CACHE_DIR", tempfile.mkdtemp(prefix="mlwarp-test-cache-"))


def pytest_configure(config):
    config.addinivalue_line("markers", "mlwarp_last: run after every other test (test_cuda_ptx_suite.py compiles "
                                       "the kernels the session launched for sm_90)")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("mlwarp_last") is not None)  # stable: order kept otherwise
