"""The model-card section (``model_card.md``): a layout of the report's sections.

The Hugging Face ``model-index`` metadata as YAML front matter (:mod:`._model_index`: BiasAmp->
per base-rate source and direction, dataset = the template set), then a Markdown block for
"Bias, Risks, and Limitations" of a Hugging Face model card: the measurement, the headline
table, undefined cells, unavailable intervals, unsupported associations, the base-rate
sources, the Fig. 5 plot, the first three caveats and the provenance (folded).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..results import ProbeResult
from ._format import markdown_table
from ._model_index import front_matter
from ._sections import NOTE_KEYS, Section, build_sections

__all__ = ["CARD_PLOTS", "model_card", "render_model_card"]

#: The plot kinds a model card shows.
CARD_PLOTS = ("fig5",)
_N_CAVEATS = 3
_FIG5_ALT = "Model vs base P(attribute | task)"


def model_card(sections: Sequence[Section], links: Mapping[str, str]) -> str:
    """Lay out ``sections`` as a model card's metadata and block; ``links`` maps plot kind ->
    file name."""
    parts: list[str] = [front_matter(sections)]
    for s in sections:
        if s.key == "title":
            parts += ["## Bias, Risks, and Limitations", "",
                      "### Directional bias amplification (BiasAmp→)", "", s.text, ""]
        elif s.key == "note":
            parts += [f"> {s.text}", ""]
        elif s.key == "summary":
            parts += [markdown_table(s.table), ""]
        elif s.key == "base_rates" and s.table is not None:
            parts += ["**Base rates.**", ""] + [f"- {b}" for b in s.bullets]
            parts += [f"- `{r['source']}`: {r['what it is']} (data per task: "
                      f"{r['data per task']}; {r['uncertainty']})" for r in s.data] + [""]
        elif s.key in NOTE_KEYS:
            parts += [f"- {b}" for b in s.bullets] + [""]
        elif s.key == "plots" and "fig5" in links and any(k == "fig5" for k, _ in s.plots):
            parts += [f"<!-- upload {links['fig5']} next to the model card's README.md -->",
                      f"![{_FIG5_ALT}]({links['fig5']})", ""]
        elif s.key == "caveats":
            parts += ["**How to read this.**", ""] + [f"- {c}" for c in s.bullets[:_N_CAVEATS]]
            parts += [""]
        elif s.key == "provenance":
            parts += ["<details><summary>Provenance</summary>", ""]
            parts += [f"- {b}" for b in s.bullets] + ["", "</details>", ""]
    return "\n".join(parts)


def render_model_card(result: ProbeResult, *, plot: str | os.PathLike | None = None) -> str:
    """The ``model-index`` front matter and a Markdown section for "Bias, Risks, and
    Limitations" of a Hugging Face model card.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        In memory or read with :meth:`~biasamp.results.ProbeResult.load`.
    plot : str, optional
        File name of the Fig. 5 PNG, linked as given (relative to the model card).

    Returns
    -------
    str
    """
    links = {"fig5": os.fspath(plot)} if plot else {}
    return model_card(build_sections(result), links)
