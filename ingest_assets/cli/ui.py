"""``ingest ui``: the Dagster UI (``dagster dev``) over one store, on that store's own instance.

The instance is the one ``ingest run`` records that store's runs in
(:func:`ingest_assets.defs.launch.dagster_home`), so the UI shows that store's runs,
materializations and plan keys and no other's. ``dagster dev`` replaces this process (Ctrl-C
stops it as it stops ``dagster dev``); it starts in the instance's folder, where no other
``dagster.yaml`` competes with the instance's, and loads the code location ``ingest`` from a
workspace file written there.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

from ingest_assets.cli.common import add_source_options
from ingest_assets.inbox import require_inbox
from ingest_assets.plans import load_plans
from ingest_assets.settings import STORE_VARIABLE, Settings

__all__ = ["HELP", "add_arguments", "dagster_dev", "run"]

HELP = "open the Dagster UI (dagster dev) over a store, on that store's own instance"

# The code location of pyproject.toml's [tool.dagster], as a workspace file names it.
LOCATION = {"module_name": "ingest_assets.definitions", "location_name": "ingest"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--inbox``, ``--db``, ``--plans`` (what the sensors read), ``--host`` and ``--port``."""
    add_source_options(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument("-p", "--port", type=int, default=3000, help="port to serve on (default 3000)")


def dagster_dev(settings: Settings, host: str, port: int) -> tuple[list[str], dict[str, str], Path]:
    """The ``dagster dev`` of ``settings``' store: its command line, environment and working
    folder (the store's instance, whose ``workspace.yaml`` this writes). The environment names
    the store, inbox and plans file by absolute paths, since the folder is not the caller's.
    """
    from ingest_assets.defs.launch import PROJECT_ROOT, dagster_home

    home = dagster_home(settings)
    workspace = home / "workspace.yaml"
    location = {**LOCATION, "working_directory": str(PROJECT_ROOT)}
    workspace.write_text(yaml.safe_dump({"load_from": [{"python_module": location}]}), encoding="utf-8")
    store = settings.database if settings.is_lake else str(Path(settings.database).resolve())
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        STORE_VARIABLE: store,
        "INGEST_INBOX": str(Path(settings.inbox).resolve()),
        "INGEST_PLANS": str(Path(settings.plans_file).resolve()),
    }
    if settings.lake_data:
        env["INGEST_LAKE_DATA"] = str(Path(settings.lake_data).resolve())
    command = [sys.executable, "-m", "dagster", "dev", "-h", host, "-p", str(port), "-w", str(workspace)]
    return command, env, home


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Check the plans file and inbox, say which store and instance the UI shows, then become
    ``dagster dev``; returns only when it could not be started."""
    given = {"inbox": args.inbox, "database": args.db, "plans_file": args.plans}
    settings = settings.updated(**{k: v for k, v in given.items() if v})
    load_plans(settings.plans_file)  # a bad plans file is named now, not in the UI's load error
    require_inbox(settings.inbox)
    from ingest_assets.defs.launch import store_label

    command, env, home = dagster_dev(settings, args.host, args.port)
    print(
        f"ingest ui: store {store_label(settings)}, Dagster instance {home}; "
        f"http://{args.host}:{args.port} once it has loaded",
        file=sys.stderr,
    )
    sys.stderr.flush()
    os.chdir(home)
    os.execve(command[0], command, env)
    return 1  # not reached: execve replaces this process or raises OSError
