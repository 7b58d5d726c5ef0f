"""``python -m statespace``: the command line (see :mod:`statespace.app.cli`)."""

import sys

from statespace.app.cli import main

if __name__ == "__main__":
    sys.exit(main())
