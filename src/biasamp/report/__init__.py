"""Reports of a probe result: Markdown, self-contained HTML, JSON, model card; comparisons.

Sections, then templates: the content of a report is computed once from a
:class:`biasamp.results.ProbeResult` (:func:`~._sections.build_sections`: summary, notes,
base rates, plots, largest contributions, sign agreement, candidate mass, tokenisation
audit, caveats, provenance) and each format of :data:`FORMATS` lays it out with a Jinja2
template of ``templates/``. :func:`render` draws only the PNG plots the requested formats
show. A result folder is read with :meth:`biasamp.results.ProbeResult.load`, so
``biasamp report DIR`` rebuilds reports from ``results.json`` without a model; this package
never imports torch, and imports matplotlib only when it draws a plot.

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
from ._format import format_value, markdown_table
from ._plots import PLOT_KINDS
from ._render import json_report, render_html, render_markdown, render_model_card, render_template
from ._sections import Sections, build_sections

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
    "render_html",
    "render_markdown",
    "render_model_card",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReportFormat:
    """A report format: the file it writes, its layout and the plot kinds it shows."""

    file: str  # in the result folder
    template: str | None = None  # in templates/ (HTML embeds the PNGs); None: report.json
    plots: tuple[str, ...] = ()  # the plot kinds it shows (:func:`render` draws no other)

    def render(self, sections: Sections, plots: Mapping[str, Path]) -> str:
        """The format's text; ``plots`` maps plot kind -> PNG path (the kinds drawn)."""
        if self.template is None:
            return json_report(sections)
        if not self.template.endswith(".html.j2"):
            plots = {kind: os.path.basename(path) for kind, path in plots.items()}
        return render_template(self.template, s=sections, plots=plots)


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
        Names of :data:`FORMATS`: ``md``, ``html``, ``json``, ``model-card``.
    plots : bool
        Draw the PNG plots the formats show (``json`` shows none, ``model-card`` only
        ``fig5``); False draws none and the reports show none.
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
    wanted = {kind for spec in specs.values() for kind in spec.plots} & set(sections.plots)
    drawn: dict[str, Path] = {}
    progress = as_progress(progress)
    if plots and wanted:
        from ._plots import plot_all

        progress.stage("plots", len(wanted), "plots")
        for kind in (k for k in PLOT_KINDS if k in wanted):
            drawn.update(plot_all(result, d, [kind]))
            progress.advance()
    written = dict(drawn)
    progress.stage("reports", len(specs), "files")
    for name, spec in specs.items():
        path = d / spec.file
        shown = {kind: drawn[kind] for kind in spec.plots if kind in drawn}
        path.write_text(spec.render(sections, shown), encoding="utf-8")
        written[name] = path
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
    src = Path(result_dir)
    if out is not None:
        output = OutputFolder(out, kind="report", overwrite=overwrite, param="--out")
        with output as staging:
            written = render(result, staging, formats, plots=plots, progress=progress)
        return {k: output.target / p.name for k, p in written.items()}
    output = OutputFolder(src, kind="probe", update=True, param="RESULT_DIR")
    with output as staging:  # update: everything the folder holds survives the swap
        written = render(result, staging, formats, plots=plots, progress=progress)
    return {k: output.named / p.name for k, p in written.items()}
