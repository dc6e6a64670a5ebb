"""``ingest inspect FILE [--plan NAME]``: a file's parent and child chunks under a plan, with
token counts and labels; the library's own command (:mod:`chunking.inspect`) as a subcommand."""

from __future__ import annotations

import argparse
from pathlib import Path

from chunking import inspect as chunk_inspect
from ingest_assets.settings import Settings

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print a file's parent and child chunks under a plan (FILE --plan NAME)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``python -m chunking.inspect``; ``--plans`` defaults to the settings'
    plans file (``INGEST_PLANS``), as every other command's does."""
    chunk_inspect.add_arguments(parser, plans_default="$INGEST_PLANS or plans.yaml")
    parser.set_defaults(plans=None)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print the chunks of the file as ``ingest run`` would parse it (its limits:
    ``INGEST_MAX_BYTES`` and the rest); 0, or 1 with the error on stderr."""
    args.plans = Path(args.plans or settings.plans_file)
    return chunk_inspect.run(args, limits=settings.limits, name="ingest")
