"""What every report format shares: numbers and CIs, tables, Markdown, the Jinja2 templates."""

from __future__ import annotations

import base64
import html
import math
from functools import cache
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import yaml
from markdown_it import MarkdownIt
from markupsafe import Markup

from .._conventions import DIRECTION_LABELS


def direction_label(direction) -> str:
    """A direction's label in reports (``A→T``, ``T→A``); anything else unchanged."""
    return DIRECTION_LABELS.get(direction, str(direction))


def degenerate_ci(low, high) -> bool:
    """Whether ``[low, high]`` has zero width up to rounding: nothing varied in its bootstrap."""
    if low is None or high is None or not (np.isfinite(float(low)) and np.isfinite(float(high))):
        return False
    return math.isclose(float(low), float(high), rel_tol=1e-9, abs_tol=1e-12)


def _number(value, digits: int, sign: bool) -> str:
    if value is None or not np.isfinite(float(value)):
        return "n/a"
    text = f"{float(value):{'+' if sign else ''}.{digits}f}"
    return text.lstrip("+-") if float(text) == 0 else text  # no -0.0000, no +0


def format_value(mean, std=None, ci=None, digits: int = 4, *, sign: bool = False) -> str:
    """``mean ± std [low, high]`` with fixed digits: the one number formatter of the reports. A
    number that rounds to zero has no sign; a missing or non-finite one is ``n/a``; a CI with an
    end missing or of zero width (it would only repeat the value) is ``[n/a]``.

    Parameters
    ----------
    mean : float or None
        The value.
    std : float, optional
        Shown after ``±``.
    ci : (float, float), optional
        Shown as ``[low, high]`` (or ``[n/a]``).
    digits : int
        Digits after the decimal point.
    sign : bool
        Write a ``+`` before a positive value (not before its std or CI).

    Examples
    --------
    >>> format_value(-0.12544, 0.0026, (-0.13, -0.12))
    '-0.1254 ± 0.0026 [-0.1300, -0.1200]'
    >>> format_value(None), format_value(-0.00001), format_value(1.0, digits=0, sign=True)
    ('n/a', '0.0000', '+1')
    >>> format_value(0.1547, ci=(0.1547, 0.1547)), format_value(0.1, ci=(float("nan"), 0.2))
    ('0.1547 [n/a]', '0.1000 [n/a]')
    """
    text = _number(mean, digits, sign)
    if std is not None:
        text += f" ± {_number(std, digits, False)}"
    if ci is not None:
        interval = format_ci(*ci, digits=digits)
        text += f" {'[n/a]' if interval == 'n/a' else interval}"
    return text


def format_ci(low, high, digits: int = 4) -> str:
    """A CI alone: ``[low, high]``, or ``n/a`` when unavailable or degenerate."""
    if degenerate_ci(low, high):
        return "n/a"
    ends = (_number(low, digits, False), _number(high, digits, False))
    return "n/a" if "n/a" in ends else f"[{ends[0]}, {ends[1]}]"


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a DataFrame (no index; ``|`` in cells escaped)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def html_table(df: pd.DataFrame) -> str:
    """An HTML ``<table>`` of a DataFrame (no index; every cell escaped)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


#: The one Markdown renderer of the reports: CommonMark, raw HTML escaped, not passed through.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def markdown_html(text: str) -> str:
    """A Markdown text as HTML; raw HTML in it is escaped, never passed through."""
    return _MARKDOWN.render(text)


def plain_text(text: str) -> str:
    """The text of an inline-Markdown line without its marks (for HTML titles)."""
    return "".join(
        t.content
        for line in _MARKDOWN.parseInline(text)
        for t in line.children or ()
        if t.type in ("text", "code_inline")
    )


@cache
def _env() -> jinja2.Environment:
    """The templates of ``templates/``: HTML ones autoescaped."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("biasamp.report", "templates"),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        md_table=markdown_table,
        plain=plain_text,
        base64=lambda path: base64.b64encode(Path(path).read_bytes()).decode("ascii"),
        yaml=lambda v: yaml.safe_dump(v, sort_keys=False, allow_unicode=True),
        html_table=lambda df: Markup(html_table(df)),
        markdown=lambda text: Markup(markdown_html(text)),
        inline=lambda text: Markup(_MARKDOWN.renderInline(text)),
        md_list=lambda items: Markup(markdown_html("".join(f"- {i}\n" for i in items))),
        # html.escape, as the table cells (Jinja's |e writes quotes otherwise)
        html_escape=lambda text: Markup(html.escape(str(text))),
    )
    return env


def render_template(name: str, **context) -> str:
    """The text of ``templates/<name>`` rendered with ``context``."""
    return _env().get_template(name).render(**context)
