"""MkDocs hook: tables generated at build time from the code, so they cannot drift from it.

A page asks for a table with a line of its own ``<!-- generated: NAME -->`` (``NAME [ARG]``):

- ``param-matrix``: which estimator takes which parameter, with its default
  (from ``fastboost._params.ESTIMATOR_PARAMS``, the declaration the estimators are checked against);
- ``param-details``: every parameter's allowed values, default and description, with the
  estimators that document it differently;
- ``cli-options COMMAND``: the options of ``fastboost COMMAND``, read from the command's
  argparse parser (``fastboost.cli.build_parser``).

``tests/test_docs.py`` imports this file to check the tables against the estimators.
"""
import argparse
import re
import unicodedata

PLACEHOLDER = re.compile(r"^<!-- generated: ([a-z-]+)(?: (\S+))? -->$", re.M)


def _cell(text):
    """Markdown table cell: pipes escaped, no line breaks."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(value):
    return f'`"{value}"`' if isinstance(value, str) else f"`{value!r}`"


def _short(name):
    return name.removesuffix("Classifier")


def param_rows():
    """(parameter, {estimator class name: Param}) in order of first appearance, estimators in table order."""
    from fastboost._params import ESTIMATOR_PARAMS

    rows = {}
    for est, params in ESTIMATOR_PARAMS.items():
        for name, param in params.items():
            rows.setdefault(name, {})[est] = param
    return list(rows.items())


def param_matrix():
    from fastboost._params import ESTIMATOR_PARAMS

    estimators = list(ESTIMATOR_PARAMS)
    lines = ["| parameter | " + " | ".join(_short(e) for e in estimators) + " |",
             "|---|" + "---|" * len(estimators)]
    for name, by_est in param_rows():
        cells = [_default(by_est[e].default) if e in by_est else "–" for e in estimators]
        lines.append(f"| [`{name}`](#{name}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + ("\n\nEach cell is the estimator's default; – : the estimator has no such parameter "
                               "(passing it is a `TypeError`). Every estimator takes its parameters by keyword, "
                               "`n_estimators` also as the first positional argument.")


def _slug(title):
    """A heading's anchor as Python-Markdown's toc extension makes it (its default slugify)."""
    title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", title).strip().lower())


def _plain_doc(text):
    """A numpydoc description as Markdown: ``code`` becomes `code`, a reference to a section of
    docs/algorithms.md a link to it (the strict build checks the anchor)."""
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    text = re.sub(r'docs/algorithms\.md, "([^"]+)"',
                  lambda m: f'[Algorithms, "{m.group(1)}"](algorithms.md#{_slug(m.group(1))})', text)
    return re.sub(r"docs/algorithms\.md(?!\]|#)", "[Algorithms](algorithms.md)", text)


def param_details():
    out = []
    for name, by_est in param_rows():
        names = list(by_est)
        out.append(f"### `{name}` {{#{name}}}\n")
        out.append("Taken by " + ", ".join(f"`{e}`" for e in names) + ".\n")
        groups = {}  # (allowed values, default, doc) -> estimators
        for est, param in by_est.items():
            groups.setdefault((param.constraint.doc_type, _default(param.default), param.doc), []).append(est)
        for (allowed, default, doc), ests in groups.items():
            who = "" if len(groups) == 1 else "**" + ", ".join(_short(e) for e in ests) + ":** "
            out.append(f"- {who}`{allowed}`, default {default}. {_plain_doc(doc)}")
        out.append("")
    return "\n".join(out)


def _subparser(command):
    from fastboost.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise KeyError(command)


def cli_rows(command):
    """(option strings, metavar/choices, default or None, help) of ``fastboost COMMAND``'s parser."""
    from fastboost._params import ESTIMATOR_PARAMS
    from fastboost.cli import TRAIN_PARAMS

    takes = {}
    for est, params in ESTIMATOR_PARAMS.items():
        for name in params:
            takes.setdefault(name, []).append(_short(est))
    rows = []
    for action in _subparser(command)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        flags = ", ".join(action.option_strings) or action.dest
        if action.choices is not None:
            value = "{" + ", ".join(map(str, action.choices)) + "}"
        elif action.nargs == 0:
            value = ""
        else:
            value = action.metavar or action.dest.upper()
            if action.nargs in ("+", "*"):
                value += " ..."
        text = action.help or ""
        if command == "train" and action.dest in TRAIN_PARAMS:
            text = (f"the estimator parameter [`{action.dest}`](estimators.md#{action.dest}) "
                    f"({', '.join(takes[action.dest])})")
            if action.dest == "max_bins":
                text += '; `exact` for `max_bins=None`'
        default = action.default
        show = not (default is None or default is False or default == argparse.SUPPRESS) and "default" not in text
        rows.append((flags, value, _default(default) if show else "", text.replace("%%", "%")))
    return rows


def cli_options(command):
    lines = ["| option | value | default | meaning |", "|---|---|---|---|"]
    for flags, value, default, text in cli_rows(command):
        lines.append(f"| `{flags}` | {f'`{_cell(value)}`' if value else ''} | {default} | {_cell(text)} |")
    return "\n".join(lines)


GENERATORS = {"param-matrix": param_matrix, "param-details": param_details, "cli-options": cli_options}


def render(markdown):
    """The page with every placeholder replaced; an unknown name is an error."""
    def one(match):
        name, arg = match.groups()
        if name not in GENERATORS:
            raise ValueError(f"unknown generated table {name!r}; known: {sorted(GENERATORS)}")
        return GENERATORS[name](arg) if arg else GENERATORS[name]()

    return PLACEHOLDER.sub(one, markdown)


def on_page_markdown(markdown, page, config, files):
    return render(markdown)
