"""fastboost bench --contention: the busy processes, the runs it makes, its ratios and table."""
import json
import os

import pytest

from fastboost._config import SPIN_COUNT
from fastboost.bench import contention
from fastboost.bench.cli import add_arguments, run


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc (Linux)")
def test_busy_processes_spin_while_open_and_are_gone_after():
    import time

    with contention.BusyProcesses(2) as busy:
        pids = [p.pid for p in busy.procs]
        assert all(p.poll() is None for p in busy.procs)
        deadline = time.monotonic() + 60.0  # on a loaded machine a busy process gets less than a core
        while not all(_cpu_seconds(pid) > 0.2 for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_cpu_seconds(pid) > 0.2 for pid in pids)  # each really burns CPU time
    assert all(p.poll() is not None for p in busy.procs)


def test_run_contention_measures_every_combination_under_the_right_load():
    """A fake child records whether the busy processes were running when it was called."""
    seen = []

    def run_child(task):
        import psutil

        spinning = [p for p in psutil.Process().children() if "while True" in " ".join(p.cmdline())]
        seen.append((task["threads"], task["variant"], len(spinning)))
        per_round = {"idle 1t": 1.0, "idle 2t": 0.6, "busy 1t": 1.1, "busy 2t": 2.2}[task["variant"]]
        return {"status": "ok", "per_round_s": per_round}

    pytest.importorskip("psutil")
    rows = contention.run_contention([{"key": "fastboost-adaboost", "label": "fb"}], run_child, 2, 2)
    assert sorted(seen) == [(1, "busy 1t", 2), (1, "idle 1t", 0), (2, "busy 2t", 2), (2, "idle 2t", 0)]
    r = rows[0]
    assert r["ratios"] == {"busy 2t / busy 1t": pytest.approx(2.0), "busy 2t / idle 2t": pytest.approx(2.2 / 0.6),
                           "idle 2t / idle 1t": pytest.approx(0.6)}
    table = contention.format_contention(rows, 2, "header")
    assert "2 busy processes" in table and "2200.00" in table and "2.00" in table


def test_a_failed_child_leaves_its_cells_empty():
    rows = contention.run_contention([{"key": "x", "label": "x"}], lambda t: None, 1, 1)
    assert rows[0]["times"] == {"idle 1t": None, "busy 1t": None}
    assert rows[0]["ratios"] == {"busy 1t / idle 1t": None}
    assert "failed" in contention.format_contention(rows, 1, "h")


@pytest.mark.slow
def test_contention_end_to_end(tmp_path):
    import argparse
    import io

    parser = add_arguments(argparse.ArgumentParser())
    out = tmp_path / "c.json"
    payload = run(parser.parse_args(["--contention", "--n", "5000", "--rounds", "20", "--repeat", "1",
                                     "--competitors", "none", "--threads", "2", "--out", str(out)]),
                  stdout=io.StringIO())
    record = json.loads(out.read_text())
    assert record["benchmark"] == "fastboost bench --contention"
    (row,) = record["rows"]
    assert set(row["times"]) == {"idle 1t", "idle 2t", "busy 1t", "busy 2t"}
    assert all(t > 0 for t in row["times"].values())
    if not any(v in os.environ for v in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "FASTBOOST_WAIT_POLICY")):
        assert payload["fastboost_wait_policy"] in (f"short spin (GOMP_SPINCOUNT={SPIN_COUNT})",
                                                    "OpenMP's default (GNU OpenMP was loaded before fastboost "
                                                    "started its threads)")


def test_bins_exact_argument():
    import argparse

    from fastboost.bench.options import parse_bins

    assert parse_bins("exact") == "exact" and parse_bins("EXACT") == "exact" and parse_bins("64") == 64
    with pytest.raises(argparse.ArgumentTypeError, match="integer or 'exact'"):
        parse_bins("many")
