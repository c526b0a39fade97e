"""``python -m fastboost.bench``: the same as ``fastboost bench``."""
import sys

from fastboost.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
