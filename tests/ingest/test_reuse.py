"""The one reuse decision the steps, ``pending()`` and the dry run share (engine/reuse.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ingest_assets.engine.reuse import Reuse, decide

ENGINE = Path(__file__).resolve().parents[2] / "ingest_assets" / "engine"


@pytest.mark.parametrize(
    ("member", "stored", "failed", "expected"),
    [
        (("s", "p"), True, False, Reuse.KEEP),  # pointed at, stored: nothing to do
        (("s", "p"), True, True, Reuse.KEEP),  # a failure of older content does not matter
        (("old", "p"), True, False, Reuse.RELINK),  # stored by another plan or an earlier run
        (("s", "other parent"), True, False, Reuse.RELINK),  # cut from other parents: repoint
        (None, True, False, Reuse.RELINK),
        (None, False, False, Reuse.CREATE),
        (("s", "p"), False, False, Reuse.CREATE),  # a pointer at a set that is not stored
        (None, False, True, Reuse.SKIP),  # this content failed under the plan: not again
    ],
)
def test_the_decision_table(
    member: tuple[str, str] | None, stored: bool, failed: bool, expected: Reuse
) -> None:
    decision = decide(member, "s", "p", stored=stored, failed=failed)
    assert decision is expected
    assert decision.reused == (expected in (Reuse.KEEP, Reuse.RELINK))
    assert decision.work == (expected in (Reuse.RELINK, Reuse.CREATE))


def test_the_steps_pending_and_the_dry_run_all_decide_through_it() -> None:
    """Each place that decides whether a set is made or reused calls ``decide``, so a change to
    the rule changes all of them at once."""
    callers = {
        path.name
        for path in ENGINE.glob("*.py")
        if any(
            isinstance(node, ast.Call) and getattr(node.func, "id", None) == "decide"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    }
    assert callers == {"chunk.py", "graph.py", "pending.py", "forecast.py"}
