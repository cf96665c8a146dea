"""The probe: templates -> prompts -> scorer -> probability tables -> BiasAmp-> -> result.

The stages are kept apart so that each can be checked on its own:

* :func:`probe` / :func:`probe_many` run the whole job for one / several models
  (the only part that needs a model; :mod:`biasamp.scoring` is imported lazily).
* :func:`evaluate_tables` is pure: given the model's probability tables of shape
  ``(n_templates, n_tasks, n_attributes)`` per direction and the base-rate sources,
  it computes BiasAmp-> per template, the aggregates over templates (mean,
  population std, seeded bootstrap CI) and the per-(task, attribute) disaggregation.
* :class:`ProbeResult` holds everything and writes it with :meth:`ProbeResult.save`;
  :mod:`biasamp.report` renders reports from the saved files alone.

Orientation everywhere: rows are tasks (occupations), columns are attributes.
A->T tables hold ``P(task | attribute)`` (each column sums to 1), T->A tables hold
``P(attribute | task)`` (each row sums to 1).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import logging
import os
import platform
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from ._errors import BiasampError
from ._registry import did_you_mean

__all__ = [
    "COMPAT_MODES",
    "DIRECTIONS",
    "Evaluation",
    "ProbeConfig",
    "ProbeResult",
    "evaluate_tables",
    "model_slug",
    "probe",
    "probe_many",
    "resolve_direction",
]

log = logging.getLogger(__name__)

#: The two directions of BiasAmp->, in report order.
DIRECTIONS = ("attribute_to_task", "task_to_attribute")
_DIRECTION_ALIASES = {"a->t": "attribute_to_task", "t->a": "task_to_attribute",
                      "at": "attribute_to_task", "ta": "task_to_attribute"}

#: Compatibility modes; ``wang2021`` reproduces the BiasAmp-> paper's Table 2 pipeline.
COMPAT_MODES = ("wang2021",)
_COMPAT = {
    "wang2021": {
        "templates": "wang2021",
        "scoring": "first-piece",
        "sources": {"uniform": "uniform-wang2021", "labor-2016": "labor-2016-wang2021",
                    "wikipedia": "wikipedia-wang2021"},
    },
}
_TABLE_FORMATS = ("csv", "parquet")
_REPORT_FORMATS = ("md", "html", "json", "model-card")


def resolve_direction(direction: str) -> str:
    """Return the canonical direction name; accept ``A->T`` / ``T->A`` aliases.

    >>> resolve_direction("T->A")
    'task_to_attribute'
    """
    if isinstance(direction, str):
        if direction in DIRECTIONS:
            return direction
        alias = _DIRECTION_ALIASES.get(direction.strip().lower())
        if alias:
            return alias
    raise BiasampError(f"direction must be one of {set(DIRECTIONS)} (or 'A->T', 'T->A'); "
                       f"got {direction!r}")


def model_slug(model: str) -> str:
    """A folder-safe name for a model id or path.

    >>> model_slug("google/bert_uncased_L-2_H-128_A-2")
    'google--bert_uncased_L-2_H-128_A-2'
    >>> model_slug("/tmp/models/tiny-bert/")
    'tiny-bert'
    """
    text = str(model).rstrip("/\\")
    if os.path.isabs(text) or text.startswith((".", "~")):
        text = Path(text).name
    slug = "".join(c if (c.isalnum() or c in "-_.") else "-" for c in text.replace("/", "--"))
    return slug.strip(".") or "model"


# --------------------------------------------------------------------------- config
def _as_list(value, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, Sequence):
        out = []
        for v in value:
            if not isinstance(v, str):
                raise BiasampError(f"{name} must be a list of strings; got {value!r}")
            out.extend(_as_list(v, name))
        return out
    raise BiasampError(f"{name} must be a string or a list of strings; got {value!r}")


@dataclass
class ProbeConfig:
    """Everything a probe needs; loadable from TOML or YAML (:meth:`from_file`).

    Parameters
    ----------
    models : list of str
        Hugging Face model ids or local model folders (one result per model).
    templates : str
        Template set name (``biasamp templates list``) or path to a template file.
    attributes : str or list of str
        Attribute identities, e.g. ``"he,she"`` or ``["he", "she", "they"]``.
    tasks : str
        Task vocabulary name (e.g. ``winobias32``) or path.
    base_rates : list of str
        Base-rate source names (``biasamp base_rates list``) or ``file:path.csv``.
    scoring : str
        Candidate scoring mode: ``word`` (all word pieces), ``first-piece`` or ``pll``.
    compat : str or None
        ``"wang2021"`` reproduces the paper's procedure: template set ``wang2021``,
        first-piece scoring and the paper's base-rate constructions.
    device, dtype, batch_size, revision, cache_dir, trust_remote_code
        Passed to :class:`biasamp.scoring.MaskedLMScorer`.
    seed, n_resamples, confidence
        Bootstrap over templates (seeded, percentile interval).
    max_templates : int or None
        Use only the first ``max_templates`` templates of the set (quick runs).
    out : str or None
        Output directory (used by the CLI and :meth:`ProbeResult.save` defaults).
    formats : list of str
        Reports to write next to the results: any of ``md``, ``html``, ``json``, ``model-card``.
    tables : str
        Probability tables as ``csv`` (default) or ``parquet`` (needs pyarrow).
    progress : bool
        Show progress bars (the CLI turns them on).
    note : str or None
        A free-text note shown at the top of every report (e.g. "tiny random model").

    Examples
    --------
    >>> cfg = ProbeConfig(models=["bert-base-uncased"], base_rates="uniform,labor-2016")
    >>> cfg.base_rates
    ['uniform', 'labor-2016']
    >>> ProbeConfig(models=["m"], compat="wang2021").resolved().scoring
    'first-piece'
    """

    models: list[str] = field(default_factory=list)
    templates: str = "adjectives"
    attributes: list[str] = field(default_factory=lambda: ["he", "she"])
    tasks: str = "winobias32"
    base_rates: list[str] = field(default_factory=lambda: ["uniform", "wikipedia", "labor-2016"])
    scoring: str = "word"
    compat: str | None = None
    device: str = "auto"
    dtype: str = "float32"
    batch_size: int = 32
    revision: str | None = None
    trust_remote_code: bool = False
    seed: int = 0
    n_resamples: int = 10_000
    confidence: float = 0.95
    max_templates: int | None = None
    cache_dir: str | None = None
    out: str | None = None
    formats: list[str] = field(default_factory=lambda: ["md", "html", "json"])
    tables: str = "csv"
    progress: bool = False
    note: str | None = None

    def __post_init__(self):
        if isinstance(self.models, str):
            self.models = _as_list(self.models, "models")
        else:
            self.models = _as_list(list(self.models), "models")
        self.attributes = _as_list(self.attributes, "attributes")
        self.base_rates = _as_list(self.base_rates, "base_rates")
        self.formats = _as_list(self.formats, "formats")
        self.validate()

    # -- validation --------------------------------------------------------------
    def validate(self) -> None:
        """Check the options that need no data; raise :class:`BiasampError` on bad input."""
        if self.compat is not None and self.compat not in COMPAT_MODES:
            raise BiasampError(f"compat must be one of {set(COMPAT_MODES)} or None; got "
                               f"{self.compat!r}{did_you_mean(self.compat, COMPAT_MODES)}")
        for name in ("batch_size", "n_resamples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise BiasampError(f"{name} must be a positive integer; got {v!r}")
        if self.max_templates is not None and (isinstance(self.max_templates, bool) or not isinstance(
                self.max_templates, (int, np.integer)) or self.max_templates < 1):
            raise BiasampError(f"max_templates must be a positive integer or None; got "
                               f"{self.max_templates!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise BiasampError(f"seed must be an integer; got {self.seed!r}")
        if isinstance(self.confidence, bool) or not isinstance(self.confidence, (int, float)) \
                or not 0.0 < float(self.confidence) < 1.0:
            raise BiasampError(f"confidence must be a number in (0, 1); got {self.confidence!r}")
        from .scoring import SCORING_MODES  # light: no torch
        if self.scoring not in SCORING_MODES:
            raise BiasampError(f"scoring must be one of {set(SCORING_MODES)}; got "
                               f"{self.scoring!r}{did_you_mean(self.scoring, SCORING_MODES)}")
        if self.tables not in _TABLE_FORMATS:
            raise BiasampError(f"tables must be one of {set(_TABLE_FORMATS)}; got {self.tables!r}")
        bad = [f for f in self.formats if f not in _REPORT_FORMATS]
        if bad:
            raise BiasampError(f"formats must be a subset of {set(_REPORT_FORMATS)}; got "
                               f"{bad[0]!r}{did_you_mean(bad[0], _REPORT_FORMATS)}")
        if not self.base_rates:
            raise BiasampError(f"base_rates must name at least one source; got {self.base_rates!r}")
        if not self.attributes:
            raise BiasampError(f"attributes must name at least two attributes; got "
                               f"{self.attributes!r}")

    def resolved(self) -> ProbeConfig:
        """Return a copy with the compat mode applied (template set, scoring, sources).

        >>> ProbeConfig(models=["m"], compat="wang2021", base_rates="uniform").resolved().base_rates
        ['uniform-wang2021']
        """
        cfg = dataclasses.replace(self)
        if cfg.compat is None:
            return cfg
        spec = _COMPAT[cfg.compat]
        defaults = ProbeConfig.__dataclass_fields__
        for key in ("templates", "scoring"):
            current = getattr(cfg, key)
            if current != spec[key] and current != defaults[key].default:
                log.warning("compat=%r uses %s=%r; ignoring %s=%r", cfg.compat, key, spec[key],
                            key, current)
            setattr(cfg, key, spec[key])
        sources = []
        for name in cfg.base_rates:
            if name in spec["sources"].values():
                sources.append(name)
            elif name in spec["sources"]:
                sources.append(spec["sources"][name])
            else:
                raise BiasampError(
                    f"base_rates: source {name!r} has no {cfg.compat} construction; with "
                    f"compat={cfg.compat!r} use some of {sorted(spec['sources'])}")
        cfg.base_rates = sources
        return cfg

    # -- loading -----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeConfig:
        """Build a config from a mapping; unknown keys are an error (with "did you mean").

        ``model`` is accepted for ``models`` and dashes for underscores
        (``base-rates``), as on the command line.

        >>> ProbeConfig.from_dict({"model": "m", "base-rates": ["uniform"]}).models
        ['m']
        """
        if not isinstance(data, Mapping):
            raise BiasampError(f"config must be a mapping of option names to values; got "
                               f"{type(data).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        kwargs = {}
        for key, value in data.items():
            k = str(key).replace("-", "_")
            k = {"model": "models", "format": "formats"}.get(k, k)
            if k not in names:
                raise BiasampError(f"unknown config option {key!r}{did_you_mean(k, names)}; "
                                   f"allowed: {', '.join(names)}")
            kwargs[k] = value
        return cls(**kwargs)

    @classmethod
    def from_file(cls, path: str | os.PathLike, **overrides) -> ProbeConfig:
        """Load a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file; keyword overrides win.

        The options may sit at the top level or under a ``[probe]`` table.
        """
        p = Path(path)
        if not p.is_file():
            raise BiasampError(f"config file {str(path)!r} does not exist")
        text = p.read_text(encoding="utf-8")
        suffix = p.suffix.lower()
        try:
            if suffix == ".toml":
                data = tomllib.loads(text)
            elif suffix in (".yaml", ".yml"):
                import yaml
                data = yaml.safe_load(text) or {}
            else:
                raise BiasampError(f"config file must end in .toml, .yaml or .yml; got {str(path)!r}")
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            if isinstance(exc, BiasampError):
                raise
            raise BiasampError(f"config file {str(path)!r} is not valid {suffix[1:]}: {exc}") from None
        except Exception as exc:  # yaml.YAMLError
            raise BiasampError(f"config file {str(path)!r} is not valid {suffix[1:]}: {exc}") from None
        if isinstance(data, Mapping) and "probe" in data and isinstance(data["probe"], Mapping):
            data = data["probe"]
        merged = dict(data) if isinstance(data, Mapping) else data
        if isinstance(merged, dict):
            merged.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_dict(merged)

    def to_dict(self) -> dict:
        """Plain, JSON-serialisable dict of the options."""
        return dataclasses.asdict(self)


# ----------------------------------------------------------------------- evaluation
@dataclass
class Evaluation:
    """What :func:`evaluate_tables` returns.

    Attributes
    ----------
    summary : DataFrame
        One row per (base_rates, direction): ``mean``, ``std`` (population, ddof=0),
        ``ci_low``, ``ci_high``, ``n_templates``, ``per_template`` (list of floats).
    by_pair : DataFrame
        One row per (base_rates, direction, task, attribute): ``association``,
        ``p_base``, ``p_model`` (mean over templates), ``p_model_std``, ``delta`` and
        ``contribution`` (means over templates) with bootstrap CIs, ``n_templates``.
    per_template : DataFrame
        Long table: base_rates, direction, template_id, value, n_ties, n_nan.
    base_provenance : dict
        Provenance of each base-rate table, keyed by ``"<source>|<direction>"``.
    """

    summary: pd.DataFrame
    by_pair: pd.DataFrame
    per_template: pd.DataFrame
    base_provenance: dict


def _get_source(source):
    if isinstance(source, str):
        from . import base_rates
        return source, base_rates.get_source(source)
    name = getattr(source, "name", None) or type(source).__name__
    return str(name), source


def _check_tables(tables, name, n_tasks, n_attr, axis):
    arr = np.asarray(tables, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[1:] != (n_tasks, n_attr):
        raise BiasampError(f"{name} must have shape (n_templates, {n_tasks}, {n_attr}); got "
                           f"{arr.shape}")
    if arr.shape[0] == 0:
        raise BiasampError(f"{name} holds no templates (shape {arr.shape})")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise BiasampError(f"{name} must hold finite non-negative probabilities")
    sums = arr.sum(axis=axis)
    if not np.allclose(sums, 1.0, atol=1e-6):
        what = "column" if axis == 1 else "row"
        worst = float(np.max(np.abs(sums - 1.0)))
        raise BiasampError(f"{name}: every {what} must sum to 1 (max deviation {worst:.3g})")
    return arr


def evaluate_tables(tables_at, tables_ta, tasks: Sequence[str], attributes: Sequence[str],
                    sources: Sequence, *, template_ids: Sequence[str] | None = None,
                    n_resamples: int = 10_000, seed: int = 0,
                    confidence: float = 0.95, compat: str | None = None) -> Evaluation:
    """BiasAmp-> per template and its aggregates, from fixed probability tables.

    Parameters
    ----------
    tables_at : array-like of shape (n_templates, n_tasks, n_attributes)
        ``P(task | attribute)`` per template; every column sums to 1.
    tables_ta : array-like of shape (n_templates, n_tasks, n_attributes)
        ``P(attribute | task)`` per template; every row sums to 1.
    tasks, attributes : sequence of str
        Row and column labels.
    sources : sequence of str or BaseRateSource
        Base-rate sources (names are looked up with :func:`biasamp.base_rates.get_source`).
        Each source's table is built per direction (``source.table(tasks, attributes,
        direction=...)``); its ``association`` and ``tie_tol`` are passed to the metric.
    template_ids : sequence of str, optional
        Labels of the templates (default ``t0, t1, ...``).
    n_resamples, seed, confidence
        Percentile bootstrap over templates (:func:`biasamp.metrics.bootstrap_ci`).
    compat : {None, "wang2021"}
        ``"wang2021"`` follows the paper's code for cells whose association is 0: their
        contribution is 0 and they count in the mean *even when the base row is all zero*
        (there the paper's ``0/0`` Δ is overwritten by 0). By default such undefined cells
        are NaN and left out of the mean (with one warning that counts them).

    Returns
    -------
    Evaluation

    Notes
    -----
    ``std`` is the population standard deviation over templates (``ddof=0``), as in
    the paper's Table 2.
    """
    from .metrics import bootstrap_ci, directional_bias_amplification

    tasks = [str(t) for t in tasks]
    attributes = [str(a) for a in attributes]
    n_t, n_a = len(tasks), len(attributes)
    if n_t < 1:
        raise BiasampError(f"tasks must not be empty; got {tasks!r}")
    if n_a < 2:
        raise BiasampError(f"attributes must hold at least two attributes; got {attributes!r}")
    at = _check_tables(tables_at, "tables_at", n_t, n_a, axis=1)
    ta = _check_tables(tables_ta, "tables_ta", n_t, n_a, axis=2)
    if at.shape[0] != ta.shape[0]:
        raise BiasampError(f"tables_at and tables_ta must hold the same number of templates; got "
                           f"{at.shape[0]} and {ta.shape[0]}")
    n_tpl = at.shape[0]
    if template_ids is None:
        template_ids = [f"t{i}" for i in range(n_tpl)]
    template_ids = [str(t) for t in template_ids]
    if len(template_ids) != n_tpl:
        raise BiasampError(f"template_ids must have {n_tpl} entries; got {len(template_ids)}")
    if not sources:
        raise BiasampError("sources must name at least one base-rate source; got none")
    if compat is not None and compat not in COMPAT_MODES:
        raise BiasampError(f"compat must be one of {set(COMPAT_MODES)} or None; got {compat!r}")

    summary_rows, pair_frames, tpl_rows, base_prov = [], [], [], {}
    for source in sources:
        name, src = _get_source(source)
        for direction, tables in (("attribute_to_task", at), ("task_to_attribute", ta)):
            table = src.table(tasks, attributes, direction=direction)
            # Plain C-ordered arrays in (tasks, attributes) order: DataFrame.to_numpy() gives
            # Fortran order, and numpy's pairwise row sums then round differently, which
            # flips the paper's exact-tie signs (uniform, 3 pronouns) in compat mode.
            joint = _c_table(table.joint, tasks, attributes, f"base source {name!r} joint")
            kwargs = {"direction": direction}
            if getattr(table, "association", None) is not None:
                kwargs["association"] = _c_table(table.association, tasks, attributes,
                                                 f"base source {name!r} association")
            if getattr(table, "tie_tol", None) is not None:
                kwargs["tie_tol"] = table.tie_tol
            prov = dict(getattr(table, "provenance", None) or {})
            prov.setdefault("joint_sha256", _sha256_array(np.asarray(joint, dtype=np.float64)))
            base_prov[f"{name}|{direction}"] = _jsonable(prov)

            values = np.empty(n_tpl)
            deltas = np.empty((n_tpl, n_t * n_a))
            contribs = np.empty((n_tpl, n_t * n_a))
            p_model = np.empty((n_tpl, n_t * n_a))
            first = None
            n_nan_cells = 0
            for i in range(n_tpl):
                model = np.ascontiguousarray(tables[i])
                with _one_nan_warning():
                    res = directional_bias_amplification(model, joint, **kwargs)
                bp = _pairs_in_order(res.by_pair, tasks, attributes)
                value, n_nan = float(res.value), int(res.n_nan)
                if compat == "wang2021":
                    # the paper: `if indicator == 0: diff = 0`, then np.nanmean over all cells
                    zero = (bp["association"] == 0) & np.isnan(bp["contribution"])
                    if zero.any():
                        bp["contribution"] = np.where(zero, 0.0, bp["contribution"])
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", RuntimeWarning)
                            value = float(np.nanmean(bp["contribution"]))
                        n_nan = int(np.isnan(bp["contribution"]).sum())
                n_nan_cells = max(n_nan_cells, n_nan)
                values[i] = value
                deltas[i] = bp["delta"]
                contribs[i] = bp["contribution"]
                p_model[i] = bp["p_model"]
                if first is None:
                    first = bp
                tpl_rows.append({"base_rates": name, "direction": direction,
                                 "template_id": template_ids[i], "value": value,
                                 "n_ties": int(res.n_ties), "n_nan": n_nan})
            if n_nan_cells:
                log.warning("base source %r, %s: %d of %d (task, attribute) cells are undefined "
                            "(all-zero base row/column) and left out of the value",
                            name, direction, n_nan_cells, n_t * n_a)
            finite = values[np.isfinite(values)]
            if finite.size == 0:
                raise BiasampError(f"BiasAmp-> is undefined (NaN) for every template with base "
                                   f"source {name!r}, direction {direction!r}")
            if finite.size < n_tpl:
                log.warning("%d of %d templates give NaN for %s / %s; they are left out of the "
                            "mean", n_tpl - finite.size, n_tpl, name, direction)
            lo, hi = bootstrap_ci(finite, n_resamples=n_resamples, seed=seed,
                                  confidence=confidence)
            summary_rows.append({
                "base_rates": name, "direction": direction, "mean": float(np.mean(finite)),
                "std": float(np.std(finite, ddof=0)), "ci_low": float(lo), "ci_high": float(hi),
                "n_templates": int(finite.size), "per_template": [float(v) for v in values],
            })
            d_lo, d_hi = _cell_bootstrap_ci(deltas, n_resamples=n_resamples, seed=seed,
                                            confidence=confidence)
            c_lo, c_hi = _cell_bootstrap_ci(contribs, n_resamples=n_resamples, seed=seed,
                                            confidence=confidence)
            with warnings.catch_warnings():  # all-NaN (undefined) cells stay NaN, counted above
                warnings.simplefilter("ignore", RuntimeWarning)
                cell_stats = {"p_model": np.nanmean(p_model, axis=0),
                              "p_model_std": np.nanstd(p_model, axis=0, ddof=0),
                              "delta": np.nanmean(deltas, axis=0),
                              "contribution": np.nanmean(contribs, axis=0)}
            pair = pd.DataFrame({
                "base_rates": name, "direction": direction,
                "task": np.repeat(np.asarray(tasks, dtype=object), n_a),
                "attribute": np.tile(np.asarray(attributes, dtype=object), n_t),
                "association": first["association"],
                "p_base": first["p_base"],
                "p_model": cell_stats["p_model"],
                "p_model_std": cell_stats["p_model_std"],
                "delta": cell_stats["delta"],
                "delta_ci_low": np.asarray(d_lo, dtype=np.float64),
                "delta_ci_high": np.asarray(d_hi, dtype=np.float64),
                "contribution": cell_stats["contribution"],
                "contribution_ci_low": np.asarray(c_lo, dtype=np.float64),
                "contribution_ci_high": np.asarray(c_hi, dtype=np.float64),
                "n_templates": np.sum(np.isfinite(contribs), axis=0).astype(np.int64),
            })
            pair_frames.append(pair)
    summary = pd.DataFrame(summary_rows, columns=list(SUMMARY_KEYS))
    return Evaluation(summary=summary, by_pair=pd.concat(pair_frames, ignore_index=True),
                      per_template=pd.DataFrame(tpl_rows), base_provenance=base_prov)


#: Keys of each record of ``results.json``'s ``summary``.
SUMMARY_KEYS = ("base_rates", "direction", "mean", "std", "ci_low", "ci_high", "n_templates",
                "per_template")


_CELL_BLOCK = 1 << 22  # resample-count entries per chunk (memory bound of the fast bootstrap)


def _cell_bootstrap_ci(values: np.ndarray, *, n_resamples: int, seed: int,
                       confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-column percentile bootstrap of the mean over rows (templates), shape (m, k) -> (k,).

    Same resamples as ``biasamp.metrics.bootstrap_ci(values, ...)`` (identical seeded row
    draws), but each resample's column means are ``counts @ values / m`` (one matrix
    product) instead of a gather of shape (n_resamples, m, k): with 1,339 templates x 64
    cells and 10,000 resamples that is seconds instead of minutes. Columns holding NaN
    (undefined cells) go through ``bootstrap_ci`` itself; constant columns give exactly
    their value, as there.
    """
    from .metrics import bootstrap_ci

    v = np.asarray(values, dtype=np.float64)
    m, k = v.shape
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    has_nan = np.isnan(v).any(axis=0)
    const = ~has_nan & (v.min(axis=0) == v.max(axis=0))
    low[const] = high[const] = v[0, const]
    if has_nan.any() and not np.isnan(v[:, has_nan]).all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = bootstrap_ci(v[:, has_nan], n_resamples=n_resamples, seed=seed,
                                  confidence=confidence)
        low[has_nan], high[has_nan] = lo, hi
    free = ~has_nan & ~const
    if free.any():
        sub = np.ascontiguousarray(v[:, free])
        rng = np.random.default_rng(seed)
        block = max(1, _CELL_BLOCK // m)
        stats = []
        for start in range(0, int(n_resamples), block):
            b = min(block, int(n_resamples) - start)
            idx = rng.integers(0, m, size=(b, m))
            counts = np.bincount((idx + (np.arange(b) * m)[:, None]).ravel(),
                                 minlength=b * m).reshape(b, m).astype(np.float64)
            stats.append(counts @ sub / m)
        q = [100.0 * (1.0 - confidence) / 2.0, 100.0 * (1.0 + confidence) / 2.0]
        lo, hi = np.percentile(np.concatenate(stats, axis=0), q, axis=0)
        low[free], high[free] = lo, hi
    return low, high


class _DropUndefinedCells(logging.Filter):
    def filter(self, record):
        return "undefined" not in record.getMessage()


@contextlib.contextmanager
def _one_nan_warning():
    """Silence the metric's per-call NaN-cell warning; evaluate_tables warns once per table."""
    metric_log = logging.getLogger("biasamp.metrics._common")
    flt = _DropUndefinedCells()
    metric_log.addFilter(flt)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*undefined.*", category=RuntimeWarning)
            yield
    finally:
        metric_log.removeFilter(flt)


def _c_table(x, tasks, attributes, what) -> np.ndarray:
    """A (tasks x attributes) C-contiguous float64 array from a labelled table or an array."""
    if isinstance(x, pd.DataFrame):
        missing = [t for t in tasks if t not in set(map(str, x.index))]
        if missing:
            raise BiasampError(f"{what} lacks the tasks {missing}")
        x = x.rename(index=str, columns=str).reindex(index=tasks, columns=attributes)
        if x.isna().any().any():
            raise BiasampError(f"{what} lacks values for some (task, attribute) cells")
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if arr.shape != (len(tasks), len(attributes)):
        raise BiasampError(f"{what} must have shape ({len(tasks)}, {len(attributes)}); got "
                           f"{arr.shape}")
    return arr


def _pairs_in_order(by_pair: pd.DataFrame, tasks, attributes) -> dict:
    """The metric's by_pair columns (positional labels) as arrays in row-major cell order."""
    n_t, n_a = len(tasks), len(attributes)
    pos = (by_pair["task"].to_numpy(dtype=np.int64) * n_a
           + by_pair["attribute"].to_numpy(dtype=np.int64))
    if len(pos) != n_t * n_a or not np.array_equal(np.sort(pos), np.arange(n_t * n_a)):
        raise BiasampError("the metric's by_pair does not cover every (task, attribute) cell")
    order = np.empty(n_t * n_a, dtype=np.int64)
    order[pos] = np.arange(n_t * n_a)
    return {c: by_pair[c].to_numpy(dtype=np.float64)[order]
            for c in ("association", "p_base", "p_model", "delta", "contribution")}


def _sha256_array(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, dtype=np.float64).tobytes()).hexdigest()


def _jsonable(obj):
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        f = float(obj)
        return f if np.isfinite(f) else None
    if isinstance(obj, float):
        return obj if np.isfinite(obj) else None
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    if isinstance(obj, os.PathLike):
        return str(obj)
    return str(obj)


# --------------------------------------------------------------------------- result
@dataclass
class ProbeResult:
    """The result of probing one model.

    Attributes
    ----------
    summary : DataFrame
        One row per (base_rates, direction); see :data:`SUMMARY_KEYS`.
    by_pair : DataFrame
        Per (base_rates, direction, task, attribute) disaggregation with bootstrap CIs.
    per_template : DataFrame
        BiasAmp-> per (base_rates, direction, template).
    tables : DataFrame
        Long probability tables: template_id, direction, task, attribute, prob, log_prob.
    audit : DataFrame
        How every candidate tokenises for the model (``scorer.audit``).
    mass : dict
        Raw candidate probability mass summarised per direction.
    provenance : dict
        Versions, model, device, dtype, seed, estimator, hashes, timestamp.
    config : dict
        The resolved configuration.
    """

    summary: pd.DataFrame
    by_pair: pd.DataFrame
    per_template: pd.DataFrame
    tables: pd.DataFrame
    audit: pd.DataFrame
    mass: dict
    provenance: dict
    config: dict

    def to_json_dict(self) -> dict:
        """The content of ``results.json``."""
        summary = [{k: _jsonable(rec[k]) for k in SUMMARY_KEYS}
                   for rec in self.summary.to_dict(orient="records")]
        return {
            "summary": summary,
            "by_pair": _jsonable(self.by_pair.to_dict(orient="records")),
            "per_template": _jsonable(self.per_template.to_dict(orient="records")),
            "audit": _jsonable(self.audit.to_dict(orient="records")),
            "mass": _jsonable(self.mass),
            "provenance": _jsonable(self.provenance),
            "config": _jsonable(self.config),
        }

    def save(self, out: str | os.PathLike | None = None, *, tables: str | None = None,
             formats: Sequence[str] | None = None) -> Path:
        """Write ``results.json``, ``by_pair.csv``, the probability tables and reports.

        Parameters
        ----------
        out : path, optional
            Directory (created); default ``config["out"]``.
        tables : {"csv", "parquet"}, optional
            Format of the probability tables (default from the config).
        formats : list of str, optional
            Reports to render (``md``, ``html``, ``json``, ``model-card``); default from
            the config. ``[]`` writes only the data files.

        Returns
        -------
        Path of the directory.
        """
        out = out if out is not None else self.config.get("out")
        if not out:
            raise BiasampError("out must name an output directory; got None")
        tables = tables or self.config.get("tables", "csv")
        if tables not in _TABLE_FORMATS:
            raise BiasampError(f"tables must be one of {set(_TABLE_FORMATS)}; got {tables!r}")
        formats = list(self.config.get("formats", ["md", "html", "json"]) if formats is None
                       else formats)
        # transitional (split-report): the data files through biasamp.results, then the reports
        from . import results as _results
        res = _results.ProbeResult(**{f.name: getattr(self, f.name)
                                      for f in dataclasses.fields(self)})
        d = res.save(out, tables=tables)
        if formats:
            from .report import render
            render(res, d, formats)
        log.info("wrote results to %s", d)
        return d


# -------------------------------------------------------------------------- running
def _looks_like_path(model: str) -> bool:
    return (model.startswith((".", "/", "~", "\\")) or os.path.isabs(model)
            or model.count("/") > 1 or (len(model) > 1 and model[1] == ":"))


def _check_model(model: str) -> None:
    if not isinstance(model, str) or not model.strip():
        raise BiasampError(f"model must be a model id or a local folder; got {model!r}")
    if os.path.exists(os.path.expanduser(model)):
        if not os.path.isdir(os.path.expanduser(model)):
            raise BiasampError(f"model {model!r} is a file; give the model's folder")
        return
    if _looks_like_path(model):
        raise BiasampError(f"model path {model!r} does not exist")


def _mass_summary(mass: np.ndarray) -> dict:
    m = np.asarray(mass, dtype=np.float64)
    return {"n_prompts": int(m.size), "mean": float(np.mean(m)), "min": float(np.min(m)),
            "median": float(np.median(m)), "max": float(np.max(m))}


def _sha256_frame(df: pd.DataFrame) -> str:
    text = df.to_csv(index=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _score_direction(scorer, prompts: pd.DataFrame, *, scoring: str, blank: str):
    """Score prompts grouped by identical candidate tuples; return (prob, log_prob, mass) rows."""
    n = len(prompts)
    prob: list = [None] * n
    logp: list = [None] * n
    mass = np.empty(n)
    cands = [tuple(c) for c in prompts["candidates"]]
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(cands):
        groups.setdefault(c, []).append(i)
    prompt_texts = prompts["prompt"].astype(str).tolist()
    for cand, rows in groups.items():
        res = scorer.score([prompt_texts[i] for i in rows], list(cand), scoring=scoring,
                           blank=blank)
        for j, i in enumerate(rows):
            prob[i] = np.asarray(res.prob[j], dtype=np.float64)
            logp[i] = np.asarray(res.log_prob[j], dtype=np.float64)
            mass[i] = float(res.mass[j])
    return prob, logp, mass


def _build_tables(prompts_at, prompts_ta, scores_at, scores_ta, tasks, attributes):
    """Arrange scored rows into (n_templates, n_tasks, n_attributes) tables per direction."""
    tpl_ids = list(dict.fromkeys(list(prompts_at["template_id"].astype(str))
                                 + list(prompts_ta["template_id"].astype(str))))
    t_index = {t: i for i, t in enumerate(tasks)}
    a_index = {a: i for i, a in enumerate(attributes)}
    k_index = {t: i for i, t in enumerate(tpl_ids)}
    shape = (len(tpl_ids), len(tasks), len(attributes))
    out = {}
    long_rows = []
    for direction, prompts, (prob, logp, _) in (("attribute_to_task", prompts_at, scores_at),
                                               ("task_to_attribute", prompts_ta, scores_ta)):
        p = np.full(shape, np.nan)
        lp = np.full(shape, np.nan)
        for row, pr, lpr in zip(prompts.itertuples(index=False), prob, logp):
            k = k_index[str(row.template_id)]
            if direction == "attribute_to_task":
                a = a_index[str(row.attribute)]
                p[k, :, a] = pr
                lp[k, :, a] = lpr
            else:
                t = t_index[str(row.task)]
                p[k, t, :] = pr
                lp[k, t, :] = lpr
        if np.isnan(p).any():
            missing = sorted({tpl_ids[k] for k in np.argwhere(np.isnan(p))[:, 0]})
            raise BiasampError(f"templates {missing} do not give prompts for every "
                               f"{'attribute' if direction == 'attribute_to_task' else 'task'} "
                               f"in direction {direction!r}; each template must fill both "
                               "directions")
        out[direction] = (p, lp)
        kk, tt, aa = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), np.arange(shape[2]),
                                 indexing="ij")
        long_rows.append(pd.DataFrame({
            "template_id": np.asarray(tpl_ids, dtype=object)[kk.ravel()],
            "direction": direction,
            "task": np.asarray(tasks, dtype=object)[tt.ravel()],
            "attribute": np.asarray(attributes, dtype=object)[aa.ravel()],
            "prob": p.ravel(), "log_prob": lp.ravel(),
        }))
    return tpl_ids, out, pd.concat(long_rows, ignore_index=True)


def _probe_one(cfg: ProbeConfig, model: str, *, prepared: dict) -> ProbeResult:
    from .scoring import MaskedLMScorer

    _check_model(model)
    try:
        scorer = MaskedLMScorer(model, revision=cfg.revision, device=cfg.device, dtype=cfg.dtype,
                                trust_remote_code=cfg.trust_remote_code,
                                batch_size=cfg.batch_size, cache_dir=cfg.cache_dir,
                                progress=cfg.progress)
    except BiasampError:
        raise
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BiasampError(f"model {model!r} could not be loaded (not a local folder and not "
                           f"available from the hub or cache): {first}") from exc
    tasks, attributes = prepared["tasks"], prepared["attributes"]
    blank = prepared["blank"]
    log.info("scoring %d A->T and %d T->A prompts with %s", len(prepared["at"]),
             len(prepared["ta"]), model)
    s_at = _score_direction(scorer, prepared["at"], scoring=cfg.scoring, blank=blank)
    s_ta = _score_direction(scorer, prepared["ta"], scoring=cfg.scoring, blank=blank)
    tpl_ids, tables, long_tables = _build_tables(prepared["at"], prepared["ta"], s_at, s_ta,
                                                 tasks, attributes)
    ev = evaluate_tables(tables["attribute_to_task"][0], tables["task_to_attribute"][0], tasks,
                         attributes, prepared["sources"], template_ids=tpl_ids,
                         n_resamples=cfg.n_resamples, seed=cfg.seed, confidence=cfg.confidence,
                         compat=cfg.compat)
    all_cands = list(dict.fromkeys(c for cands in list(prepared["at"]["candidates"])
                                   + list(prepared["ta"]["candidates"]) for c in cands))
    audit = scorer.audit(all_cands)
    mass = {"attribute_to_task": _mass_summary(s_at[2]),
            "task_to_attribute": _mass_summary(s_ta[2])}
    versions = {"biasamp": __version__, "numpy": np.__version__, "pandas": pd.__version__,
                "python": platform.python_version()}
    try:
        import torch
        import transformers
        versions.update(torch=torch.__version__, transformers=transformers.__version__)
    except ImportError:  # pragma: no cover - the scorer needs both
        pass
    sprov = dict(getattr(scorer, "provenance", {}) or {})
    versions.update(sprov.pop("versions", {}) or {})
    conf = cfg.to_dict()
    conf["models"] = [model]
    provenance = {
        "model": model, "revision": sprov.get("revision", cfg.revision),
        "device": sprov.get("device", cfg.device), "dtype": sprov.get("dtype", cfg.dtype),
        "seed": cfg.seed, "estimator": cfg.scoring, "compat": cfg.compat,
        "bootstrap": {"n_resamples": cfg.n_resamples, "confidence": cfg.confidence,
                      "method": "percentile bootstrap over templates"},
        "std": "population (ddof=0) over templates",
        "templates": {"name": cfg.templates, "n_templates": len(tpl_ids),
                      "template_ids": tpl_ids, "prompts_sha256": prepared["prompts_sha256"],
                      **prepared.get("template_provenance", {})},
        "tasks": {"name": cfg.tasks, "words": tasks},
        "attributes": attributes,
        "base_rates": ev.base_provenance,
        "scorer": sprov,
        "versions": versions,
        "platform": platform.platform(),
        "note": cfg.note,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    return ProbeResult(summary=ev.summary, by_pair=ev.by_pair, per_template=ev.per_template,
                       tables=long_tables, audit=audit, mass=mass, provenance=provenance,
                       config=conf)


def _prepare(cfg: ProbeConfig) -> dict:
    """Templates, tasks, attributes, prompts and sources (no model needed)."""
    from . import templates as T

    tset = T.load_template_set(cfg.templates)
    vocab = T.load_tasks(cfg.tasks)
    tasks = [str(w) for w in vocab.words]
    if not tasks:
        raise BiasampError(f"tasks vocabulary {cfg.tasks!r} is empty; it must list at least "
                           "one word")
    attributes = [str(a) for a in T.resolve_attributes(",".join(cfg.attributes))]
    if len(attributes) < 2:
        raise BiasampError(f"attributes must name at least two attributes; got {attributes!r}")
    prompts = {}
    for direction, key in (("attribute_to_task", "at"), ("task_to_attribute", "ta")):
        df = T.build_prompts(tset, attributes, tasks, direction=direction)
        if cfg.max_templates is not None:
            keep = list(dict.fromkeys(df["template_id"].astype(str)))[: cfg.max_templates]
            df = df[df["template_id"].astype(str).isin(keep)].reset_index(drop=True)
        if len(df) == 0:
            raise BiasampError(f"template set {cfg.templates!r} gives no prompts for direction "
                               f"{direction!r}")
        prompts[key] = df
    sources = []
    from . import base_rates
    for name in cfg.base_rates:
        src = _NamedSource(name, base_rates.get_source(name))
        # build the tables now so that a task missing from a source fails before scoring
        for direction in DIRECTIONS:
            src.table(tasks, attributes, direction=direction)
        sources.append(src)
    both = pd.concat([prompts["at"], prompts["ta"]], ignore_index=True)
    both = both.assign(candidates=both["candidates"].map(lambda c: "|".join(map(str, c))))
    tprov = {}
    for attr in ("sha256", "path", "provenance"):
        v = getattr(tset, attr, None)
        if v is not None:
            tprov[f"set_{attr}"] = _jsonable(v)
    return {"tasks": tasks, "attributes": attributes, "at": prompts["at"], "ta": prompts["ta"],
            "sources": sources, "blank": getattr(T, "BLANK", "[BLANK]"),
            "prompts_sha256": _sha256_frame(both), "template_provenance": tprov}


class _NamedSource:
    """A source with the name it was requested under (``file:...`` keeps its spelling)."""

    def __init__(self, name, source):
        self.name = name
        self._source = source
        self._cache = {}

    def table(self, tasks, attributes, *, direction=None):
        key = (tuple(tasks), tuple(attributes), direction)
        if key not in self._cache:  # build each table once (and warn about it once)
            self._cache[key] = self._source.table(list(tasks), list(attributes),
                                                  direction=direction)
        return self._cache[key]


def _as_config(config=None, **kwargs) -> ProbeConfig:
    if config is None:
        return ProbeConfig(**kwargs)
    if isinstance(config, ProbeConfig):
        return dataclasses.replace(config, **kwargs) if kwargs else config
    if isinstance(config, (str, os.PathLike)):
        return ProbeConfig.from_file(config, **kwargs)
    if isinstance(config, Mapping):
        return ProbeConfig.from_dict({**config, **kwargs})
    raise BiasampError(f"config must be a ProbeConfig, a mapping or a TOML/YAML path; got "
                       f"{type(config).__name__}")


def probe_many(config=None, /, **kwargs) -> list[ProbeResult]:
    """Probe every model of the config; return one :class:`ProbeResult` per model.

    Parameters are as for :func:`probe`. When ``config.out`` is set and
    ``formats`` is non-empty, each model's results go to ``out/<model_slug>/`` (or to
    ``out`` itself for a single model) and, for several models, a comparison
    (``comparison.md`` / ``.csv``) is written to ``out``.
    """
    cfg = _as_config(config, **kwargs).resolved()
    if not cfg.models:
        raise BiasampError("models must name at least one model id or folder; got []")
    for m in cfg.models:
        _check_model(m)
    prepared = _prepare(cfg)
    results = []
    for model in cfg.models:
        res = _probe_one(cfg, model, prepared=prepared)
        results.append(res)
        if cfg.out:
            d = Path(cfg.out) if len(cfg.models) == 1 else Path(cfg.out) / model_slug(model)
            res.save(d, tables=cfg.tables, formats=cfg.formats)
    if cfg.out and len(cfg.models) > 1:
        from .report import compare_dirs
        compare_dirs([Path(cfg.out) / model_slug(m) for m in cfg.models], out=cfg.out,
                     formats=["md", "csv"] + (["html"] if "html" in cfg.formats else []))
    return results


def probe(config=None, /, **kwargs) -> ProbeResult:
    """Probe one masked language model for directional bias amplification.

    Parameters
    ----------
    config : ProbeConfig, mapping or path to a TOML/YAML file, optional
        The configuration; keyword arguments override its fields (or build one).
    **kwargs
        Fields of :class:`ProbeConfig` (``models=["bert-base-uncased"]``, ``model=`` is
        accepted for a single model).

    Returns
    -------
    ProbeResult
        For several models use :func:`probe_many` (one result per model).

    Examples
    --------
    >>> import biasamp
    >>> biasamp.probe(models=[])
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: models must name exactly one model for probe() (use probe_many for several); got []
    """
    if "model" in kwargs:
        kwargs["models"] = [kwargs.pop("model")]
    cfg = _as_config(config, **kwargs)
    if len(cfg.models) != 1:
        raise BiasampError("models must name exactly one model for probe() (use probe_many for "
                           f"several); got {cfg.models!r}")
    return probe_many(cfg)[0]


class _CallableModule(__import__("types").ModuleType):
    """Importing ``biasamp.probe`` binds the *module* to ``biasamp.probe``; keep it callable.

    ``biasamp.probe(...)`` must call :func:`probe` whether or not this submodule has been
    imported (the import system replaces the package's lazy attribute by the module).
    """

    def __call__(self, config=None, /, **kwargs) -> ProbeResult:
        return probe(config, **kwargs)


__import__("sys").modules[__name__].__class__ = _CallableModule
