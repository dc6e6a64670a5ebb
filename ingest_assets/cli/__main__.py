"""``python -m ingest_assets.cli``: the ``ingest`` console script."""

import sys

from ingest_assets.cli.parser import main

if __name__ == "__main__":
    sys.exit(main())
