"""The documentation cannot drift from the code: the site builds strictly, every example runs,
docstring examples pass as doctests, and the generated option tables name only real parameters.

Conventions of the pages (README.md and docs/*.md), read here:

- every ```python block runs, page by page and in order, in a fresh namespace per page and a
  fresh working directory; ``<!-- test-setup`` ... ``-->`` (an HTML comment whose lines are
  Python) is a hidden block that runs at its place;
- ``<!-- test: shrink `old` -> `new`, ... -->`` before a block runs it with those replacements
  (smaller data, fewer rounds); each ``old`` must occur in the block;
- a ```bash block runs its ``fastboost`` commands (``fastboost.cli.main``) on the small files that
  ``<!-- test: files NAME ... -->`` before it names (generated: ``.csv`` with a ``label`` column,
  ``.npy``, or ``NAME/``: parquet files with a ``y`` column);
  ``<!-- test: not run: REASON -->`` before a block says why it does not run;
- a ```pycon block (``>>>`` lines and their output) runs as a doctest in the page's namespace;
- fences carry a language; other languages (json, text) are not run.
"""
import argparse
import doctest
import importlib
import importlib.util
import logging
import os
import re
import shlex
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md"] + sorted(DOCS.glob("*.md"))
RUN = {"python", "pycon", "bash"}
NOT_RUN_LANGUAGES = {"json", "text", "console"}

MARKER = re.compile(r"^\s*<!-- test: (shrink|files|not run:)(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,})(\S*)\s*$")
SHRINK = re.compile(r"`([^`]+)`\s*->\s*`([^`]*)`")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the block's first code line in the page
    shrink: list = field(default_factory=list)
    files: list = field(default_factory=list)
    not_run: str = None


def parse(path):
    """The page's code blocks in order, with the markers before them."""
    lines = path.read_text().splitlines()
    blocks, pending, i = [], {}, 0
    where = f"{path.name}"
    while i < len(lines):
        line = lines[i]
        if line.startswith("<!-- test-setup"):
            assert not pending, f"{where}:{i + 1}: a marker must be followed by its code block"
            end = next(j for j in range(i, len(lines)) if lines[j].rstrip().endswith("-->"))
            blocks.append(Block("python", "\n".join(lines[i + 1:end]) + "\n", i + 2))
            i = end + 1
            continue
        m = MARKER.match(line)
        if m:
            kind, arg = m.group(1), m.group(2).strip()
            if kind == "shrink":
                pairs = SHRINK.findall(arg)
                assert pairs, f"{where}:{i + 1}: shrink needs `old` -> `new` pairs"
                pending.setdefault("shrink", []).extend(pairs)
            elif kind == "files":
                pending["files"] = arg.split("(")[0].split()
            else:
                assert arg, f"{where}:{i + 1}: 'not run:' needs a reason"
                pending["not_run"] = arg
            i += 1
            continue
        m = FENCE.match(line)
        if m:
            indent, ticks, lang = m.groups()
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == ticks), None)
            assert end is not None, f"{where}:{i + 1}: unclosed code fence"
            assert lang, f"{where}:{i + 1}: give the code block a language (python, bash, json, text)"
            assert lang in RUN | NOT_RUN_LANGUAGES, f"{where}:{i + 1}: unknown code block language {lang!r}"
            code = textwrap.dedent("\n".join(lines[i + 1:end])) + "\n"
            blocks.append(Block(lang, code, i + 2, **pending))
            pending = {}
            i = end + 1
            continue
        assert not (pending and line.strip()), f"{where}:{i + 1}: a marker must be followed by its code block"
        i += 1
    assert not pending, f"{where}: a marker at the end of the page has no code block"
    return blocks


def shrunk(block, where):
    code = block.code
    for old, new in block.shrink:
        assert old in code, f"{where}: the shrink marker's `{old}` is not in the block"
        code = code.replace(old, new)
    return code


def write_files(names, seed=0):
    """Small twonorm files for the CLI examples: CSV with a label column, .npy arrays, or a directory (a name
    ending in ``/``) of parquet files with a label column ``y``."""
    from fastboost.datasets import make_twonorm

    for k, name in enumerate(names):
        X, y = make_twonorm(300, 5, random_state=seed + k)
        if name.endswith(".csv"):
            import pandas as pd

            df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
            df["label"] = y
            df.to_csv(name, index=False)
        elif name.endswith(".npy"):
            np.save(name, np.column_stack([X, y]))
        elif name.endswith("/"):  # a directory of parquet files with a label column ``y``
            import pyarrow as pa
            import pyarrow.parquet as pq

            os.makedirs(name, exist_ok=True)
            table = pa.table({**{f"x{j}": X[:, j] for j in range(X.shape[1])}, "y": y})
            for part in range(3):
                pq.write_table(table.slice(100 * part, 100), os.path.join(name, f"part-{part}.parquet"))
        else:
            raise AssertionError(f"no generator for the example file {name!r}")


def commands(code):
    """The bash block's commands as argument lists (continuation lines joined, comments dropped)."""
    joined = re.sub(r"\\\n", " ", code)
    return [argv for argv in (shlex.split(line, comments=True) for line in joined.splitlines()) if argv]


def run_doctest(code, namespace, page, line):
    """A ```pycon block: its >>> lines run in the page's namespace and must print the output shown."""
    test = doctest.DocTestParser().get_doctest(code, namespace, f"{page.name}:{line}", str(page), line - 1)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append, clear_globs=False)
    namespace.update(test.globs)  # DocTest works on a copy; the page's later blocks see its names
    assert runner.failures == 0, "".join(out)


def run_cli(argv, where):
    from fastboost.cli import main

    assert argv[0] == "fastboost", (f"{where}: only fastboost commands run here; mark the block "
                                    "'<!-- test: not run: REASON -->' if it must not run")
    try:
        status = main(argv[1:])
    except SystemExit as e:  # --version, --help
        status = e.code
    assert status in (0, None), f"{where}: {shlex.join(argv)} exited with status {status}"


@pytest.fixture
def plain_matplotlib():
    """A non-interactive matplotlib backend for the plotting examples (closed figures afterwards)."""
    try:
        import matplotlib
    except ImportError:
        yield
        return
    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples_run(page, tmp_path, monkeypatch, plain_matplotlib):
    """Every python and fastboost block of the page runs in order, in one namespace per page."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FASTBOOST_QUIET_COMPILE", "1")
    namespace = {"__name__": f"docs.{page.stem}"}
    ran = 0
    for block in parse(page):
        where = f"{page.name}:{block.line}"
        if block.lang not in RUN:
            continue
        if block.not_run:
            continue  # explicitly marked, with its reason, in the page
        code = shrunk(block, where)
        if block.lang == "python":
            # leading newlines: a traceback names the page's own line numbers
            exec(compile("\n" * (block.line - 1) + code, str(page), "exec"), namespace)
        elif block.lang == "pycon":
            run_doctest(code, namespace, page, block.line)
        else:
            write_files(block.files)
            for argv in commands(code):
                run_cli(argv, where)
        ran += 1
    assert ran or not any(b.lang in RUN and not b.not_run for b in parse(page))


def test_pages_mark_what_does_not_run():
    """Every block that does not run says why, and the markers are well-formed (parse checks them)."""
    not_run = [(page.name, b.line, b.not_run) for page in PAGES for b in parse(page) if b.not_run]
    assert all(reason for _, _, reason in not_run)
    runnable = [b for page in PAGES for b in parse(page) if b.lang in RUN and not b.not_run]
    assert len(runnable) > len(not_run)


def test_parse_reads_the_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent("""\
        Text.
        <!-- test-setup
        a = 1
        -->
        <!-- test: shrink `a * 1000` -> `a * 2`, `x` -> `y` -->
        ```python
        b = a * 1000
        ```
        - item

          <!-- test: not run: needs a cluster -->
          ```bash
          dask scheduler
          ```
        ```json
        {}
        ```
        """))
    blocks = parse(page)
    assert [b.lang for b in blocks] == ["python", "python", "bash", "json"]
    assert blocks[0].code == "a = 1\n" and blocks[0].line == 3
    assert blocks[1].shrink == [("a * 1000", "a * 2"), ("x", "y")] and blocks[1].line == 7
    with pytest.raises(AssertionError, match="`x` is not in the block"):
        shrunk(blocks[1], "page.md")
    assert blocks[2].not_run == "needs a cluster" and blocks[2].code == "dask scheduler\n"
    page.write_text("<!-- test: not run: why -->\nText between.\n```bash\nls\n```\n")
    with pytest.raises(AssertionError, match="must be followed by its code block"):
        parse(page)
    page.write_text("```\nno language\n```\n")
    with pytest.raises(AssertionError, match="give the code block a language"):
        parse(page)


def test_pycon_blocks_compare_their_output(tmp_path):
    namespace = {"a": 2}
    run_doctest(">>> a * 3\n6\n>>> b = a + 1\n", namespace, tmp_path / "page.md", 1)
    assert namespace["b"] == 3  # the page's namespace goes on
    with pytest.raises(AssertionError, match="Expected:"):
        run_doctest(">>> a * 3\n7\n", namespace, tmp_path / "page.md", 1)


def test_commands_join_continuations_and_drop_comments():
    code = "fastboost train a.csv --target label \\\n    --lam 0.5  # a comment\nfastboost info m.fbm\n"
    assert commands(code) == [["fastboost", "train", "a.csv", "--target", "label", "--lam", "0.5"],
                              ["fastboost", "info", "m.fbm"]]
    with pytest.raises(AssertionError, match="only fastboost commands"):
        run_cli(["pip", "install", "x"], "page.md:1")


# ----------------------------------------------------------------------------- docstring examples
DOCTEST_MODULES = ["fastboost.estimators", "fastboost.datasets", "fastboost.plot", "fastboost._model_io"]


def examples(obj):
    return [(e.source, e.want) for t in doctest.DocTestFinder().find(obj) for e in t.examples]


def test_dask_docstring_examples_are_the_single_machine_ones():
    """The Dask estimators' docstrings carry their single-machine class's examples, which
    test_docstring_examples runs; any example of their own would have to be run here."""
    dask = pytest.importorskip("fastboost.dask", reason="fastboost.dask needs the dask extra")
    names = [n for n in dir(dask) if n.startswith("Dask") and n.endswith("Classifier")]
    assert len(names) == 6
    for name in names:
        cls = getattr(dask, name)
        base = getattr(importlib.import_module("fastboost"), name.removeprefix("Dask"))
        assert examples(cls) == examples(base) and examples(cls), name
    assert not [t.name for t in doctest.DocTestFinder(exclude_empty=True).find(dask)
                if t.examples and not t.name.rsplit(".", 1)[-1].startswith("Dask")]


@pytest.mark.parametrize("name", DOCTEST_MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch, plain_matplotlib):
    """Every ``>>>`` example of the module's docstrings gives the output it shows."""
    module = importlib.import_module(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FASTBOOST_QUIET_COMPILE", "1")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    tests = [t for t in doctest.DocTestFinder(exclude_empty=True).find(module) if t.examples]
    for test in tests:
        runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
    if name == "fastboost.estimators":
        import fastboost

        with_examples = {t.name.rsplit(".", 1)[-1] for t in tests}
        estimators = {n for n in fastboost.__all__ if n.endswith("Classifier")}
        assert estimators <= with_examples, f"estimators without a docstring example: {estimators - with_examples}"


# ----------------------------------------------------------------------------- generated tables
def load_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_table(text):
    """Header cells and rows of the first Markdown table in text."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", r)[1:-1]] for r in rows]
    return split[0], split[2:]


def test_parameter_table_names_only_real_parameters():
    """Every parameter the generated table lists for an estimator is one of its parameters, with the
    default shown; and every parameter an estimator has is in the table for it."""
    import fastboost

    hooks = load_hooks()
    header, rows = markdown_table(hooks.param_matrix())
    classes = {name: getattr(fastboost, name + "Classifier") for name in header[1:]}
    assert set(classes) == {n.removesuffix("Classifier") for n in fastboost.__all__ if n.endswith("Classifier")}
    listed = {name: set() for name in classes}
    for row in rows:
        param = re.search(r"`(\w+)`", row[0]).group(1)
        for name, cell in zip(header[1:], row[1:]):
            params = classes[name]().get_params()
            if cell == "–":
                assert param not in params, f"{name} takes {param} but the table says it does not"
                with pytest.raises(TypeError):
                    classes[name](**{param: params.get(param)})
                continue
            assert param in params, f"the table lists {param} for {name}, which has no such parameter"
            assert cell == hooks._default(params[param]), f"{name}.{param}: table {cell}, estimator {params[param]!r}"
            listed[name].add(param)
    for name, cls in classes.items():
        assert listed[name] == set(cls().get_params()), f"{name}: parameters missing from the table"


CALL_SPAN = re.compile(r"(scikit-learn )?`(?:Dask)?(\w+Classifier)\(([^`]*)\)`")


def test_prose_names_only_real_parameters():
    """Every `Estimator(param, other=value)` written in the pages' text names parameters the estimator has."""
    import fastboost

    checked = 0
    for page in PAGES:
        for m in CALL_SPAN.finditer(page.read_text()):
            sklearn, name, args = m.groups()
            if sklearn or name not in fastboost.__all__:
                continue  # another library's estimator
            params = getattr(fastboost, name)().get_params()
            for arg in args.split(","):
                key = arg.split("=")[0].strip()
                if key.isidentifier():
                    assert key in params, f"{page.name}: `{m.group(0).strip('`')}` names {key}, which {name} lacks"
                    checked += 1
    assert checked > 20


def test_parameter_details_cover_each_parameter_once():
    hooks = load_hooks()
    details = hooks.param_details()
    for param, by_est in hooks.param_rows():
        assert details.count(f"### `{param}` {{#{param}}}") == 1
        taken = re.search(rf"### `{param}` .*?\n\nTaken by (.*?)\.\n", details, re.S).group(1)
        assert re.findall(r"`(\w+)`", taken) == list(by_est)


def test_cli_tables_list_every_option_of_the_parser():
    """The generated option tables are the parser's options, and train's estimator options name real parameters."""
    from fastboost._params import ESTIMATOR_PARAMS
    from fastboost.cli import ALGORITHMS, TRAIN_PARAMS, build_parser

    hooks = load_hooks()
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, parser in sub.choices.items():
        table = hooks.cli_options(command)
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction):
                assert f"`{', '.join(action.option_strings) or action.dest}`" in table, (command, action.dest)
    header, rows = markdown_table(hooks.cli_options("train"))
    short = {name.removesuffix("Classifier"): name for name in ESTIMATOR_PARAMS}
    for row in rows:
        m = re.search(r"the estimator parameter \[`(\w+)`\]\([^)]*\) \(([^)]*)\)", row[3])
        if not m:
            continue
        param, names = m.group(1), m.group(2).split(", ")
        assert param in TRAIN_PARAMS
        for name in names:
            assert param in ESTIMATOR_PARAMS[short[name]], f"--{param} listed for {name}, which lacks it"
        assert set(names) == {n for n in short if param in ESTIMATOR_PARAMS[short[n]]}
    assert set(ALGORITHMS.values()) == set(ESTIMATOR_PARAMS)


def test_every_placeholder_is_known():
    hooks = load_hooks()
    for page in PAGES:
        text = page.read_text()
        assert hooks.PLACEHOLDER.search(hooks.render(text)) is None, page.name
    with pytest.raises(ValueError, match="unknown generated table"):
        hooks.render("<!-- generated: nothing -->")


# ----------------------------------------------------------------------------- the site
def test_site_builds_strictly(tmp_path, caplog):
    """mkdocs build --strict (in this process): a broken link, anchor or API reference fails the build."""
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install \".[docs]\")")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    site = tmp_path / "site"
    config = load_config(str(ROOT / "mkdocs.yml"), strict=True, site_dir=str(site))
    try:
        build(config)
    except Abort as e:
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        pytest.fail(f"{e}\n" + "\n".join(warnings))
    estimators = (site / "estimators" / "index.html").read_text()
    assert "<!-- generated:" not in estimators and 'id="warm_start"' in estimators
    cli = (site / "cli" / "index.html").read_text()
    assert "--n-iter-no-change" in cli
    api = (site / "api" / "index.html").read_text()
    for name in ("AdaBoostClassifier", "load", "dask.DaskVadaBoostClassifier", "datasets.make_twonorm",
                 "plot.plot_margins"):
        assert f'id="fastboost.{name}"' in api, name
