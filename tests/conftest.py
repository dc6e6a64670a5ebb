"""Fixtures every test folder shares: the store backends (tests/lake/postgres.py)."""

from tests.lake.postgres import backend, postgres_cluster

__all__ = ["backend", "postgres_cluster"]
