"""``python -m fastboost ...``: the same as the ``fastboost`` command."""
import sys

from .cli import main

sys.exit(main())
