"""Durable storage of finished trajectories (Parquet shards readable by pandas/duckdb/pyarrow)."""

from distrl.store.parquet_store import (
    STORE_FORMAT_VERSION,
    TRAJECTORY_SCHEMA,
    StoreError,
    TrajectoryStore,
)

__all__ = ["STORE_FORMAT_VERSION", "TRAJECTORY_SCHEMA", "StoreError", "TrajectoryStore"]
