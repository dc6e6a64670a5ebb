"""The one parser of ``ingest``: a subcommand per command module, and :func:`main`.

Each command module has ``HELP`` (its line in ``ingest --help``), ``add_arguments(parser)``
(its flags, on its subparser) and ``run(args) -> int`` (its exit code). :func:`main` turns
the errors every command can meet into one line on stderr: an invalid plans file exits 2, bad
input, a store or a run that failed exit 1, anything else exits 1 with a request to report it
(``INGEST_DEBUG=1`` shows the traceback); a closed stdout (``| head``) exits 1 without a word.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from types import ModuleType

from ingest_assets.cli import changes, export, inspect, plans, run, search, shards, ui, verify
from ingest_assets.plans import PlanError
from ingest_assets.settings import Settings

__all__ = ["COMMANDS", "build_parser", "main"]

# In the order ``ingest --help`` lists them.
COMMANDS: dict[str, ModuleType] = {
    "run": run,
    "plans": plans,
    "changes": changes,
    "export": export,
    "verify": verify,
    "search": search,
    "inspect": inspect,
    "shards": shards,
    "ui": ui,
}


def build_parser() -> argparse.ArgumentParser:
    """The ``ingest`` parser: each command of :data:`COMMANDS` a subcommand whose ``handler``
    default is its module's ``run``."""
    parser = argparse.ArgumentParser(prog="ingest", description="Fingerprint-versioned document ingestion.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, module in COMMANDS.items():
        sub = commands.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run)
    return parser


def _stdout_to_devnull() -> None:
    """Point stdout at ``os.devnull``, so what is left in its buffer goes nowhere at exit.

    The recipe of Python's ``signal`` docs (note on SIGPIPE): Python ignores SIGPIPE, so a write
    to a pipe whose reader exited raises :class:`BrokenPipeError`, and the flush at exit would
    raise it again ("Exception ignored ... BrokenPipeError").
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ingest`` console script; returns the exit code.

    Called as the program (``argv`` None: the console script, ``python -m``), it leaves the
    objects it made to the process's end: the collector's passes over them at exit cost
    0.4-0.5 s once Dagster is loaded (its definitions, instance and runs), a tenth of a
    one-file edit. Exit handlers still run.

    Output into a pipe whose reader left (``ingest plans | head -1``) ends the command quietly
    with exit code 1, as Python itself exits on a broken pipe.
    """
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    settings: Settings | None = None
    try:
        # The one read of the environment: every command is given these settings.
        settings = Settings.from_env()
        code = int(args.handler(args, settings))
        sys.stdout.flush()  # a closed pipe fails here, not in Python's flush at exit
        if argv is None:
            gc.freeze()
        return code
    except BrokenPipeError:  # before OSError: the reader left (`ingest changes --json | head -1`)
        if argv is None:
            _stdout_to_devnull()
        return 1
    except PlanError as error:
        print(f"ingest: invalid plans: {error}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError, ValueError) as error:  # StoreError is a RuntimeError
        print(f"ingest: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # no traceback for the user; INGEST_DEBUG=1 shows it
        if settings is not None and settings.debug:
            raise
        print(
            f"ingest: unexpected error {error!r}; run again with INGEST_DEBUG=1 for the traceback "
            "and report it",
            file=sys.stderr,
        )
        return 1
