"""Stored chunk sets never re-chunk because of how settings are spelled or read.

Every plan and chunker of ``fingerprint_cases`` must give the fingerprints of
``fingerprint_baseline.json`` (taken before the typed plan model), with the code versions and
tokenizer identities pinned to those the baseline was taken under: a version bump is meant to
move fingerprints, a refactor never is.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chunking import versions
from chunking.tokenizers import load_tokenizer
from tests.ingest import fingerprint_cases as cases

BASELINE = json.loads(cases.BASELINE.read_text())
# The cases are spelled as they were, old names included: their warnings are expected here.
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated:DeprecationWarning")


def _pin(monkeypatch: pytest.MonkeyPatch, recorded: dict[str, Any]) -> None:
    """Code versions and tokenizer identities read from ``recorded``, never from the code."""
    monkeypatch.setattr(versions, "resolve", lambda source: recorded["versions"][source])
    for name, identity in recorded["tokenizers"].items():
        monkeypatch.setattr(load_tokenizer(name), "identity", identity)


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code versions and tokenizer identities as they were when the baseline was taken."""
    _pin(monkeypatch, BASELINE["environment"])


def test_the_baseline_covers_the_cases() -> None:
    assert set(BASELINE["plans"]) == set(cases.plan_cases())
    assert set(BASELINE["chunkers"]) == set(cases.chunker_cases())


@pytest.mark.usefixtures("pinned")
def test_plans_keep_their_keys_and_route_fingerprints() -> None:
    assert cases.plan_fingerprints(cases.plan_cases()) == BASELINE["plans"]


@pytest.mark.usefixtures("pinned")
def test_chunkers_keep_their_fingerprints() -> None:
    assert cases.chunker_fingerprints(cases.chunker_cases()) == BASELINE["chunkers"]


def test_the_pin_holds_every_input_the_fingerprints_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned to today's environment, the fingerprints are today's: the pin covers every version
    and tokenizer identity a fingerprint reads (one it missed would raise or move a value), so
    the pinned tests above compare spelling alone."""

    def fingerprints() -> tuple[dict[str, Any], dict[str, Any]]:
        return cases.plan_fingerprints(cases.plan_cases()), cases.chunker_fingerprints(cases.chunker_cases())

    environment = cases.environment()
    today = fingerprints()
    _pin(monkeypatch, environment)
    assert fingerprints() == today
    # And the pin does decide: the baseline's versions give the baseline's keys, other than today's
    # whenever the versions moved since.
    _pin(monkeypatch, BASELINE["environment"])
    pinned_to_baseline = cases.plan_fingerprints(cases.plan_cases())
    assert pinned_to_baseline == BASELINE["plans"]
    assert (pinned_to_baseline == today[0]) == (environment == BASELINE["environment"])


def _respelled(spec: Any) -> Any:
    """``spec`` with every section chunker's ``size`` written ``chunk_size`` (the one name)."""
    if isinstance(spec, dict):
        out = {key: _respelled(value) for key, value in spec.items()}
        if out.get("strategy") == "section" and "size" in out:
            out["chunk_size"] = out.pop("size")
        return out
    return spec


@pytest.mark.usefixtures("pinned")
def test_the_new_spelling_gives_the_same_fingerprints() -> None:
    plans = {case: _respelled(spec) for case, spec in cases.plan_cases().items()}
    chunkers = {case: _respelled(spec) for case, spec in cases.chunker_cases().items()}
    assert cases.plan_fingerprints(plans) == BASELINE["plans"]
    assert cases.chunker_fingerprints(chunkers) == BASELINE["chunkers"]


@pytest.mark.usefixtures("pinned")
def test_stored_settings_of_either_spelling_give_the_chunker_fingerprint() -> None:
    """The store checks budgets by the fingerprint of a plan's stored settings: rows written
    before the rename (``size``) and after (``chunk_size``) both find their chunker."""
    from chunking import chunker_from_settings
    from chunking.chunkers.base import fingerprint_of

    for case, spec in cases.chunker_cases().items():
        settings = chunker_from_settings(dict(spec)).settings()
        old = {
            ("size" if k == "chunk_size" and settings["strategy"] == "section" else k): v
            for k, v in settings.items()
        }
        assert fingerprint_of(settings) == fingerprint_of(old) == BASELINE["chunkers"][case], case
