"""Subcommands of the ``biasamp`` CLI (``model``, ``data``, ``results``) and what they
share; each is a function ``NAME(parser)`` that adds its options and sets ``func``."""

from __future__ import annotations

import sys
from pathlib import Path

#: The report a finished run names on its last line: the first of these it wrote.
_REPORT_ORDER = ("html", "md", "model-card", "json")


def add_config_options(
    parser, *, groups=None, from_config: bool = False, without=(), only=None
) -> None:
    """Options of :class:`~biasamp.pipeline.ProbeConfig` from its fields, in argument
    ``groups`` (default: all); ``only``: the fields to take; ``without``: flags not taken;
    ``from_config``: every default None (a ``--config`` file's value stands)."""
    from ..pipeline.config import GROUPS, ProbeConfig, cli_flags, cli_help, cli_type

    # how the command's messages name these options (biasamp._errors.option): by their flags
    named = dict(parser.get_default("option_names") or {})
    for title in groups or GROUPS:
        group = parser.add_argument_group(title)
        for name, field in ProbeConfig.model_fields.items():
            extra, flags = field.json_schema_extra, cli_flags(name)
            if extra.get("group") != title or (only and name not in only) or flags[0] in without:
                continue
            kind = cli_type(name)
            kwargs = {
                "metavar": extra.get("metavar"),
                "type": kind if kind in (int, float) else None,
                "action": "store_true" if kind is bool else extra.get("action"),
            }
            default = field.get_default(call_default_factory=True)
            group.add_argument(
                *flags,
                dest=name,
                help=cli_help(name),
                default=None if from_config or "action" in extra else default,
                **{k: v for k, v in kwargs.items() if v is not None},
            )
            named[name] = flags[0]
    parser.set_defaults(option_names=named)


def add_out(parser, what: str, replaces: str, **kwargs) -> None:
    """``--out`` (``what`` it names) and ``--overwrite`` (``replaces`` what biasamp wrote)."""
    parser.add_argument("--out", "-o", help=what, **kwargs)
    parser.add_argument("--overwrite", action="store_true", help=f"replace {replaces}")


def report_file(folder, formats, *, comparison: bool = False) -> Path:
    """The file a run's last line names: in ``folder``, its HTML report if it wrote one, else
    the Markdown one, the model card, the JSON report; ``comparison.html`` (``.md``, ``.csv``)
    for a comparison; ``results.json`` when no report was asked for."""
    from .._validation import Names
    from ..report import FORMATS

    formats = Names(min_size=0).normalise(formats or ())
    if comparison:
        kind = next((k for k in ("html", "md", "csv") if k in formats), "md")
        return Path(folder) / f"comparison.{kind}"
    kind = next((k for k in _REPORT_ORDER if k in formats), None)
    return Path(folder) / (FORMATS.get(kind).file if kind else "results.json")


def work_done(args) -> None:
    """The long work is over: the progress bar goes before the summary runs into it."""
    if args.display is not None:
        args.display.close()


def say_report(path, args) -> None:
    """``report: PATH`` on stderr (stdout holds only the summary); nothing with ``-q``."""
    if not args.quiet:
        sys.stdout.flush()
        print(f"report: {path}", file=sys.stderr)


def table_lines(rows, *, header=None, left=(), widths=None, indent="  ") -> list[str]:
    """The lines of a terminal table (``DataFrame.to_string``) of ``rows`` of formatted cells
    under an optional ``header``: columns numbered in ``left`` left-aligned, the others
    right-aligned, each as wide as its widest cell or its ``widths`` entry, two spaces apart.

    >>> table_lines([("he", "1.5"), ("they", "-10.25")], header=("word", "value"), left={0})
    ['  word   value', '  he       1.5', '  they  -10.25']
    """
    import pandas as pd

    frame = pd.DataFrame(
        [[str(c) for c in row] for row in ([header] if header is not None else []) + list(rows)]
    )
    if frame.empty:
        return []
    widths = widths or {}

    def cell(i):
        width = max(int(frame[i].str.len().max()), widths.get(i, 0))
        align = str.ljust if i in left else str.rjust
        return lambda value: (" " if i else "") + align(value, width)  # to_string adds one

    text = frame.to_string(index=False, header=False, formatters=[cell(i) for i in frame])
    return [indent + line.rstrip() for line in text.split("\n")]


def print_table(rows, **layout) -> None:
    """Print the :func:`table_lines` of ``rows`` on stdout."""
    print("\n".join(table_lines(rows, **layout)))
