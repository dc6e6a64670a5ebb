"""The store's error type (no Dagster here)."""

__all__ = ["StoreError"]


class StoreError(RuntimeError):
    """The store file cannot be used as it is; the message says why and what to do."""
