"""The ``ingest`` command line: one argparse parser (:mod:`.parser`), one module per command.

=============  =====================================================================
module         command
=============  =====================================================================
``parser``     the parser, its subcommands, :func:`main` (the console script) and errors
``run``        ``ingest run``: the asset graph through Dagster, over what has work
``plans``      ``ingest plans``: plan keys with their settings and states
``forecast``   ``ingest plans --diff``: what a run of a plans file would do, read-only
``changes``    ``ingest changes``: chunk ids that entered and left the views, per run
``export``     ``ingest export``: a plan's chunks, graph and vectors to a folder
``verify``     ``ingest verify``: the chunk contract over every stored set
``search``     ``ingest search``: the child chunks nearest to a query
``inspect``    ``ingest inspect``: a file's chunks under a plan (``chunking.inspect``)
``shards``     ``ingest shards``: the pipeline over some shards, one writer of several
``ui``         ``ingest ui``: ``dagster dev`` over a store, on that store's own instance
``common``     what several commands share: the store a command reads, bad input
``progress``   progress bars and step logs of ``ingest run`` on stderr
=============  =====================================================================

Only ``run``, ``shards`` and ``ui`` reach the Dagster side (``ingest_assets.defs.launch``), inside
a function (``run`` only when there are runs to launch); ``defs/`` never imports this package.
"""

from ingest_assets.cli.parser import main
from ingest_assets.cli.run import run_pipeline

__all__ = ["main", "run_pipeline"]
