"""``python -m fastboost ...``: the same as the ``fastboost`` command."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
