"""`python -m webapp.cli`: the `session-tree` command (the benchmarks and some tests run it so)."""

import sys

from . import main

sys.exit(main())
