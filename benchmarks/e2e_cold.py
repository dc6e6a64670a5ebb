"""One step of a peer as a user runs it: a new Python process that imports the peer's library,
loads the model, runs the step on the stores a previous process left on disk, and exits.

``ingest run`` is timed that way (a child process: interpreter start-up, imports, the model's
load and its work), so ``bench_end_to_end.py`` times each peer that way too, beside its step in
the benchmark's own process (warm: imports done, model loaded before the clock). Run by
:class:`benchmarks.bench_end_to_end.ColdPeer`::

    python -m benchmarks.e2e_cold SYSTEM ROOT CHILD [BYTES_PER_TOKEN]

``ROOT`` is the system's workspace (``ROOT/inbox``, its stores beside); ``BYTES_PER_TOKEN`` is
CocoIndex's chunk size in bytes per token, measured once by the benchmark (a user writes a
number there; parsing the corpus to find it is not part of the peer's work). The last line of
stdout is the step's report as JSON, with the wall-clock times just before the step began
(``ready_at``) and after it returned (``done_at``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class _Workspace:
    """What a peer reads of the benchmark's workspace, without copying the corpus again."""

    def __init__(self, root: Path, child: int) -> None:
        self.root, self.inbox, self.child = root, root / "inbox", child


# Each peer's module (under benchmarks/) and class; bench_end_to_end runs the same ones.
PEERS = {
    "langchain": ("e2e_peers", "LangChainIndex"),
    "llamaindex": ("e2e_peers", "LlamaIndexPipeline"),
    "cocoindex": ("e2e_cocoindex", "CocoIndexApp"),
}


def peer_class(key: str) -> Any:
    """The class of peer ``key`` (ImportError: its library is not installed)."""
    import importlib

    module, cls = PEERS[key]
    return getattr(importlib.import_module(f"benchmarks.{module}"), cls)


def _system(key: str, ws: _Workspace, bytes_per_token: float | None) -> Any:
    from benchmarks.e2e_peers import ModelCounter

    if key not in PEERS:
        raise SystemExit(f"unknown system {key!r}: {', '.join(PEERS)}")
    if key == "cocoindex":
        if bytes_per_token is None:
            raise SystemExit("cocoindex needs BYTES_PER_TOKEN")
        return peer_class(key)(ws, ModelCounter(), bytes_per_token)
    return peer_class(key)(ws, ModelCounter())


def main(argv: list[str]) -> int:
    key, root, child = argv[0], Path(argv[1]), int(argv[2])
    bytes_per_token = float(argv[3]) if len(argv) > 3 else None
    system = _system(key, _Workspace(root, child), bytes_per_token)
    # Wall-clock marks around the step, so the parent can leave out the benchmark's own
    # bookkeeping inside it (reading the store before and after, counting tokens), which is
    # outside the step's clock (its "seconds"), as it is outside ``ingest run``'s.
    ready_at = time.time()
    report = system.step()
    print(json.dumps({**report, "ready_at": ready_at, "done_at": time.time()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
