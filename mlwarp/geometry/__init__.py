"""Geometry structures that kernels query through a uint64 id, as in Warp (issue 17): wp.HashGrid and its
queries. docs/geometry.md says what exists, how the queries lower and what is missing."""

from .hashgrid import HashGrid, HashGridQuery, hash_grid_point_id, hash_grid_query, hash_grid_query_next  # noqa: F401

__all__ = ["HashGrid", "HashGridQuery", "hash_grid_query", "hash_grid_query_next", "hash_grid_point_id"]
