"""Shared helpers of the reliability tests; the figures they add up (``FIGURES``) are printed at
the end of the session (tests/figures.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from ingest_assets.plans import _plans_at
from ingest_assets.store import IngestStore, invariants
from tests.figures import FIGURES
from tests.ingest.conftest import SAMPLE, plan_spec

__all__ = ["FIGURES"]

ROOT = Path(__file__).resolve().parents[2]


def write_plans(path: Path, **plans: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"plans": plans or {"default": plan_spec()}}))
    _plans_at.cache_clear()
    return path


def copy_sample(inbox: Path) -> Path:
    shutil.copytree(SAMPLE, inbox, dirs_exist_ok=True)
    return inbox


def dagster_home(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "dagster.yaml", folder / "dagster.yaml")  # telemetry off
    return folder


def cli_in_process(args: list[str], home: Path) -> tuple[int, str, str]:
    """Run ``ingest_assets.cli.main`` (what ``ingest`` runs) here; returns (code, stdout, stderr)."""
    from ingest_assets.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in ("DAGSTER_HOME", "INGEST_MAX_BYTES", "INGEST_MAX_PAGES",
                                            "INGEST_MAX_ROWS")}  # fmt: skip
    os.environ["DAGSTER_HOME"] = str(dagster_home(home))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return code, out.getvalue(), err.getvalue()


def cli_command(tmp: Path, inbox: Path, db: Path, plans: Path, home: str = "home") -> tuple[list[str], dict]:
    """The ``ingest run`` command line (as a subprocess) and its environment."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(dagster_home(tmp / home))}
    env.pop("INGEST_DEBUG", None)
    args = [sys.executable, "-m", "ingest_assets.cli", "run", "--inbox", str(inbox), "--db", str(db),
            "--plans", str(plans), "--json"]  # fmt: skip
    return args, env


def run_cli(tmp: Path, inbox: Path, db: Path, plans: Path, home: str = "home") -> dict[str, Any]:
    args, env = cli_command(tmp, inbox, db, plans, home)
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def consistency_violations(store: IngestStore) -> list[str]:
    """Everything that would make the store inconsistent after a crash: partial or duplicated sets,
    duplicate ids, orphans, children outside parents, dangling edges."""
    bad: list[str] = []
    for level in (0, 1):
        bad += invariants.unique_ids(store, level)
    bad += invariants.no_orphans(store)
    bad += invariants.parent_covers_children(store)
    bad += invariants.graph_edges_resolve(store)
    partial = store.query(
        "SELECT s.set_key, s.chunk_count, count(c.id) FROM chunk_sets s "
        "LEFT JOIN chunks c ON c.set_key = s.set_key GROUP BY ALL HAVING count(c.id) <> s.chunk_count"
    )
    bad += [f"chunk set {k} holds {n} rows, recorded {want}" for k, want, n in partial]
    partial_graphs = store.query(
        "SELECT s.set_key FROM graph_sets s LEFT JOIN graph_node_rows n ON n.set_key = s.set_key "
        "GROUP BY s.set_key, s.node_count HAVING count(n.id) <> s.node_count"
    )
    bad += [f"graph set {k} is partial" for (k,) in partial_graphs]
    duplicates = store.query("SELECT set_key, id FROM chunks GROUP BY ALL HAVING count(*) > 1 LIMIT 5")
    bad += [f"chunk {i} twice in set {k}" for k, i in duplicates]
    # Promotions are rows: two for one (plan, document) with the same seq would be two writers
    # each promoting what it saw, and the views could serve either.
    twice = store.query(
        "SELECT plan_key, document_id, seq FROM promotions GROUP BY ALL HAVING count(*) > 1 LIMIT 5"
    )
    bad += [f"{plan}: document {doc} promoted twice as number {seq}" for plan, doc, seq in twice]
    orphan_rows = store.query(
        "SELECT count(*) FROM chunks c "
        "WHERE NOT EXISTS (SELECT 1 FROM chunk_sets s WHERE s.set_key = c.set_key)"
    )[0][0]
    if orphan_rows:
        bad.append(f"{orphan_rows} chunk rows belong to no chunk set")
    return bad


def missing_sets(store: IngestStore) -> list[str]:
    """(plan, document, role) a complete run must have made: each live plan serves a parent, child
    and graph set of the current version of every current document (documents that failed are
    not current)."""
    rows = store.query(
        "SELECT p.plan_key, d.source_uri, r.role FROM plan_status p, current_documents d, "
        "(VALUES ('parent'), ('child'), ('graph')) r(role) WHERE p.state = 'live' AND NOT EXISTS ("
        "SELECT 1 FROM current_members m WHERE m.plan_key = p.plan_key "
        "AND m.document_id = d.document_id AND m.version_id = d.version_id AND m.role = r.role)"
    )
    return [f"{plan}: {uri} has no {role} set" for plan, uri, role in rows]


def rows_lost(store: IngestStore) -> int:
    """Rows a set records but does not hold, plus sets a complete run should have and lacks."""
    lost = store.query(
        "SELECT coalesce(sum(s.chunk_count - coalesce(c.n, 0)), 0) FROM chunk_sets s LEFT JOIN "
        "(SELECT set_key, count(*) n FROM chunks GROUP BY set_key) c USING (set_key)"
    )[0][0]
    return int(lost) + len(missing_sets(store))
