"""The locked test environment (constraints.txt), the package's own ranges, and the deprecation
policy of the test suite (see conftest.py)."""

from __future__ import annotations

import re
import sys
import types
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements():
    """[(name, lower bound or None, extra or None)] of pyproject.toml."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [(r, None) for r in project["dependencies"]]
    reqs += [(r, extra) for extra, rs in project["optional-dependencies"].items() for r in rs]
    out = []
    for req, extra in reqs:
        spec = req.split(";", 1)[0]
        older = "python_version<'3.11'" in req.replace(" ", "")
        if ";" in req and older and sys.version_info >= (3, 11):
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", spec).group(0)
        low = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", spec)
        out.append((_norm(name), low.group(1) if low else None, extra))
    return out


def _tuple(v):
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])


def test_every_requirement_is_locked_within_its_range(locked_versions):
    reqs = _requirements()
    assert len(reqs) >= 15
    for name, low, extra in reqs:
        assert name in locked_versions, f"{name} ({extra or 'core'}) is not in constraints.txt"
        if low is not None:
            assert _tuple(locked_versions[name]) >= _tuple(low), (name, low)


def test_lock_pins_every_package_exactly(locked_versions):
    text = (ROOT / "constraints.txt").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(lines) == len(locked_versions) >= 50
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", ln) for ln in lines), lines
    assert locked_versions["torch"] == "2.13.0"  # README: the pin that selects the CPU build


def test_installed_versions_are_the_locked_ones(locked_versions, deps_mode):
    if deps_mode == "newest":
        pytest.skip("--deps newest: the forward-compatibility run installs the newest versions")
    wrong = {}
    for name, pinned in locked_versions.items():
        try:
            got = version(name)
        except PackageNotFoundError:
            got = None
        if got is None or got.split("+")[0] != pinned:
            wrong[name] = (pinned, got)
    assert not wrong, f"installed versions differ from constraints.txt (pinned, installed): {wrong}"


# ---------------------------------------------------------------------- deprecation policy
_FAKELIB = """
import warnings

def old_api():
    warnings.warn("old_api is deprecated", FutureWarning, stacklevel=2)
    return 1

def wrapper(func):
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped

@wrapper
def decorated():
    warnings.warn("decorated is deprecated", DeprecationWarning, stacklevel=2)
    return 2

def internal():
    return old_api()  # the library's own use of its deprecated API
"""


@pytest.fixture
def fakelib(tmp_path, monkeypatch):
    """A third-party-looking module outside the repository (its file in tmp_path)."""
    path = tmp_path / "fakelib.py"
    path.write_text(_FAKELIB)
    module = types.ModuleType("fakelib")
    module.__file__ = str(path)
    exec(compile(_FAKELIB, str(path), "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "fakelib", module)
    return module


def test_our_call_of_a_deprecated_api_is_an_error(fakelib):
    with pytest.raises(FutureWarning, match="old_api is deprecated"):
        fakelib.old_api()


def test_a_librarys_own_deprecated_call_only_warns(fakelib):
    with pytest.warns(FutureWarning, match="old_api is deprecated"):
        assert fakelib.internal() == 1


def test_decorator_frames_are_passed_through(fakelib, monkeypatch):
    # a warning attributed to a library's decorator is ours when our code called the decorated
    # function: here the decorator is declared plumbing, as transformers' are
    import conftest

    with pytest.warns(
        DeprecationWarning, match="decorated is deprecated"
    ):  # not plumbing: attributed to fakelib itself
        fakelib.decorated()
    monkeypatch.setattr(conftest, "_PLUMBING", conftest._PLUMBING + ("fakelib",))
    with pytest.raises(DeprecationWarning, match="decorated is deprecated"):
        fakelib.decorated()


def test_transformers_deprecated_cache_keyword_would_fail_the_suite(tiny_gpt2_dir):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    from biasamp.scoring._causal import cache_keyword

    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir).eval()
    ids = torch.tensor([[1, 2, 3]])
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True)
        cache = out["cache"] if "cache" in out else out.past_key_values  # noqa: SIM401 - lazy default
        key = cache_keyword(model)
        model(input_ids=torch.tensor([[4]]), **{key: cache})  # the keyword biasamp uses: silent
        if key == "cache":  # transformers renamed it: the old name is deprecated, and an error here
            with pytest.raises(FutureWarning, match="past_key_values"):
                model(input_ids=torch.tensor([[4]]), past_key_values=cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache_keyword(model) in ("cache", "past_key_values")


def test_ci_runs_the_readmes_test_command_with_the_lock():
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("Run the tests:") :].split("```bash\n", 1)[1].split("\n```")[0]
    ci = block.strip()  # a line of .ci/run (the site's strict build follows it there)
    assert ci in (ROOT / ".ci" / "run").read_text().splitlines()
    assert '-c constraints.txt "torch==2.13.0"' in ci and ci.endswith("python -m pytest -q")
    main_job = readme[readme.index("## Set-up") :].split("```bash\n", 1)[1].split("\n```")[0]
    assert main_job.startswith(
        "python3 -m venv .venv && . .venv/bin/activate && pip install "
        '-c constraints.txt "torch==2.13.0" ".[gguf]" && python '
        "scripts/fetch_models.py smollm2-135m-instruct && biasamp probe"
    )
