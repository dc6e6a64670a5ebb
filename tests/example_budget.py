"""How many examples a property test draws: its full budget in the ``full`` Hypothesis profile
(CI's second pass, ``pytest -m "slow or hypothesis" --hypothesis-profile full``), a quarter of it
in the default suite's ``quick`` profile, never fewer than ten.

The profiles are registered in ``tests/conftest.py``; a test states its full budget once,
``@settings(max_examples=examples(150))``, and a test with no budget of its own takes the
profile's (100 in ``full``, 25 in ``quick``)."""

from __future__ import annotations

from hypothesis import settings

FULL = 100  # Hypothesis's own default: the full budget of a test that states none
QUICK = 25


def examples(full: int) -> int:
    """``full`` scaled to the loaded profile (``full`` as it is in the full profile)."""
    return max(10, full * settings.default.max_examples // FULL)
