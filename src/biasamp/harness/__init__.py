"""BiasAmp-> inside EleutherAI's lm-evaluation-harness (``pip install "biasamp[harness]"``).

The folder :func:`tasks_dir` holds one harness task per (template set, base-rate source)
(:data:`TASKS`), tagged ``biasamp``; the harness finds them with
``lm_eval --include_path "$(python -m biasamp.harness)"``. The harness scores each candidate
fill as a ``loglikelihood`` request; the tasks' aggregation computes BiasAmp-> with biasamp's own
pipeline (:func:`biasamp.pipeline.evaluate_scores`). Importing this package imports neither the
harness nor torch; the task files call :mod:`._task` only when the harness loads them.
"""

from __future__ import annotations

from pathlib import Path

from ._task import METRICS, TASKS

__all__ = ["METRICS", "TASKS", "main", "tasks_dir"]


def tasks_dir() -> Path:
    """The folder to give ``lm_eval --include_path``."""
    return Path(__file__).resolve().parent / "tasks"


def main(argv=None) -> int:
    """``python -m biasamp.harness``: print the task folder (``--list``: the tasks too)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m biasamp.harness",
        description="Print the folder of biasamp's lm-evaluation-harness tasks "
                    "(for lm_eval --include_path).")
    parser.add_argument("--list", action="store_true",
                        help="also list the tasks: name, template set, base-rate source")
    args = parser.parse_args(argv)
    print(tasks_dir())
    if args.list:
        for name, (templates, source) in TASKS.items():
            print(f"{name}\t{templates}\t{source}")
    return 0
