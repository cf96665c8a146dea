"""The report layouts: Jinja2 templates (``templates/*.j2``) over the sections.

Each lays out the :class:`~._sections.Sections` computed once from a result: ``report.md.j2``
(plots linked by file name), ``report.html.j2`` (one page: CSS from ``style.css``, the PNGs as
base64 data URIs, no scripts), ``model_card.md.j2`` (``model-index`` YAML front matter, then
"Bias, Risks, and Limitations"), ``comparison.{md,html}.j2``. ``report.json`` is the sections'
``data``. HTML templates are autoescaped; the Markdown filters escape raw HTML.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import jinja2
import yaml
from markupsafe import Markup

from ..results import ProbeResult
from ._format import (
    html_table,
    inline_html,
    markdown_html,
    markdown_list,
    markdown_table,
    plain_text,
)
from ._sections import Sections, build_sections

__all__ = [
    "json_report",
    "render_html",
    "render_markdown",
    "render_model_card",
    "render_template",
]

#: The keys of ``report.json``, each the ``data`` of the section of that name.
JSON_KEYS = ("summary", "sign_agreement", "mass", "provenance")


def _png(path) -> str:
    return base64.b64encode(Path(path).read_bytes()).decode("ascii")


@cache
def _env() -> jinja2.Environment:
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
        base64=_png,
        yaml=lambda v: yaml.safe_dump(v, sort_keys=False, allow_unicode=True),
        html_table=lambda df: Markup(html_table(df)),
        markdown=lambda text: Markup(markdown_html(text)),
        inline=lambda text: Markup(inline_html(text)),
        md_list=lambda items: Markup(markdown_list(items)),
        # html.escape, as the table cells (Jinja's |e writes quotes otherwise)
        html_escape=lambda text: Markup(html.escape(str(text))),
    )
    return env


def render_template(name: str, **context) -> str:
    """The text of ``templates/<name>`` rendered with ``context``."""
    return _env().get_template(name).render(**context)


def json_report(sections: Sections) -> str:
    """``report.json``'s text: the ``data`` of :data:`JSON_KEYS` (indented, NaN written as
    ``null``)."""
    return (
        json.dumps({k: getattr(sections, k).data for k in JSON_KEYS}, indent=2, allow_nan=False)
        + "\n"
    )


def render_markdown(
    result: ProbeResult, *, plots: Mapping[str, str | os.PathLike] | None = None
) -> str:
    """The Markdown report of a result.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        In memory or read with :meth:`~biasamp.results.ProbeResult.load`.
    plots : dict, optional
        Plot kind -> file name of the PNG, linked as given (relative to the report).
    """
    links = {k: os.fspath(v) for k, v in (plots or {}).items()}
    return render_template("report.md.j2", s=build_sections(result), plots=links)


def render_html(
    result: ProbeResult, *, plots: Mapping[str, str | os.PathLike] | None = None
) -> str:
    """A self-contained HTML report: inline CSS, PNGs embedded as base64 data URIs.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        As for :func:`render_markdown`.
    plots : dict, optional
        Plot kind -> path of a PNG file (read and embedded).
    """
    return render_template("report.html.j2", s=build_sections(result), plots=plots or {})


def render_model_card(result: ProbeResult, *, plot: str | os.PathLike | None = None) -> str:
    """The ``model-index`` front matter and a Markdown section for "Bias, Risks, and
    Limitations" of a Hugging Face model card.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        As for :func:`render_markdown`.
    plot : str, optional
        File name of the Fig. 5 PNG, linked as given (relative to the model card).
    """
    links = {"fig5": os.fspath(plot)} if plot else {}
    return render_template("model_card.md.j2", s=build_sections(result), plots=links)
