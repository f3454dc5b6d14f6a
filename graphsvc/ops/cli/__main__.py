"""``python -m graphsvc.ops.cli``: the ``graphsvc`` console script without an install."""

import sys

from graphsvc.ops.cli.root import main

sys.exit(main())
