"""Reports from a saved probe result: Markdown, self-contained HTML, JSON, model card.

Everything here reads only the files :meth:`biasamp.ProbeResult.save` wrote
(``results.json``, plus ``by_pair.csv``), so ``biasamp report DIR`` rebuilds a report
without a model; this module never imports torch, and matplotlib only when plotting.

Examples
--------
>>> import biasamp.report as r
>>> r.format_value(0.13681, 0.02259)
'0.1368 ± 0.0226'
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import BiasampError
from .._registry import did_you_mean

__all__ = [
    "FORMATS",
    "build_report",
    "compare_dirs",
    "compare_table",
    "format_value",
    "load_results",
    "render_html",
    "render_markdown",
    "render_model_card",
]

log = logging.getLogger(__name__)

#: Report formats and the file each writes.
FORMATS = {"md": "report.md", "html": "report.html", "json": "report.json",
           "model-card": "model_card.md"}
_COMPARE_FORMATS = ("md", "csv", "html")
_DIR_LABEL = {"attribute_to_task": "A→T", "task_to_attribute": "T→A"}
_SUMMARY_KEYS = ("base_rates", "direction", "mean", "std", "ci_low", "ci_high", "n_templates",
                 "per_template")

_CAVEATS = [
    "**The value depends on the base-rate source.** BiasAmp→ measures how much the model "
    "*amplifies* a base correlation; every row names the source it was measured against "
    "(uniform, Wikipedia co-occurrence counts, US labor statistics, ...). Different sources "
    "can even disagree on the sign of the association for the same occupation.",
    "**T→A and A→T values are not comparable to each other.** T→A compares "
    "P(attribute | task) (a distribution over a few attributes), A→T compares "
    "P(task | attribute) (a distribution over all the tasks), so the A→T numbers are on a much "
    "smaller scale. Compare each direction only with itself (other models, other sources).",
    "Values are means over fill-in-the-blank templates; the spread (population std, bootstrap "
    "CI over templates) shows how much they depend on the wording of the template.",
    "The model's probabilities are renormalised over the candidate words; the raw probability "
    "mass the candidates cover is reported with the results. Candidates that split into several word "
    "pieces are listed in the tokenisation audit.",
    "The attributes are words (pronouns), not people's genders; a binary he/she probe says "
    "nothing about non-binary identities unless `they` is included.",
]


# ----------------------------------------------------------------------------- utils
def format_value(mean, std=None, ci=None, digits: int = 4) -> str:
    """``mean ± std`` (and ``[low, high]``) with fixed digits; NaN shows as ``n/a``.

    >>> format_value(-0.12544, 0.0026, (-0.13, -0.12))
    '-0.1254 ± 0.0026 [-0.1300, -0.1200]'
    """
    def f(v):
        return "n/a" if v is None or not np.isfinite(float(v)) else f"{float(v):.{digits}f}"
    text = f(mean)
    if std is not None:
        text += f" ± {f(std)}"
    if ci is not None:
        text += f" [{f(ci[0])}, {f(ci[1])}]"
    return text


def load_results(path) -> dict:
    """Read ``results.json`` from a result directory (or the file itself).

    Raises :class:`BiasampError` when it is missing or lacks the required keys.
    """
    p = Path(path)
    f = p / "results.json" if p.is_dir() else p
    if not f.is_file():
        raise BiasampError(f"result directory {str(path)!r} has no results.json (run "
                           "`biasamp probe --out DIR` first)")
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BiasampError(f"{str(f)!r} is not valid JSON: {exc}") from None
    missing = [k for k in ("summary", "by_pair", "provenance") if k not in data]
    if missing:
        raise BiasampError(f"{str(f)!r} lacks the keys {missing}; not a biasamp result")
    for rec in data["summary"]:
        if set(rec) != set(_SUMMARY_KEYS):
            raise BiasampError(f"{str(f)!r}: summary records must have the keys "
                               f"{list(_SUMMARY_KEYS)}; got {sorted(rec)}")
    return data


def _summary_frame(results: dict) -> pd.DataFrame:
    return pd.DataFrame(results["summary"], columns=list(_SUMMARY_KEYS))


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def _headline(results: dict) -> pd.DataFrame:
    s = _summary_frame(results)
    conf = results.get("provenance", {}).get("bootstrap", {}).get("confidence", 0.95)
    return pd.DataFrame({
        "base rates": s["base_rates"],
        "direction": s["direction"].map(lambda d: _DIR_LABEL.get(d, d)),
        "BiasAmp→ mean ± std": [format_value(m, sd) for m, sd in zip(s["mean"], s["std"])],
        f"{conf:.0%} CI": [format_value(lo) + " – " + format_value(hi)
                           for lo, hi in zip(s["ci_low"], s["ci_high"])],
        "templates": s["n_templates"],
    })


def _top_pairs(results: dict, n: int = 10) -> pd.DataFrame:
    bp = pd.DataFrame(results["by_pair"])
    if bp.empty:
        return bp
    bp = bp.assign(_abs=bp["contribution"].abs()).sort_values("_abs", ascending=False).head(n)
    return pd.DataFrame({
        "base rates": bp["base_rates"], "direction": bp["direction"].map(_DIR_LABEL.get),
        "task": bp["task"], "attribute": bp["attribute"],
        "association": bp["association"].map(lambda v: f"{v:+.0f}"),
        "p_base": bp["p_base"].map(lambda v: format_value(v)),
        "p_model": bp["p_model"].map(lambda v: format_value(v)),
        "contribution [CI]": [format_value(c, ci=(lo, hi)) for c, lo, hi in
                              zip(bp["contribution"], bp["contribution_ci_low"],
                                  bp["contribution_ci_high"])],
    })


def _audit_frame(results: dict) -> pd.DataFrame:
    audit = pd.DataFrame(results.get("audit") or [])
    if audit.empty:
        return audit
    if "single_piece" in audit:
        audit = audit[~audit["single_piece"].astype(bool)]
    keep = [c for c in ("candidate", "pieces", "n_pieces", "first_piece",
                        "shares_first_piece_with") if c in audit.columns]
    return audit[keep].map(lambda v: " ".join(map(str, v)) if isinstance(v, list) else v)


def _mass_frame(results: dict) -> pd.DataFrame:
    mass = results.get("mass") or {}
    rows = [{"direction": _DIR_LABEL.get(d, d), **{k: (f"{v:.3g}" if k != "n_prompts" else v)
                                                    for k, v in m.items()}}
            for d, m in mass.items()]
    return pd.DataFrame(rows)


def _provenance_lines(results: dict) -> list[str]:
    p = results.get("provenance", {})
    v = p.get("versions", {})
    tpl = p.get("templates", {})
    lines = [
        f"- model: `{p.get('model')}` (revision: `{p.get('revision') or 'default'}`)",
        f"- device / dtype: {p.get('device')} / {p.get('dtype')}; estimator (scoring): "
        f"`{p.get('estimator')}`; compat: `{p.get('compat')}`; seed: {p.get('seed')}",
        f"- templates: `{tpl.get('name')}` ({tpl.get('n_templates')} templates, prompts sha256 "
        f"`{str(tpl.get('prompts_sha256', ''))[:16]}…`)",
        f"- tasks: `{p.get('tasks', {}).get('name')}`; attributes: "
        f"{', '.join(map(str, p.get('attributes', [])))}",
    ]
    seen = {}
    for key, bp in (p.get("base_rates") or {}).items():
        sha = str(bp.get("sha256") or bp.get("joint_sha256") or "")
        source, _, direction = key.partition("|")
        cite = bp.get("citation") or bp.get("name") or ""
        seen.setdefault((source, cite, sha), []).append(_DIR_LABEL.get(direction, direction))
    for (source, cite, sha), dirs in seen.items():
        lines.append(f"- base rates `{source}` ({', '.join(dirs)}): {cite} "
                     f"(sha256 `{sha[:16]}…`)")
    lines.append("- versions: " + ", ".join(f"{k} {val}" for k, val in sorted(v.items())))
    lines.append(f"- created: {p.get('timestamp')}")
    return lines


def _undefined_notes(results: dict) -> list[str]:
    """One line per (source, direction) whose value leaves undefined cells out."""
    per = pd.DataFrame(results.get("per_template") or [])
    if per.empty or "n_nan" not in per:
        return []
    n_cells = len({(r["task"], r["attribute"]) for r in results["by_pair"]})
    worst = per.groupby(["base_rates", "direction"], sort=False)["n_nan"].max()
    return [f"{src}, {_DIR_LABEL.get(d, d)}: {int(n)} of {n_cells} (task, attribute) cells are "
            "undefined (all-zero base row or column) and left out of the value."
            for (src, d), n in worst.items() if n > 0]


def _note_small_models(results: dict) -> str:
    return results.get("provenance", {}).get("note", "")


# --------------------------------------------------------------------------- renderers
def render_markdown(results: dict, *, plots: dict | None = None) -> str:
    """The Markdown report; ``plots`` maps kind -> file name (relative links)."""
    p = results.get("provenance", {})
    parts = [f"# BiasAmp→ report: `{p.get('model')}`", ""]
    note = _note_small_models(results)
    if note:
        parts += [f"> {note}", ""]
    parts += ["## Summary", "", _md_table(_headline(results)), "",
              "Mean and population std (ddof=0) over templates; percentile bootstrap CI over "
              "templates. A positive value means the model amplifies the base correlation.", ""]
    undefined = _undefined_notes(results)
    if undefined:
        parts += ["**Undefined cells.**", ""] + [f"- {u}" for u in undefined] + [""]
    if plots:
        parts += ["## Plots", ""]
        titles = {"fig5": "Model vs base P(attribute | task) (Fig. 5 analogue)",
                  "forest": "Per-task Δ with bootstrap CIs",
                  "base_rates": "Base-rate comparison"}
        for kind, name in plots.items():
            parts += [f"![{titles.get(kind, kind)}]({name})", ""]
    parts += ["## Largest contributions", "", _md_table(_top_pairs(results)), "",
              "Full disaggregation: `by_pair.csv`.", ""]
    from ._plots import sign_agreement
    agree = sign_agreement(results)
    if not agree.empty:
        agree = agree.assign(direction=agree["direction"].map(_DIR_LABEL.get),
                             agreement=agree["agreement"].map(lambda v: f"{v:.2f}"))
        parts += ["## Sign agreement of the association between sources", "",
                  _md_table(agree), ""]
    mass = _mass_frame(results)
    if not mass.empty:
        parts += ["## Raw candidate probability mass", "",
                  "Share of the model's vocabulary probability that the candidates cover "
                  "before renormalisation.", "", _md_table(mass), ""]
    audit = _audit_frame(results)
    parts += ["## Tokenisation audit", ""]
    parts += (["Candidates that are not a single word piece for this model:", "",
               _md_table(audit), ""] if not audit.empty else
              ["Every candidate is a single word piece for this model.", ""])
    parts += ["## Caveats", ""] + [f"- {c}" for c in _CAVEATS] + [""]
    parts += ["## Provenance", ""] + _provenance_lines(results) + [""]
    return "\n".join(parts)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;border-bottom:2px solid #ddd;padding-bottom:.3em}h2{font-size:1.25em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left}th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}code{background:#f4f4f4;padding:0 .2em}
.note{background:#fff7e0;border-left:4px solid #e0a800;padding:.5em 1em}
"""


def _html_table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _inline_md(text: str) -> str:
    """Escape, then the inline marks the caveats use (``**bold**``, ``*em*``, ```code```)."""
    import re
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    t = re.sub(r"\*(.+?)\*", r"<em>\1</em>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


def render_html(results: dict, *, plots: dict | None = None) -> str:
    """A self-contained HTML report: inline CSS, PNGs embedded as base64 data URIs.

    ``plots`` maps kind -> path of a PNG file (read and embedded).
    """
    p = results.get("provenance", {})
    title = f"BiasAmp→ report: {p.get('model')}"
    out = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
           f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>"]
    note = _note_small_models(results)
    if note:
        out.append(f"<p class='note'>{html.escape(note)}</p>")
    out += ["<h2>Summary</h2>", _html_table(_headline(results)),
            "<p>Mean and population std (ddof=0) over templates; percentile bootstrap CI over "
            "templates. A positive value means the model amplifies the base correlation.</p>"]
    undefined = _undefined_notes(results)
    if undefined:
        out += ["<p class='note'><strong>Undefined cells.</strong> "
                + " ".join(html.escape(u) for u in undefined) + "</p>"]
    titles = {"fig5": "Model vs base P(attribute | task) (Fig. 5 analogue)",
              "forest": "Per-task Δ with bootstrap CIs", "base_rates": "Base-rate comparison"}
    for kind, path in (plots or {}).items():
        data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
        out += [f"<h2>{html.escape(titles.get(kind, kind))}</h2>",
                f"<img alt='{html.escape(titles.get(kind, kind))}' "
                f"src='data:image/png;base64,{data}'>"]
    out += ["<h2>Largest contributions</h2>", _html_table(_top_pairs(results))]
    from ._plots import sign_agreement
    agree = sign_agreement(results)
    if not agree.empty:
        agree = agree.assign(direction=agree["direction"].map(_DIR_LABEL.get),
                             agreement=agree["agreement"].map(lambda v: f"{v:.2f}"))
        out += ["<h2>Sign agreement of the association between sources</h2>", _html_table(agree)]
    mass = _mass_frame(results)
    if not mass.empty:
        out += ["<h2>Raw candidate probability mass</h2>", _html_table(mass)]
    audit = _audit_frame(results)
    out += ["<h2>Tokenisation audit</h2>",
            _html_table(audit) if not audit.empty else
            "<p>Every candidate is a single word piece for this model.</p>"]
    out += ["<h2>Caveats</h2><ul>"] + [f"<li>{_inline_md(c)}</li>" for c in _CAVEATS] + ["</ul>"]
    out += ["<h2>Provenance</h2><ul>"] + [f"<li>{_inline_md(line[2:])}</li>"
                                          for line in _provenance_lines(results)] + ["</ul>"]
    out.append("</body></html>")
    return "\n".join(out)


def render_model_card(results: dict, *, plot: str | None = None) -> str:
    """A Markdown section for "Bias, Risks, and Limitations" of a Hugging Face model card."""
    p = results.get("provenance", {})
    parts = ["## Bias, Risks, and Limitations", "",
             "### Directional bias amplification (BiasAmp→)", "",
             f"Measured with biasamp {p.get('versions', {}).get('biasamp', '')} on "
             f"`{p.get('model')}` "
             f"using fill-in-the-blank templates `{p.get('templates', {}).get('name')}` "
             f"({p.get('templates', {}).get('n_templates')} templates), tasks "
             f"`{p.get('tasks', {}).get('name')}` and attributes "
             f"{', '.join(map(str, p.get('attributes', [])))} "
             "(Wang & Russakovsky, *Directional Bias Amplification*, ICML 2021).", ""]
    note = _note_small_models(results)
    if note:
        parts += [f"> {note}", ""]
    parts += [_md_table(_headline(results)), ""]
    undefined = _undefined_notes(results)
    if undefined:
        parts += [f"- {u}" for u in undefined] + [""]
    if plot:
        parts += [f"<!-- upload {plot} next to the model card's README.md -->",
                  f"![Model vs base P(attribute | task)]({plot})", ""]
    parts += ["**How to read this.**", ""] + [f"- {c}" for c in _CAVEATS[:3]] + [""]
    parts += ["<details><summary>Provenance</summary>", ""] + _provenance_lines(results) + \
             ["", "</details>", ""]
    return "\n".join(parts)


def _report_json(results: dict) -> dict:
    from ._plots import sign_agreement
    return {"summary": results["summary"],
            "sign_agreement": sign_agreement(results).to_dict(orient="records"),
            "mass": results.get("mass"), "provenance": results.get("provenance")}


def _check_formats(formats, allowed, name="format") -> list[str]:
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    formats = list(formats)
    for f in formats:
        if f not in allowed:
            raise BiasampError(f"{name} must be some of {sorted(allowed)}; got "
                               f"{f!r}{did_you_mean(f, allowed)}")
    if not formats:
        raise BiasampError(f"{name} must name at least one of {sorted(allowed)}; got none")
    return formats


def build_report(result_dir, *, formats: Sequence[str] | str = ("md", "html", "json"),
                 plots: bool = True) -> dict[str, Path]:
    """Render reports (and PNG plots) into a result directory from its ``results.json``.

    Parameters
    ----------
    result_dir : path
        A directory written by :meth:`biasamp.ProbeResult.save`.
    formats : list of str or comma-separated str
        Any of ``md``, ``html``, ``json``, ``model-card``.
    plots : bool
        Also (re)draw the PNG plots.

    Returns
    -------
    dict mapping format (and plot kind) to the written path.
    """
    d = Path(result_dir)
    formats = _check_formats(formats, FORMATS)
    results = load_results(d)
    written: dict[str, Path] = {}
    plot_paths = {}
    if plots and results["by_pair"]:
        from ._plots import plot_all
        plot_paths = plot_all(results, d)
        written.update(plot_paths)
    rel = {k: os.path.basename(v) for k, v in plot_paths.items()}
    for fmt in formats:
        path = d / FORMATS[fmt]
        if fmt == "md":
            text = render_markdown(results, plots=rel)
        elif fmt == "html":
            text = render_html(results, plots=plot_paths)
        elif fmt == "json":
            text = json.dumps(_report_json(results), indent=2, allow_nan=False) + "\n"
        else:
            text = render_model_card(results, plot=rel.get("fig5"))
        path.write_text(text, encoding="utf-8")
        written[fmt] = path
    log.info("wrote %s", ", ".join(str(p) for p in written.values()))
    return written


# ----------------------------------------------------------------------------- compare
def compare_table(result_dirs: Sequence) -> pd.DataFrame:
    """Long table of several results: model, result_dir, and the summary columns.

    Raises :class:`BiasampError` when fewer than one directory is given.
    """
    if not result_dirs:
        raise BiasampError("result_dirs must name at least one result directory; got none")
    frames = []
    for rd in result_dirs:
        res = load_results(rd)
        s = _summary_frame(res).drop(columns=["per_template"])
        s.insert(0, "result_dir", str(rd))
        s.insert(0, "model", str(res["provenance"].get("model")))
        frames.append(s)
    return pd.concat(frames, ignore_index=True)


def _wide(long: pd.DataFrame) -> pd.DataFrame:
    # two dirs with the same model id: tell them apart by their folder
    dup = long.groupby("model")["result_dir"].transform("nunique") > 1
    labels = np.where(dup, long["model"] + " (" + long["result_dir"] + ")", long["model"])
    long = long.assign(label=labels)
    cells = long.assign(cell=[format_value(m, s, (lo, hi)) for m, s, lo, hi in
                              zip(long["mean"], long["std"], long["ci_low"], long["ci_high"])])
    order = list(dict.fromkeys(cells["label"]))
    wide = cells.pivot_table(index=["base_rates", "direction"], columns="label", values="cell",
                             aggfunc="first", sort=False)
    wide = wide.reindex(columns=order).fillna("—").reset_index()
    wide["direction"] = wide["direction"].map(lambda d: _DIR_LABEL.get(d, d))
    wide.columns.name = None
    return wide


def compare_dirs(result_dirs: Sequence, *, out=None,
                 formats: Sequence[str] | str = ("md", "csv")) -> pd.DataFrame:
    """Side-by-side comparison of several result directories.

    Writes ``comparison.md`` / ``comparison.csv`` / ``comparison.html`` into ``out``
    when given; returns the wide table (one row per (base_rates, direction), one
    column per model, cells ``mean ± std [ci_low, ci_high]``).
    """
    formats = _check_formats(formats, _COMPARE_FORMATS)
    long = compare_table(result_dirs)
    wide = _wide(long)
    if out is not None:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        if "csv" in formats:
            long.to_csv(d / "comparison.csv", index=False)
        if "md" in formats:
            (d / "comparison.md").write_text(
                "# BiasAmp→ comparison\n\nmean ± std [bootstrap CI] over templates; compare "
                "each direction only with itself.\n\n" + _md_table(wide) + "\n", encoding="utf-8")
        if "html" in formats:
            (d / "comparison.html").write_text(
                "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>BiasAmp→ "
                f"comparison</title><style>{_CSS}</style></head><body><h1>BiasAmp→ comparison"
                "</h1><p>mean ± std [bootstrap CI] over templates; compare each direction only "
                f"with itself.</p>{_html_table(wide)}</body></html>\n", encoding="utf-8")
    return wide


def render(result, out_dir, *, formats):
    """Temporary: render from the saved folder."""
    return build_report(out_dir, formats=formats)
