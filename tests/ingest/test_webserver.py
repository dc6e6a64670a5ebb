"""The webserver loads the code location and serves the asset graph and partitions over GraphQL.

The server runs in its own process group (``dagster-webserver`` spawns a code server) and
the whole group is killed by its id at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dagster import DagsterInstance

ROOT = Path(__file__).resolve().parents[2]
QUERY = """
{
  assetNodes { assetKey { path } }
  assetNodeOrError(assetKey: {path: ["parent_chunks"]}) {
    ... on AssetNode { partitionKeysByDimension { name partitionKeys } }
  }
}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["data"]


def test_webserver_serves_asset_graph_and_partitions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "INGEST_PLANS": str(ROOT / "plans.yaml"),
    }
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with DagsterInstance.get() as instance:
            instance.add_dynamic_partitions("plan", ["default-0123456789abcdef"])
    finally:
        del os.environ["DAGSTER_HOME"]
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster-webserver"), "-m", "ingest_assets.definitions",
         "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        data = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                data = _graphql(port, QUERY)
                if data and data.get("assetNodes"):
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert data is not None, "webserver did not answer"
        keys = {"/".join(node["assetKey"]["path"]) for node in data["assetNodes"]}
        assert keys == {"sources", "documents", "parent_chunks", "child_chunks", "graph_nodes", "embeddings"}
        dims = {d["name"]: d["partitionKeys"] for d in data["assetNodeOrError"]["partitionKeysByDimension"]}
        assert dims["plan"] == ["default-0123456789abcdef"]
        assert dims["shard"] == [f"{i:02d}" for i in range(8)]
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
