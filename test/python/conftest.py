"""Shared pytest setup: a private kernel cache for the whole test session."""

import os
import tempfile

# Set before any kernel compiles, so tests never touch (or trust) the user's cache.
os.environ.setdefault("MLWARP_CACHE_DIR", tempfile.mkdtemp(prefix="mlwarp-test-cache-"))
