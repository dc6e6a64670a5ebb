"""Fingerprints that must never move without a version bump: the plans the project and its tests
write, and chunkers across their settings, with the code versions they were taken under.

``fingerprint_baseline.json`` was written by this module on the code before the typed plan
model (main at 4853937), with the settings spelled as they were then (``size`` for the section
chunker). ``tests/ingest/test_plan_fingerprints.py`` computes them again, from the old and the
new spellings, with the code versions and tokenizer identities pinned to the recorded ones (so
a later version bump, which is meant to move fingerprints, does not fail it).

    python -m tests.ingest.fingerprint_cases --write   # take the baseline again (on purpose only)
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).with_name("fingerprint_baseline.json")
TOKENIZERS = ("character", "word", "cl100k_base", "o200k_base")
VERSION_SOURCES = (
    "SECTION_PACKER_VERSION",
    "SPLITTER_VERSION",
    "TABLE_RENDERING_VERSION",
    "TURN_WINDOW_VERSION",
    "package:chonkie",
)


def _routes(parent: int, child: int, chat_parent: int, chat_child: int, **extra: Any) -> dict[str, Any]:
    """A plan's routes as the test fixtures write them (tests/ingest/conftest.plan_spec)."""
    return {
        "routes": {
            "chat": {
                "parent": {"strategy": "turn-window", "chunk_size": chat_parent, **extra},
                "child": {"strategy": "recursive", "chunk_size": chat_child, **extra},
            },
            "*": {
                "parent": {"strategy": "section", "size": parent, **extra},
                "child": {"strategy": "section", "size": child, **extra},
            },
        }
    }


def plan_cases() -> dict[str, dict[str, Any]]:
    """Plans by case name, in the old spelling: the repository's plans.yaml, the fixtures'
    plan_spec over the sizes the tests use, the corpus and worker tests' plans."""
    cases: dict[str, dict[str, Any]] = {}
    for name, plan in yaml.safe_load((ROOT / "plans.yaml").read_text())["plans"].items():
        cases[f"plans.yaml:{name}"] = {k: v for k, v in plan.items() if k != "embedding"}
    for parent, child, chat_parent, chat_child in itertools.product(
        (600, 800, 900), (120, 150, 200, 250, 300), (300, 600), (120, 150, 200, 300)
    ):
        cases[f"plan_spec:{parent}/{child}/{chat_parent}/{chat_child}"] = _routes(
            parent, child, chat_parent, chat_child, tokenizer="character"
        )
    for child in (200, 256):
        cases[f"corpus_plan:{child}"] = _routes(1024, child, 1024, child)
    cases["workers"] = _routes(300, 60, 300, 60, tokenizer="cl100k_base")
    cases["section-only"] = {
        "routes": {"markdown": {"parent": {"strategy": "section"}, "child": {"strategy": "recursive"}}}
    }
    return cases


def chunker_cases() -> dict[str, dict[str, Any]]:
    """Chunker settings by case name, in the old spelling, over every field of each strategy."""
    cases: dict[str, dict[str, Any]] = {}
    for tokenizer in TOKENIZERS:
        tok = {"tokenizer": tokenizer}
        cases[f"section:default:{tokenizer}"] = {"strategy": "section", **tok}
        cases[f"recursive:default:{tokenizer}"] = {"strategy": "recursive", **tok}
        cases[f"turn-window:default:{tokenizer}"] = {"strategy": "turn-window", **tok}
        for size, min_size, cohesion, overlap in itertools.product(
            (64, 256, 1024), (None, 0, 10), (False, True), (0, 32)
        ):
            cases[f"section:{size}/{min_size}/{cohesion}/{overlap}:{tokenizer}"] = {
                "strategy": "section",
                "size": size,
                "min_size": min_size,
                "cohesion": cohesion,
                "overlap": overlap,
                **tok,
            }
        for size in (4, 128, 512):
            cases[f"recursive:{size}:{tokenizer}"] = {"strategy": "recursive", "chunk_size": size, **tok}
        for size, overlap in itertools.product((64, 300), (0, 1, 3)):
            cases[f"turn-window:{size}/{overlap}:{tokenizer}"] = {
                "strategy": "turn-window",
                "chunk_size": size,
                "turn_overlap": overlap,
                **tok,
            }
            cases[f"turn-window:{size}/{overlap}/fallback:{tokenizer}"] = {
                "strategy": "turn-window",
                "chunk_size": size,
                "turn_overlap": overlap,
                "fallback": {"strategy": "recursive", "chunk_size": 32, **tok},
                **tok,
            }
    cases["parent-child"] = {
        "strategy": "parent-child",
        "parent": {"strategy": "section", "size": 512},
        "child": {"strategy": "recursive", "chunk_size": 128},
    }
    return cases


def environment() -> dict[str, Any]:
    """The versions every fingerprint folds in: code versions and tokenizer identities."""
    from chunking import versions
    from chunking.tokenizers import load_tokenizer

    return {
        "versions": {source: versions.resolve(source) for source in VERSION_SOURCES},
        "tokenizers": {name: dict(load_tokenizer(name).identity) for name in TOKENIZERS},
    }


def plan_fingerprints(plans: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each plan's key and its routes' parent and child fingerprints, built by the pipeline."""
    from ingest_assets.plans import parse_plans

    out: dict[str, Any] = {}
    for case, spec in plans.items():
        (plan,) = parse_plans({"plans": {"p": spec}}, case)
        out[case] = {
            "key": plan.key,
            "routes": {
                kind: [route.parent_fingerprint, route.child_fingerprint]
                for kind, route in plan.routes.items()
            },
        }
    return out


def chunker_fingerprints(chunkers: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each chunker's fingerprint, built through the library's registry."""
    from chunking import chunker_from_settings

    return {case: chunker_from_settings(dict(spec)).fingerprint() for case, spec in chunkers.items()}


def take() -> dict[str, Any]:
    """The whole baseline: environment, plans and chunkers."""
    return {
        "environment": environment(),
        "plans": plan_fingerprints(plan_cases()),
        "chunkers": chunker_fingerprints(chunker_cases()),
    }


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.ingest.fingerprint_cases --write")
    BASELINE.write_text(json.dumps(take(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {BASELINE}")
