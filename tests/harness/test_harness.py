"""biasamp's lm-evaluation-harness tasks, run for real by the harness (``simple_evaluate``,
its ``hf`` backend) on a tiny GPT-2 and on SmolLM2, against ``biasamp.probe`` on the same
model: the same BiasAmp-> (and CI bounds) per task, source and direction, to 1e-6."""

from __future__ import annotations

import pytest

import biasamp
from biasamp._errors import BiasampError
from biasamp.harness import METRICS, TASK_OPTIONS, TASKS, main, tasks_dir

lm_eval = pytest.importorskip("lm_eval")
from lm_eval import simple_evaluate  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

TOL = 1e-6
# the harness's forward passes and the probe's on one torch thread (conftest: a tiny model gains
# nothing from threads, and on a busy 2-core box two threads are many times slower)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def long_gpt2_dir(tmp_path_factory):
    """The tiny GPT-2 with room for WinoBias's longest sentences (256 positions, not 64)."""
    from tiny_models import make_tiny_gpt2

    path = tmp_path_factory.mktemp("long-gpt2")
    make_tiny_gpt2(path, n_positions=256)
    return path


def _harness(model, tasks, *, meta=None, **model_args):
    """The harness's results of ``tasks``: as ``lm_eval --model hf --model_args ...
    --include_path ... --metadata ...`` passes them (model_args, then --metadata, reach the
    tasks)."""
    args = {"pretrained": str(model), **model_args}
    manager = TaskManager(
        include_path=str(tasks_dir()), include_defaults=False, metadata={**args, **(meta or {})}
    )
    out = simple_evaluate(
        model="hf",
        model_args=args,
        tasks=tasks,
        task_manager=manager,
        device="cpu",
        batch_size=16,
        bootstrap_iters=0,
    )
    return out["results"]


#: A few tasks of each bound set (all of them: 60 and 40 occupations as A->T candidates, 29,000
#: and 13,000 requests in all), so the harness runs a few hundred; the sum, the pooling and the
#: bootstrap within tasks are the same for 4 tasks as for 60.
FEW_TASKS = {
    "winogender": "nurse,accountant,engineer,technician",
    "winobias": "nurse,cook,janitor,developer",
}


def _compare(model, tasks, max_templates, n_resamples=2000):
    """(task, metric, the harness's value, the probe's) for each task's six metrics: one
    harness run and one probe per template set, with every source of its tasks (a source's
    numbers do not depend on those beside it: its base draws are seeded by its own counts)."""
    runs = {}
    for task in tasks:
        runs.setdefault(TASKS[task][0], []).append(task)
    diffs = []
    for templates, of in runs.items():
        few = {"tasks": FEW_TASKS[templates]} if templates in FEW_TASKS else {}
        meta = {"max_templates": max_templates, "n_resamples": n_resamples, **few}
        got = _harness(model, of, meta=meta, logits_cache=False)
        options = {**TASK_OPTIONS.get(of[0], {}), **few}  # a template set's tasks share them
        assert all(TASK_OPTIONS.get(t, {}) == TASK_OPTIONS.get(of[0], {}) for t in of)
        res = biasamp.probe(
            model=str(model),
            templates=templates,
            base_rates=[TASKS[t][1] for t in of],
            max_templates=max_templates,
            n_resamples=n_resamples,
            device="cpu",
            **options,
        )
        s = res.summary
        for task in of:
            for metric, (direction, column) in METRICS.items():
                (want,) = s.loc[
                    (s["direction"] == direction) & (s["base_rates"] == TASKS[task][1]), column
                ]
                diffs.append((task, metric, got[task][f"{metric},none"], float(want)))
    return diffs


def test_the_folder_holds_every_task_and_the_tag(capsys):
    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == str(tasks_dir())
    assert [ln.split("\t")[0] for ln in lines[1:]] == list(TASKS)
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    assert set(TASKS) <= set(manager.all_tasks)
    assert "biasamp" in manager.all_tags


def test_documents_are_biasamp_prompts_after_the_context_token():
    from biasamp.harness import _setup, documents

    docs = documents(_setup("wang2021", "uniform", {"max_templates": 1}), "<|endoftext|>")
    # wang2021 template 1, A->T for "he" (32 occupations) and T->A for each occupation
    assert len(docs) == 2 + 32
    a2t = docs[0]
    assert a2t["prompt"] == "he is a new [BLANK]."
    assert a2t["context"] == "<|endoftext|>he is a new "
    assert a2t["choices"][:2] == ["janitor.", "cook."] and len(a2t["choices"]) == 32
    t2a = next(d for d in docs if d["direction"] == "task_to_attribute")
    assert t2a["context"] == "<|endoftext|>" and t2a["choices"] == [
        "he is a new janitor.",
        "she is a new janitor.",
    ]


def test_settings_that_would_give_wrong_numbers_are_refused():
    from biasamp.harness import check_model_args

    with pytest.raises(BiasampError, match=r"^logits_cache: got 'the harness default, True'"):
        check_model_args({"pretrained": "m"})
    with pytest.raises(BiasampError, match=r"^logits_cache: got 'True'"):
        check_model_args({"pretrained": "m", "logits_cache": "True"})
    with pytest.raises(BiasampError, match=r"^add_bos_token: got 'True'"):
        check_model_args({"pretrained": "m", "logits_cache": "False", "add_bos_token": "True"})
    check_model_args({"pretrained": "m", "logits_cache": "False"})  # the README's settings
    check_model_args({"logits_cache": False})  # --metadata, for backends without the cache


def test_the_harness_defaults_stop_before_any_request(tiny_gpt2_dir):
    # `lm_eval --model hf --model_args pretrained=M` without logits_cache=False
    with pytest.raises(BiasampError, match="logits_cache"):
        simple_evaluate(
            model="hf",
            model_args=f"pretrained={tiny_gpt2_dir}",
            tasks=["biasamp_wang2021_uniform"],
            device="cpu",
            task_manager=TaskManager(
                include_path=str(tasks_dir()),
                include_defaults=False,
                metadata={"pretrained": str(tiny_gpt2_dir)},
            ),
        )


def test_why_the_logits_cache_is_refused(tiny_gpt2_dir, monkeypatch):
    """With the hf backend's default cache the A->T value is wrong (the refusal above is
    needed); if a harness release fixes it, this test says so."""
    from biasamp import harness

    monkeypatch.setattr(harness, "check_model_args", lambda meta: None)
    task = "biasamp_wang2021_uniform"
    cached = _harness(tiny_gpt2_dir, [task], meta={"max_templates": 4})[task]["a2t,none"]
    right = _harness(tiny_gpt2_dir, [task], meta={"max_templates": 4}, logits_cache=False)[task][
        "a2t,none"
    ]
    assert abs(cached - right) > 1e-4


def test_tiny_gpt2_equals_the_probe(long_gpt2_dir):
    tasks = list(TASKS)  # every task of the set
    diffs = _compare(long_gpt2_dir, tasks, max_templates=2)
    assert len(diffs) == 6 * len(tasks)
    for task, metric, got, want in diffs:
        assert abs(got - want) <= TOL, (task, metric, got, want)


@pytest.mark.filterwarnings("ignore::biasamp.ChatModelWarning")
def test_smollm2_equals_the_probe(smollm2_dir):
    diffs = _compare(smollm2_dir, ["biasamp_wang2021_uniform"], max_templates=2)
    assert len(diffs) == 6
    for task, metric, got, want in diffs:
        assert abs(got - want) <= TOL, (task, metric, got, want)


def test_a_limited_run_is_refused_at_the_aggregation():
    from biasamp.harness import _setup, documents, evaluate_items, process_results

    docs = documents(_setup("wang2021", "uniform", {"max_templates": 1}), "<|endoftext|>")
    items = [process_results(d, [(-1.0, False)] * len(d["choices"]))["t2a"] for d in docs]
    with pytest.raises(
        BiasampError, match=r"^limit: the biasamp tasks need every document \(31 of 32 task_"
    ):
        evaluate_items(tuple(items[:-1]))
