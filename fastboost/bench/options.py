"""Helpers of ``fastboost bench``'s argument checks, shared by the per-round benchmark and ``--curve``."""
import argparse
import sys

from . import adapters
from .adapters import COMPETITORS


class BenchArgumentError(Exception):
    """A bad argument or data file of ``fastboost bench``: ``run`` prints it as one line on stderr and exits with
    status 2, as every other ``fastboost`` command does with a user error."""


def exit_with(error):
    """End the command for ``error`` (a BenchArgumentError): one line on stderr, exit status 2."""
    print(f"fastboost bench: error: {' '.join(str(error).split())}", file=sys.stderr)
    raise SystemExit(2) from None


def split_names(values):
    """Names given space or comma separated (``["a,b", "c"]``), stripped and lower-cased."""
    return [v.strip().lower() for item in values for v in item.split(",") if v.strip()]


def competitor_keys(values):
    """The ``--competitors`` names as a list: 'all' for every one of ``adapters.COMPETITORS``, 'none' left out
    (unknown names are kept, for the caller to report)."""
    keys = split_names(values)
    if "all" in keys:
        return list(COMPETITORS)
    return [k for k in keys if k != "none"]


def check_algorithms(names):
    """An ``--algorithms`` name that names no fastboost estimator is a BenchArgumentError, as an unknown competitor
    is (not a library skipped with a note)."""
    for algo in names:
        cls, reason = adapters.fastboost_class(algo)
        if cls is None:
            raise BenchArgumentError(f"--algorithms: {reason}")


def parse_bins(text):
    """``--bins``: an integer, or 'exact' (any case)."""
    if text.strip().lower() == "exact":
        return "exact"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'exact', got {text!r}") from None
