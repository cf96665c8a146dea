"""The one bootstrap behind every CI of a probe: templates (or bound (template, task) rows),
tasks and base-rate counts, drawn jointly and evaluated with
:func:`biasamp.metrics.directional_table_core`, vectorised over replicates (docs/probing.md).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from .._conventions import CONFIDENCE, N_RESAMPLES, TASK_TO_ATTRIBUTE, TIE_TOL
from .._errors import FewResamplesWarning
from .._schema import BootstrapInfo
from ..metrics import directional_table_core as table_core
from ..metrics import resample_indices

#: Fewer distinct resamples of the units than this: the CIs are warned of as rough.
FEW_RESAMPLES = 20
#: What a bootstrap replicate resamples besides the base counts.
RESAMPLE_UNITS = ("templates", "tasks", "both")
#: Whether count-based base rates are resampled (their sampling error enters the CIs).
BASE_UNCERTAINTY = ("resample", "none")

_UNITS_TEXT = {
    "templates": "templates",
    "tasks": "tasks (occupations)",
    "both": "templates and tasks (two-way)",
}


@dataclass
class Units:
    """What the template bootstrap draws in one direction: the units' rows of the model's
    table ``X`` (U, T, A), the task ``rows`` (U, T) each covers, their strata, their template."""

    X: np.ndarray
    rows: np.ndarray
    strata: list | None
    template: np.ndarray

    def subset(self, keep: np.ndarray) -> Units:
        """The units whose mask is True (e.g. the templates of one group)."""
        strata = None if self.strata is None else [s for s, k in zip(self.strata, keep) if k]
        return Units(self.X[keep], self.rows[keep], strata, self.template[keep])


def unit_draws(units: Units, *, n_resamples: int, seed: int) -> np.ndarray:
    """How often each unit is drawn in each replicate (R, U), as ``bootstrap_ci`` draws."""
    u = units.X.shape[0]
    draws = resample_indices(u, n_resamples=n_resamples, seed=seed, strata=units.strata)
    return np.concatenate([_draw_counts(idx, u) for idx in draws])


def task_draws(n_tasks: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """How often each task is drawn in each replicate (R, T); stream ``(seed, 1)``."""
    idx = np.random.default_rng([seed, 1]).integers(0, n_tasks, size=(n_resamples, n_tasks))
    return _draw_counts(idx, n_tasks)


def _draw_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each row of ``idx`` (R, k): (R, n)."""
    r = idx.shape[0]
    flat = (idx + (np.arange(r) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=r * n).reshape(r, n).astype(np.float64)


def mean_tables(units: Units, weights: np.ndarray | None) -> np.ndarray:
    """Each replicate's model table (R, T, A): per task row the ``weights``-weighted mean of
    the units covering it (None: every unit once, R = 1); NaN where no drawn unit covers it."""
    u, t, a = units.X.shape
    w = np.ones((1, u)) if weights is None else weights
    num = (w @ units.X.reshape(u, -1)).reshape(-1, t, a)
    den = w @ units.rows.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den[:, :, None]


def source_stream(counts: np.ndarray) -> int:
    """The random stream of a count table's resamples, from its shape and float64 bytes: the
    same table draws the same resamples in every run and comparison, whatever its name."""
    c = np.ascontiguousarray(counts, dtype=np.float64)
    digest = hashlib.sha256(repr(c.shape).encode("ascii") + c.tobytes()).hexdigest()
    return int(digest[:8], 16)


def resample_counts(counts: np.ndarray, *, n_resamples: int, seed: int, stream: int) -> np.ndarray:
    """Multinomial resamples of a count table's sentences; seeded by ``(seed, 2, stream)``."""
    c = np.asarray(counts, dtype=np.float64)
    n = int(round(c.sum()))
    rng = np.random.default_rng([seed, 2, stream])
    if n == 0:
        return np.zeros((n_resamples, *c.shape))
    draws = rng.multinomial(n, c.ravel() / c.sum(), size=n_resamples)
    return draws.reshape(n_resamples, *c.shape).astype(np.float64)


def replicates(
    mbar: np.ndarray,
    joint: np.ndarray,
    *,
    direction: str,
    metric: dict,
    base_draws: np.ndarray | None = None,
    to_joint=None,
    cells: np.ndarray | None = None,
    task_weights: np.ndarray | None = None,
) -> dict:
    """BiasAmp-> of every replicate (``value``; ``delta``, ``contribution``, ``y`` per cell) of
    the model's tables ``mbar`` (R, T, A) against ``joint``, or against ``to_joint`` of the
    resampled counts ``base_draws``; ``task_weights`` (R, T): the tasks' draw counts."""
    base = joint if base_draws is None else to_joint(base_draws)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        core = table_core(
            mbar,
            base,
            direction=direction,
            y=metric.get("association"),
            tie_tol=metric.get("tie_tol", TIE_TOL),
            undefined=metric.get("undefined") or "skip",
            cells=cells,
        )
    contribution = core["contribution"]
    defined = ~np.isnan(contribution)
    c0 = np.where(defined, contribution, 0.0)
    w = np.ones(contribution.shape[:2]) if task_weights is None else task_weights
    num, den = (c0 * w[:, :, None]).sum(axis=(1, 2)), (defined * w[:, :, None]).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
    shape = contribution.shape
    return {
        "value": value,
        "delta": np.broadcast_to(core["delta"], shape),
        "contribution": contribution,
        "y": np.broadcast_to(core["y"], shape),
    }


def bootstrap_bytes(
    n_resamples: int, *, n_units: int, n_tasks: int, n_attributes: int, n_resampled: int
) -> int:
    """An upper estimate of the bootstrap's peak memory in bytes (checked against tracemalloc
    in the tests): per replicate and cell 8 float64 arrays, 6 more while counts are resampled
    and 2 per resampled table kept for the sign agreement; per replicate 3 per unit, 1 per task.

    >>> bootstrap_bytes(10_000, n_units=20, n_tasks=32, n_attributes=2, n_resampled=0)
    48320000
    """
    arrays = 8 + (6 + 2 * n_resampled if n_resampled else 0)
    return 8 * n_resamples * (n_tasks * n_attributes * arrays + 3 * n_units + n_tasks)


def interval(replicates_: np.ndarray, confidence: float, point):
    """Percentile interval over the first axis (NaN ignored); the point itself where every
    replicate equals it up to rounding (so rounding never puts it outside its interval)."""
    q = [100.0 * (1.0 - confidence) / 2.0, 100.0 * (1.0 + confidence) / 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(replicates_, q, axis=0)
        spread = np.nanmax(replicates_, axis=0) - np.nanmin(replicates_, axis=0)
    point = np.asarray(point, dtype=np.float64)
    tight = np.isfinite(point) & (spread <= 1e-12 * np.maximum(1.0, np.abs(point)))
    lo, hi = np.where(tight, point, lo), np.where(tight, point, hi)
    return (float(lo), float(hi)) if np.ndim(lo) == 0 else (lo, hi)


def sign_support(y_rep: np.ndarray, y_point: np.ndarray, defined_rep: np.ndarray) -> np.ndarray:
    """Per cell: the share of replicates, the cell defined, whose sign is the point's."""
    return ((y_rep == y_point[None]) & defined_rep).mean(axis=0)


@dataclass(frozen=True)
class Resampling:
    """The bootstrap settings of a run, named as in :class:`~biasamp._schema.BootstrapInfo`."""

    resample: str = "templates"  # templates | tasks | both: the units a replicate draws
    base_uncertainty: str = "resample"  # resample | none
    n_resamples: int = N_RESAMPLES
    seed: int = 0
    confidence: float = CONFIDENCE
    min_base_count: int | None = None

    @classmethod
    def of(cls, s, **given) -> Resampling:
        """The settings of a ``ProbeConfig`` or a ``BootstrapInfo``, ``given`` on top."""
        return cls(**{f: getattr(s, f) for f in cls.__dataclass_fields__} | given)

    def provenance(self, *, bound: bool) -> BootstrapInfo:
        """The settings and a one-line description of the bootstrap."""
        method = f"percentile bootstrap over {_UNITS_TEXT[self.resample]}"
        if bound and self.resample != "tasks":
            method += ", stratified by task (templates bound to their own tasks)"
        if self.base_uncertainty == "resample":
            method += (
                "; count-based base rates resampled jointly (multinomial over their "
                "counted sentences)"
            )
        return BootstrapInfo(**asdict(self), method=method)

    def warn_if_few(self, n_templates: int, n_tasks: int) -> None:
        """Warn once when the units have fewer than :data:`FEW_RESAMPLES` distinct resamples
        (``C(2n-1, n)`` for ``n`` units: 3 for 2, 10 for 3)."""
        n = {"templates": n_templates, "tasks": n_tasks}
        kinds = ("templates", "tasks") if self.resample == "both" else (self.resample,)
        distinct = math.prod(math.comb(2 * n[k] - 1, n[k]) for k in kinds)
        if 1 < distinct < FEW_RESAMPLES:
            what = " and ".join(f"{n[k]} {k}" for k in kinds)
            warnings.warn(
                FewResamplesWarning(
                    f"the bootstrap resamples {what}, which have only {distinct} distinct "
                    f"resamples: its {self.confidence:.0%} CIs rest on a handful of values "
                    "(rough); more templates or tasks narrow them honestly"
                ),
                stacklevel=4,
            )

    def task_weights(self, n_tasks: int):
        if self.resample in ("tasks", "both"):
            return task_draws(n_tasks, n_resamples=self.n_resamples, seed=self.seed)
        return None

    def model_tables(self, units: Units) -> np.ndarray:
        """The model's table of every replicate, (R, T, A)."""
        if self.resample in ("templates", "both"):
            return mean_tables(
                units, unit_draws(units, n_resamples=self.n_resamples, seed=self.seed)
            )
        point = mean_tables(units, None)
        return np.broadcast_to(point, (self.n_resamples, *point.shape[1:]))

    def base_draws(self, counts: np.ndarray | None):
        """The resampled base counts of a source (None when its table is fixed)."""
        if self.base_uncertainty != "resample" or counts is None:
            return None
        return resample_counts(
            counts, n_resamples=self.n_resamples, seed=self.seed, stream=source_stream(counts)
        )


def pooled_units(tables: np.ndarray, cover: np.ndarray | None, strata_at, direction: str) -> Units:
    """The units of one direction: the templates, or for T->A of a bound set each (template,
    task) row, drawn within its task."""
    n_tpl, n_t, _ = tables.shape
    if cover is not None and direction == TASK_TO_ATTRIBUTE:
        kk, tt = np.nonzero(cover)
        rows = np.eye(n_t, dtype=bool)[tt]  # each unit's one task row
        X = np.where(rows[:, :, None], tables[kk], 0.0)
        return Units(X, rows, [int(t) for t in tt], kk)
    strata = None if cover is None else list(strata_at)
    return Units(tables, np.ones((n_tpl, n_t), dtype=bool), strata, np.arange(n_tpl))
