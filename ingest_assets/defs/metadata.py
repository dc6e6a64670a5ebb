"""Step results as Dagster metadata, for the UI (run summaries are read from the store, not
from here: see ``ingest_assets.engine.summary``).

Each number of a result is one metadata entry under its field's name, so the UI plots it per
partition; the kinds parsed are JSON, the failures and the preview Markdown tables whose
document column is the file name.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from dagster import MetadataValue

from ingest_assets.engine import ChunkResult, FailedFile, StepResult
from ingest_assets.inbox import file_name
from ingest_assets.plans import Plan

__all__ = ["md_cell", "plans_table", "result_metadata"]


def md_cell(text: str, limit: int = 80) -> str:
    """``text`` on one line of a Markdown table cell, pipes escaped, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    return flat.replace("\\", "\\\\").replace("|", "\\|")


def _failures_table(failures: list[FailedFile]) -> str:
    lines = ["| file | message |", "|---|---|"]
    lines += [f"| {md_cell(file_name(f.source_uri))} | {md_cell(f.message, 300)} |" for f in failures[:20]]
    if len(failures) > 20:
        lines.append(f"| … | {len(failures) - 20} more: query ingest_failures |")
    return "\n".join(lines)


def result_metadata(result: StepResult) -> dict[str, Any]:
    """The metadata of a step's result (see the module docstring)."""
    metadata: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if f.name in ("sets", "role"):
            continue
        if f.name == "failures":
            if value:
                metadata["failures"] = MetadataValue.md(_failures_table(value))
        elif f.name == "skipped_files":
            if value:
                metadata["skipped_files"] = MetadataValue.md("\n".join(f"- {md_cell(v, 300)}" for v in value))
        elif isinstance(value, dict):
            metadata[f.name] = MetadataValue.json(value)
        else:
            metadata[f.name] = value
    if isinstance(result, ChunkResult):
        sizes = result.sizes
        metadata.update(
            chunks=sizes.chunks,
            tokens_min=sizes.tokens_min,
            tokens_mean=sizes.tokens_mean,
            tokens_max=sizes.tokens_max,
        )
        lines = ["| document | index | tokens | text |", "|---|---|---|---|"]
        lines += [
            f"| {md_cell(file_name(p.source_uri))} | {p.index} | {p.tokens} | {md_cell(p.text)} |"
            for p in sizes.preview
        ]
        metadata["preview"] = MetadataValue.md("\n".join(lines))
    return metadata


def plans_table(plans: list[Plan]) -> str:
    """The live plans of the plans file as a Markdown table: key, kinds, parent and child settings.

    Plan partitions not listed here serve until their plan's new key is built, then retire:
    their sets stay stored (putting the settings back reuses them).
    """
    lines = ["| plan key | kinds | parent | child |", "|---|---|---|---|"]
    for plan in plans:
        for kind, route in plan.settings().items():
            parent, child = (json.dumps(route[role], sort_keys=True) for role in ("parent", "child"))
            lines.append(f"| {plan.key} | {md_cell(kind)} | {md_cell(parent, 400)} | {md_cell(child, 400)} |")
    lines.append("")
    lines.append(
        "Plan partitions not in this table serve until their plan's new key is built, then retire "
        "(kept, with their history). `ingest plans` shows each key's state."
    )
    return "\n".join(lines)
