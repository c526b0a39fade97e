"""Helpers of ``fastboost bench``'s argument checks, shared by the per-round benchmark and ``--curve``."""
import argparse

from .adapters import COMPETITORS


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


def parse_bins(text):
    """``--bins``: an integer, or 'exact' (any case)."""
    if text.strip().lower() == "exact":
        return "exact"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'exact', got {text!r}") from None
