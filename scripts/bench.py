#!/usr/bin/env python
"""Same as ``fastboost bench`` (see ``fastboost/bench/``), using this checkout's fastboost.

    python scripts/bench.py --n 1000000 --d 20 --rounds 100
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

from fastboost.bench import main

if __name__ == "__main__":
    sys.exit(main())
