"""The one reuse decision: what a step does for one document and one role (no Dagster, no I/O).

The chunk steps and the graph step act on it, ``pending()`` asks it whether a partition has
work, and the dry run (``ingest plans --diff``) counts by it, so the three cannot drift.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Reuse", "decide"]


class Reuse(StrEnum):
    """What to do for one document and role of a plan."""

    KEEP = "keep"  # the plan points at the stored set already: nothing to write
    RELINK = "relink"  # the set is stored (another plan or version made it): point the plan at it
    SKIP = "skip"  # this content failed under the plan before: not tried again until it changes
    CREATE = "create"  # chunk (or build) the set, store it, point the plan at it

    @property
    def reused(self) -> bool:
        """Whether the set is reused (kept or relinked) rather than made."""
        return self in (Reuse.KEEP, Reuse.RELINK)

    @property
    def work(self) -> bool:
        """Whether a step has something to write."""
        return self in (Reuse.RELINK, Reuse.CREATE)


def decide(member: tuple[str, str] | None, key: str, based_on: str, *, stored: bool, failed: bool) -> Reuse:
    """The decision for a document whose plan should point at set ``key`` cut from (or built
    over) ``based_on``, given the plan's current pointer ``member`` (``(set key, based on)``, or
    None), whether ``key`` is ``stored``, and whether the document's content ``failed`` this
    role under the plan before. A stored set is always reused; a set that is not stored is made
    unless its content failed."""
    if stored:
        return Reuse.KEEP if member == (key, based_on) else Reuse.RELINK
    return Reuse.SKIP if failed else Reuse.CREATE
