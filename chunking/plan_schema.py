"""The JSON schema of the plans file, generated from its model (:class:`chunking.plans.PlansFile`).

``docs/plans.schema.json`` is this schema, committed; ``plans.yaml`` names it in a
``# yaml-language-server: $schema=...`` comment, so editors with a YAML language server
complete and check plans. A test holds the committed file equal to :func:`plans_schema`; after
a change to a chunker's settings, write it again:

    python -m chunking.plan_schema --write
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chunking.plans import PlansFile

__all__ = ["SCHEMA_FILE", "plans_schema", "schema_text"]

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "plans.schema.json"
_ID = "https://fingerprint-ingest.invalid/plans.schema.json"


def plans_schema() -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a plans file."""
    schema = PlansFile.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _ID,
        **schema,
        "title": "plans.yaml",
    }


def schema_text() -> str:
    """:func:`plans_schema` as the committed file holds it (sorted keys, a newline at the end)."""
    return json.dumps(plans_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the schema, or write it to ``docs/plans.schema.json`` with ``--write``."""
    summary = __doc__.split("\n\n")[0]
    parser = argparse.ArgumentParser(prog="python -m chunking.plan_schema", description=summary)
    parser.add_argument("--write", action="store_true", help=f"write {SCHEMA_FILE.name} under docs/")
    args = parser.parse_args(argv)
    if args.write:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
    else:
        print(schema_text(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
