"""``python -m statespace``: the command line (see :mod:`statespace.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
