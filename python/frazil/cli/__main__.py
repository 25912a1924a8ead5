"""``python -m frazil.cli``: the ``frazil`` command without its entry-point script."""

import sys

from frazil.cli import main

sys.exit(main())
