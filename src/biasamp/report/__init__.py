"""Reports of a probe result (Markdown, self-contained HTML, JSON, model card) and comparisons.

The content is computed once from a :class:`biasamp.results.ProbeResult`
(:func:`~._sections.build_sections`) and each format of :data:`FORMATS` lays it out with a
Jinja2 template of ``templates/``; matplotlib is imported only to draw a plot.

Examples
--------
>>> import biasamp.report as r
>>> r.format_value(0.13681, 0.02259)
'0.1368 ± 0.0226'
>>> [(name, r.FORMATS.get(name).file, r.FORMATS.get(name).plots) for name in r.FORMATS]
[('md', 'report.md', ('fig5', 'forest', 'base_rates')),
 ('html', 'report.html', ('fig5', 'forest', 'base_rates')),
 ('json', 'report.json', ()), ('model-card', 'model_card.md', ('fig5',))]
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._output import OutputFolder
from .._progress import as_progress
from .._registry import Registry
from .._validation import SubsetOf, normalised, validate_params
from ..results import ProbeResult
from ._compare import compare_dirs, compare_table
from ._compare import paired_markdown as paired_markdown
from ._compare import setup_differences as setup_differences
from ._compare import write_comparison as write_comparison
from ._format import format_value, markdown_table, render_template
from ._plots import PLOT_KINDS
from ._sections import build_sections

# paired_markdown, setup_differences and write_comparison (imported `as` themselves: re-exported)
# serve `biasamp compare` and probe_many; they are not part of the public API
__all__ = [
    "FORMATS",
    "build_report",
    "compare_dirs",
    "compare_table",
    "format_value",
    "markdown_table",
    "render",
    "report_text",
]

log = logging.getLogger(__name__)

#: The keys of ``report.json``, each the ``data`` of the section of that name.
JSON_KEYS = ("summary", "sign_agreement", "mass", "provenance")


@dataclass(frozen=True)
class ReportFormat:
    """A report format: the file it writes, its template (None: ``report.json``, the data of
    :data:`JSON_KEYS`) and the plot kinds it shows."""

    file: str
    template: str | None = None
    plots: tuple[str, ...] = ()


#: The report formats: name -> :class:`ReportFormat`.
FORMATS = Registry("report format")
FORMATS.register(
    "md",
    ReportFormat("report.md", "report.md.j2", PLOT_KINDS),
    description="Markdown report; links the PNG plots",
)
FORMATS.register(
    "html",
    ReportFormat("report.html", "report.html.j2", PLOT_KINDS),
    description="self-contained HTML report; embeds the PNG plots",
)
FORMATS.register(
    "json",
    ReportFormat("report.json"),
    description="summary, sign agreement, candidate mass and provenance as JSON",
)
FORMATS.register(
    "model-card",
    ReportFormat("model_card.md", "model_card.md.j2", ("fig5",)),
    description='a "Bias, Risks, and Limitations" block for a Hugging Face '
    "model card; links the Fig. 5 plot",
)


def _text(sections: dict, spec: ReportFormat, plots: Mapping) -> str:
    if spec.template is None:  # NaN written as null
        data = {k: sections[k].data for k in JSON_KEYS}
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    return render_template(spec.template, s=sections, plots=plots)


def report_text(
    result: ProbeResult, fmt: str = "md", *, plots: Mapping[str, str | os.PathLike] | None = None
) -> str:
    """The text of one report of ``result``.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        In memory or read with :meth:`~biasamp.results.ProbeResult.load`.
    fmt : str
        A name of :data:`FORMATS`: ``md``, ``html``, ``json``, ``model-card``.
    plots : dict, optional
        Plot kind -> PNG: embedded from this path (``html``), else linked as given.
    """
    return _text(build_sections(result), FORMATS.get(fmt), plots or {})


#: The one check of a ``formats`` argument (render and build_report).
_FORMATS_PARAM = {"formats": SubsetOf(FORMATS)}


@validate_params(_FORMATS_PARAM)
def render(
    result: ProbeResult,
    out_dir: str | os.PathLike,
    formats: Sequence[str] | str,
    *,
    plots: bool = True,
    progress=None,
) -> dict[str, Path]:
    """Write the reports of ``result`` (and the PNG plots they show) into ``out_dir``.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        In memory or read with :meth:`~biasamp.results.ProbeResult.load`.
    out_dir : path
        Folder to write into (created); usually the result's own folder.
    formats : list of str or comma-separated str
        Names of :data:`FORMATS`.
    plots : bool
        Draw the PNG plots the formats show; False draws none and the reports show none.
    progress : bool or biasamp._progress.Progress, optional
        Told the ``plots`` and ``reports`` stages.

    Returns
    -------
    dict mapping plot kind, then format, to the written path.
    """
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    specs = {name: FORMATS.get(name) for name in normalised(_FORMATS_PARAM, formats=formats)}
    sections = build_sections(result)
    wanted = {kind for spec in specs.values() for kind in spec.plots} & set(sections["plots"])
    written: dict[str, Path] = {}
    progress = as_progress(progress)
    if plots and wanted:
        from ._plots import plot

        progress.stage("plots", len(wanted), "plots")
        for kind in (k for k in PLOT_KINDS if k in wanted):
            written[kind] = plot(result, kind, d)
            progress.advance()
    progress.stage("reports", len(specs), "files")
    for name, spec in specs.items():
        # HTML embeds the PNG of each path; the others link it beside them by its name
        shown = {k: p if name == "html" else p.name for k, p in written.items() if k in spec.plots}
        written[name] = d / spec.file
        written[name].write_text(_text(sections, spec, shown), encoding="utf-8")
        progress.advance()
    log.info("wrote %s", ", ".join(str(p) for p in written.values()))
    return written


@validate_params(_FORMATS_PARAM)
def build_report(
    result_dir: str | os.PathLike,
    *,
    formats: Sequence[str] | str = ("md", "html", "json"),
    plots: bool = True,
    out: str | os.PathLike | None = None,
    overwrite: bool = False,
    progress=None,
) -> dict[str, Path]:
    """Render reports (and their PNG plots) from a result folder's ``results.json``, read and
    checked first; they go back into the result folder (staged and swapped in), or ``out``.

    Parameters
    ----------
    result_dir : path
        A folder written by :meth:`biasamp.results.ProbeResult.save` or ``biasamp probe``.
    formats, plots, progress
        As for :func:`render`.
    out : path, optional
        Write the reports into this new folder instead (refused when it exists and is not
        empty, unless ``overwrite``).
    overwrite : bool
        Replace a non-empty ``out`` as a whole.

    Returns
    -------
    dict mapping plot kind, then format, to the final path of each written file.
    """
    result = ProbeResult.load(result_dir, tables=False)
    if out is None:  # update: everything the folder holds survives the swap
        output = OutputFolder(result_dir, kind="probe", update=True, param="RESULT_DIR")
    else:
        output = OutputFolder(out, kind="report", overwrite=overwrite, param="--out")
    with output as staging:
        written = render(result, staging, formats, plots=plots, progress=progress)
    final = output.target if out is not None else output.named
    return {k: final / p.name for k, p in written.items()}
