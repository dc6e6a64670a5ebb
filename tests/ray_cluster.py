"""A real Ray cluster of two nodes on this machine, for the Ray executor's tests and benchmark.

Each node is a ``ray start`` with one CPU, its own temp dir (sockets, logs, object store) and
its own process group, on loopback addresses and free ports only, usage reporting off; nothing
is downloaded. Leaving the context ends both nodes' processes, whatever happened inside.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

__all__ = ["NODE_IP", "free_ports", "two_node_cluster"]

# The nodes listen on a loopback address other than 127.0.0.1, which Ray would replace with the
# machine's outward address.
NODE_IP = "127.0.0.2"
RAY = Path(sys.executable).with_name("ray")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports (all held open until all are chosen)."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


@contextmanager
def two_node_cluster() -> Iterator[str]:
    """Start a head and a second node, one CPU each; yield the head's address (``host:port``)."""
    groups: list[int] = []
    dirs = [tempfile.mkdtemp(prefix="rayh", dir="/tmp"), tempfile.mkdtemp(prefix="rayw", dir="/tmp")]
    try:
        port, dashboard, client = free_ports(3)
        address = f"{NODE_IP}:{port}"
        _start_node(
            ["--head", f"--port={port}", "--include-dashboard=false", f"--dashboard-port={dashboard}",
             f"--ray-client-server-port={client}", "--disable-usage-stats"],
            dirs[0], groups,
        )  # fmt: skip
        _start_node([f"--address={address}"], dirs[1], groups)
        yield address
    finally:
        _stop_groups(groups)
        for path in dirs:
            shutil.rmtree(path, ignore_errors=True)


def _start_node(args: list[str], temp_dir: str, groups: list[int]) -> None:
    """``ray start`` one node with one CPU in its own process group (its daemons stay in it)."""
    agent, grpc, runtime_env, metrics, manager, objects = free_ports(6)
    command = [
        str(RAY), "start", f"--node-ip-address={NODE_IP}", "--num-cpus=1",
        "--object-store-memory=80000000", f"--temp-dir={temp_dir}",
        f"--dashboard-agent-listen-port={agent}", f"--dashboard-agent-grpc-port={grpc}",
        f"--runtime-env-agent-port={runtime_env}", f"--metrics-export-port={metrics}",
        f"--node-manager-port={manager}", f"--object-manager-port={objects}", *args,
    ]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    process = subprocess.Popen(
        command, start_new_session=True, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    groups.append(process.pid)
    output, _ = process.communicate(timeout=180)
    if process.returncode != 0:
        raise RuntimeError(f"ray start failed:\n{output}")


def _stop_groups(groups: list[int]) -> None:
    """End the nodes' process groups: a polite signal, then a hard one for what lingers (Ray's
    GCS server does not end on the first), then wait until they are gone (dying daemons may
    still write into the temp dirs)."""
    _signal(groups, signal.SIGTERM, wait=5)
    _signal(groups, signal.SIGKILL, wait=10)


def _signal(groups: list[int], sig: signal.Signals, wait: float) -> None:
    """Send ``sig`` to every group, then wait up to ``wait`` seconds for all to be gone."""
    for group in groups:
        with suppress(ProcessLookupError):
            os.killpg(group, sig)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(_group_alive(group) for group in groups):
        time.sleep(0.1)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
