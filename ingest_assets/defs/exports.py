"""``export_job``: ``ingest export`` from the UI (Launchpad: plan, format, target folder, since).

The op calls :func:`ingest_assets.exports.export_plan` on the code location's store; bad input
(unknown plan or format, a folder that is not new or not writable, a ``since`` that names no
export) fails the run with the same message ``ingest export`` prints, naming the fix.
"""

from dagster import Config, Failure, MetadataValue, OpExecutionContext, Output, job, op
from pydantic import Field

from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.exports import FORMATS, ExportError, export_plan
from ingest_assets.store.plan_names import UnknownPlan, resolve_plan

__all__ = ["ExportConfig", "export_job"]


class ExportConfig(Config):
    """What to export, in what format, where (see docs/exports.md)."""

    plan: str = Field(description="A plan name of the plans file, or a plan key.")
    format: str = Field(default="parquet", description=f"One of: {', '.join(FORMATS)}.")
    target_folder: str = Field(description="A new or empty folder the export is written to.")
    since: str | None = Field(
        default=None, description="An earlier export (its folder or export_id): write only what changed."
    )


@op
def export_plan_op(context: OpExecutionContext, config: ExportConfig, store: DuckDBStore) -> Output[str]:
    """Export one plan's current chunks, graph nodes and edges; the manifest is the output's metadata."""
    view = store.store()
    try:
        plan_key = resolve_plan(view, config.plan, "plan", served=True)
        result = export_plan(view, plan_key, config.format, config.target_folder, config.since)
    except (ExportError, UnknownPlan) as error:
        raise Failure(description=str(error)) from None
    manifest = result.manifest
    context.log.info(f"export {manifest['export_id']} written to {result.folder}")
    metadata = {
        "export_id": manifest["export_id"],
        "plan": manifest["plan_key"],
        "format": manifest["format"],
        "folder": MetadataValue.path(str(result.folder)),
        "base": manifest["base"]["export_id"] if manifest["base"] else "full export",
        "seconds": round(result.seconds, 3),
        **{f"{name}_written": n for name, n in manifest["rows"].items()},
        **{f"{name}_removed": n for name, n in manifest["removed"].items()},
        "manifest": MetadataValue.json(manifest),
    }
    return Output(str(result.folder / "manifest.json"), metadata=metadata)


@job(description="Write a plan's chunks, graph nodes and edges to a folder (ingest export).")
def export_job() -> None:
    export_plan_op()
