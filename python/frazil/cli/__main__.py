"""``python -m frazil.cli``: the ``frazil`` command without its entry-point script."""

import sys

from frazil.cli import main

if __name__ == "__main__":
    # Guarded: importing this module (tools that walk the package) must not run the command.
    sys.exit(main())
