"""Loading models (issue 10, "Models"): untrained heads refused, tokenizer-less folders, the
model type from config.json, weight hashes and hub commits in the provenance, and the hub
unreachable / not found / offline, all offline (a closed local port, a local HTTP server that
answers 404, a hub cache laid out by hand)."""

from __future__ import annotations

import hashlib
import http.server
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tiny_models as tm  # noqa: E402
from biasamp import BiasampError  # noqa: E402
from biasamp._errors import MissingWeightsWarning  # noqa: E402
from biasamp.scoring import CausalLMScorer, MaskedLMScorer, detect_model_type, resolve_model  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
COMMIT = "0123456789abcdef0123456789abcdef01234567"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def headless_bert(tmp_path_factory, tiny_bert_dir):
    """A sentence-transformers style folder: BertModel weights (no MLM head) + tokenizer."""
    d = tmp_path_factory.mktemp("headless") / "bert-body"
    body = transformers.BertModel.from_pretrained(tiny_bert_dir, add_pooling_layer=False)
    body.save_pretrained(d)
    transformers.AutoTokenizer.from_pretrained(tiny_bert_dir).save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def headless_llama(tmp_path_factory):
    return tm.make_tiny_llama(tmp_path_factory.mktemp("headless") / "llama-body", head=False)


# ----------------------------------------------------------------------------- missing weights
def test_checkpoint_without_mlm_head_is_refused_naming_the_weights(headless_bert):
    with pytest.raises(BiasampError) as err:
        MaskedLMScorer(headless_bert, device="cpu")
    msg = str(err.value)
    assert "the checkpoint has no weights for cls.predictions." in msg
    assert "of BertForMaskedLM" in msg and "--allow-missing-weights" in msg
    assert "\n" not in msg


def test_allow_missing_weights_loads_warns_and_records(headless_bert):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = MaskedLMScorer(headless_bert, device="cpu", allow_missing_weights=True)
    assert [w.category for w in caught] == [MissingWeightsWarning]
    missing = s.provenance["missing_weights"]
    assert missing == sorted(missing) and missing
    assert all(k.startswith("cls.predictions.") for k in missing)
    assert s.score(["he is a [BLANK]."], ["nurse", "cook"]).prob.shape == (1, 2)


def test_causal_checkpoint_without_lm_head_is_refused(headless_llama):
    with pytest.raises(BiasampError, match=r"no weights for lm_head.weight of LlamaForCausalLM"):
        CausalLMScorer(headless_llama, device="cpu")
    r = resolve_model(headless_llama)
    assert (r.model_type, r.evidence) == ("causal", "config.json model_type 'llama'")
    with pytest.warns(MissingWeightsWarning, match=r"1 weight\(s\) missing .*lm_head.weight"):
        s = CausalLMScorer(headless_llama, device="cpu", allow_missing_weights=True)
    assert s.provenance["missing_weights"] == ["lm_head.weight"]


def test_gpt2_body_checkpoint_is_complete_because_its_head_is_tied(tmp_path, tiny_gpt2_dir):
    d = tmp_path / "gpt2-body"
    transformers.GPT2Model.from_pretrained(tiny_gpt2_dir).save_pretrained(d)
    transformers.AutoTokenizer.from_pretrained(tiny_gpt2_dir).save_pretrained(d)
    s = CausalLMScorer(d, device="cpu")  # lm_head.weight is the token embedding: nothing missing
    assert s.missing_weights == [] and "missing_weights" not in s.provenance
    ref = CausalLMScorer(tiny_gpt2_dir, device="cpu")
    assert (
        s.score(["he is a [BLANK]."], ["nurse", "cook"]).log_prob.tolist()
        == ref.score(["he is a [BLANK]."], ["nurse", "cook"]).log_prob.tolist()
    )


def test_folder_with_weights_but_no_tokenizer(tmp_path, tiny_bert_dir):
    d = tmp_path / "weights-only"
    d.mkdir()
    for name in ("config.json", "model.safetensors"):
        (d / name).write_bytes((tiny_bert_dir / name).read_bytes())
    with pytest.raises(BiasampError, match=rf"no tokenizer files in {d}"):
        MaskedLMScorer(d, device="cpu")


# ------------------------------------------------------- tokenizer and model do not match
def _copy_model(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_tokenizer_without_a_mask_token_is_refused_before_the_weights_load(
    tmp_path, tiny_bert_dir, monkeypatch, capsys
):
    import json

    import biasamp.scoring._base as base
    from biasamp.cli import main

    d = _copy_model(tiny_bert_dir, tmp_path / "no-mask")
    conf = json.loads((d / "tokenizer_config.json").read_text())
    (d / "tokenizer_config.json").write_text(json.dumps({**conf, "mask_token": None}))

    def no_load(*args, **kwargs):
        raise AssertionError("the weights were loaded")

    monkeypatch.setattr(base, "load_model", no_load)
    with pytest.raises(
        BiasampError,
        match=r"^model '.*no-mask': its tokenizer has no mask "
        r"token; a masked language model is needed$",
    ):
        MaskedLMScorer(d, device="cpu")
    assert (
        main(["probe", "--model", str(d), "--out", str(tmp_path / "o"), "--max-templates", "2"])
        == 2
    )
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"error: model {str(d)!r}: its tokenizer has no mask token; a "
        "masked language model is needed"
    ]


def test_tokenizer_with_ids_beyond_the_embeddings_is_refused_at_load(
    tmp_path, tiny_bert_dir, capsys
):
    import json

    from safetensors.torch import load_file, save_file

    from biasamp.cli import main

    d = _copy_model(tiny_bert_dir, tmp_path / "small-vocab")
    weights = load_file(d / "model.safetensors")
    rows = weights["bert.embeddings.word_embeddings.weight"].shape[0]
    keep = rows - 40  # the tokenizer's last 40 ids have no embedding row
    save_file(
        {
            k: (v[:keep].clone() if v.shape and v.shape[0] == rows else v)
            for k, v in weights.items()
        },
        d / "model.safetensors",
        metadata={"format": "pt"},
    )
    conf = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**conf, "vocab_size": keep}))
    vocab = (d / "vocab.txt").read_text().splitlines()
    message = (
        f"model {str(d)!r}: its tokenizer has ids up to {rows - 1} ({vocab[-1]!r}; 40 of "
        f"its {rows} tokens are beyond the model's {keep} embedding rows): the tokenizer "
        "does not belong to this model, or tokens were added without resizing its "
        "embeddings"
    )
    with pytest.raises(BiasampError, match=rf"^{re.escape(message)}$"):
        MaskedLMScorer(d, device="cpu")
    assert (
        main(["probe", "--model", str(d), "--out", str(tmp_path / "o"), "--max-templates", "2"])
        == 2
    )
    err = capsys.readouterr().err  # after the weight-loading bar
    assert [x for x in err.splitlines() if x.startswith("error")] == [f"error: {message}"]
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- model type
def test_detect_model_type_from_config(
    tiny_bert_dir,
    tiny_roberta_dir,
    tiny_gpt2_dir,
    tiny_llama_dir,
    tiny_qwen2_chat_dir,
    headless_bert,
):
    assert detect_model_type(tiny_bert_dir)[0] == "masked"
    assert detect_model_type(tiny_roberta_dir)[0] == "masked"
    assert detect_model_type(headless_bert) == ("masked", "config.json model_type 'bert'")
    for d in (tiny_gpt2_dir, tiny_llama_dir, tiny_qwen2_chat_dir):
        kind, why = detect_model_type(d)
        assert kind == "causal" and why.startswith("config.json architectures")


def test_unknown_kind_needs_model_type(tmp_path, tiny_gpt2_dir):
    d = tmp_path / "odd"
    d.mkdir()
    (d / "config.json").write_text(
        '{"model_type": "gpt2", "architectures": ["GPT2Model"], "n_layer": 1}'
    )
    assert detect_model_type(d)[0] == "causal"  # gpt2 has only a causal-LM class
    (d / "config.json").write_text('{"model_type": "clip_text_model"}')
    with pytest.raises(
        BiasampError,
        match=r"cannot tell from its config.json .* whether it is a "
        r"masked or a causal language model; give model_type",
    ):
        detect_model_type(d)
    r = resolve_model(d, "causal")
    assert (r.model_type, r.evidence) == ("causal", "given")


# ----------------------------------------------------------------------------- provenance
def test_weights_sha256_of_a_local_folder(tiny_bert_dir):
    s = MaskedLMScorer(tiny_bert_dir, device="cpu")
    want = hashlib.sha256((tiny_bert_dir / "model.safetensors").read_bytes()).hexdigest()
    assert s.provenance["weights_sha256"] == {"model.safetensors": want}
    assert s.provenance["commit"] is None and s.provenance["model_type"] == "masked"


def test_offline_hub_model_from_a_filled_cache_records_commit_and_blob_hashes(
    tmp_path, tiny_gpt2_dir, monkeypatch
):
    from huggingface_hub import constants

    cache = tmp_path / "hf"
    tm.fill_hub_cache(tiny_gpt2_dir, cache, "org/tiny-gpt2", COMMIT)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    s = CausalLMScorer("org/tiny-gpt2", device="cpu", hf_cache_dir=cache)
    p = s.provenance
    assert p["commit"] == COMMIT and p["model"] == "org/tiny-gpt2"
    want = hashlib.sha256((tiny_gpt2_dir / "model.safetensors").read_bytes()).hexdigest()
    assert p["weights_sha256"] == {"model.safetensors": want}
    with pytest.raises(
        BiasampError,
        match=r"model 'org/other' is not in the Hugging Face cache "
        r"and HF_HUB_OFFLINE=1 forbids downloading it",
    ):
        CausalLMScorer("org/other", device="cpu", hf_cache_dir=cache)


# ----------------------------------------------------------------------------- the hub, offline
def _run_cli(args, env_extra, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(PYTHONPATH=SRC + os.pathsep + env.get("PYTHONPATH", ""), **env_extra)
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "biasamp", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc, time.monotonic() - t0


def test_hub_unreachable_is_one_attempt_and_one_line(tmp_path):
    proc, took = _run_cli(
        [
            "-q",
            "score",
            "--model",
            "bert-base-uncased",
            "--prompt",
            "[BLANK].",
            "--candidates",
            "he,she",
        ],
        {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "h")},
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: the Hugging Face hub is unreachable (http://127.0.0.1:9")
    assert "local model folder" in proc.stderr and "HF_HUB_OFFLINE=1" in proc.stderr
    assert took < 30  # transformers alone retries for about 50 s


class _NotFound(http.server.BaseHTTPRequestHandler):
    paths: list = []

    def do_HEAD(self):
        type(self).paths.append(self.path)
        self.send_response(404)
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("X-Error-Message", "Repository not found")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD

    def log_message(self, *args):
        pass


def test_hub_not_found_is_told_apart_from_unreachable(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proc, _ = _run_cli(
            [
                "probe",
                "--model",
                "org/no-such-model",
                "--out",
                str(tmp_path / "o"),
                "--base-rates",
                "uniform",
            ],
            {
                "HF_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
                "HF_HOME": str(tmp_path / "h"),
            },
        )
    finally:
        server.shutdown()
        thread.join(timeout=10)
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "error: model 'org/no-such-model' was not found on the Hugging Face hub (HTTP 404"
    )
    assert "unreachable" not in proc.stderr
    # one attempt (huggingface_hub itself may also ask an /api/ route once)
    assert [p for p in _NotFound.paths if "/resolve/" in p] == [
        "/org/no-such-model/resolve/main/config.json"
    ]
    assert not (tmp_path / "o").exists()


def test_hub_unreachable_with_a_filled_cache_loads_it_with_one_warning(tmp_path, tiny_gpt2_dir):
    tm.fill_hub_cache(tiny_gpt2_dir, tmp_path / "h" / "hub", "org/tiny-gpt2", COMMIT)
    proc, _ = _run_cli(
        [
            "score",
            "--model",
            "org/tiny-gpt2",
            "--prompt",
            "he is a [BLANK].",
            "--candidates",
            "nurse,cook",
            "--device",
            "cpu",
        ],
        {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "h")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "(causal LM)  scoring continuation" in proc.stdout
    warn = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and "hub is unreachable" in warn[0] and "cached copy" in warn[0]
    assert COMMIT[:12] in warn[0]


def test_the_model_types_a_probe_accepts_are_the_scorers_registered():
    """``--model-type`` offers ``_conventions.MODEL_TYPES``; each but ``auto`` must be a kind
    of scorer ``load_scorer`` can build (``SCORERS``), so the two lists cannot drift apart."""
    from biasamp._conventions import MODEL_TYPES as CHOICES
    from biasamp.scoring import MODEL_TYPES, SCORERS

    assert ("auto", *MODEL_TYPES) == CHOICES and list(MODEL_TYPES) == SCORERS.names()
