"""The code location: ``dagster dev`` (``[tool.dagster] module_name``) loads ``defs`` from here."""

from ingest_assets.defs import build_definitions

defs = build_definitions()
