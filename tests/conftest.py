"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """Run a module's tiny models on one torch thread, then restore the previous count.

    Tiny models gain nothing from threads; on a busy 2-core box two threads are 20x slower.
    """
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class _GoldenSource:
    """A base-rate source with one fixed joint table, the same for both directions."""

    class _Table:
        def __init__(self, joint):
            self.joint, self.association, self.tie_tol, self.direction = joint, None, None, None
            self.provenance = {"name": "test", "sha256": "0" * 64}

    def __init__(self, name, joint):
        self.name, self._joint = name, joint

    def table(self, tasks, attributes, *, direction=None):
        import numpy as np
        import pandas as pd
        return self._Table(pd.DataFrame(np.asarray(self._joint, dtype=float), index=tasks,
                                        columns=attributes))


@pytest.fixture(scope="session")
def golden_result():
    """The golden :class:`biasamp.results.ProbeResult` (2 templates, 4 tasks, he/she, one
    source "golden"): A->T per template [-9/520, 0], T->A [1/80, 0]. Shared: do not mutate
    (use ``dataclasses.replace``)."""
    import numpy as np
    import pandas as pd

    from biasamp.probe import ProbeConfig, evaluate_tables
    from biasamp.results import ProbeResult

    tasks, attrs = ["t1", "t2", "t3", "t4"], ["he", "she"]
    base = np.array([[30, 10], [10, 30], [20, 20], [5, 15]], dtype=float)
    m_at = np.array([[.5, .2], [.1, .4], [.3, .3], [.1, .1]])
    m_ta = np.array([[.8, .2], [.3, .7], [.5, .5], [.2, .8]])
    # template a: the golden model; template b: the base's own conditionals (BiasAmp-> = 0)
    at = np.stack([m_at, base / base.sum(axis=0)])
    ta = np.stack([m_ta, base / base.sum(axis=1, keepdims=True)])
    ev = evaluate_tables(at, ta, tasks, attrs, [_GoldenSource("golden", base)],
                         template_ids=["a", "b"], n_resamples=100)
    tables = pd.DataFrame({"template_id": ["a"], "direction": ["attribute_to_task"],
                           "task": ["t1"], "attribute": ["he"], "prob": [0.5],
                           "log_prob": [np.log(0.5)]})
    audit = pd.DataFrame({"candidate": ["he", "janitor"], "pieces": [["he"], ["jan", "##itor"]],
                          "n_pieces": [1, 2], "single_piece": [True, False],
                          "first_piece": ["he", "jan"], "shares_first_piece_with": [[], []]})
    prov = {"model": "golden-model", "revision": None, "device": "cpu", "dtype": "float32",
            "seed": 0, "estimator": "word", "templates": {"name": "x", "n_templates": 2},
            "tasks": {"name": "t"}, "attributes": attrs, "base_rates": ev.base_provenance,
            "versions": {"biasamp": "0.1.0"}, "timestamp": "2026-01-01T00:00:00+00:00",
            "bootstrap": {"confidence": 0.95}}
    mass = {"attribute_to_task": {"n_prompts": 2, "mean": 0.1, "min": 0.05, "median": 0.1,
                                  "max": 0.15}}
    return ProbeResult(summary=ev.summary, by_pair=ev.by_pair, per_template=ev.per_template,
                       tables=tables, audit=audit, mass=mass, provenance=prov,
                       config=ProbeConfig(models=["golden-model"]).to_dict())
