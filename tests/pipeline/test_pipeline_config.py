"""Tests of biasamp.pipeline.config (ProbeConfig, compat modes) and probe() argument errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from biasamp import BiasampError
from biasamp._conventions import canonical_direction
from biasamp.pipeline import ProbeConfig, probe, probe_many
from biasamp.pipeline.run import model_slug


# ------------------------------------------------------------------------------ config
def test_config_from_toml_and_yaml(tmp_path):
    (tmp_path / "p.toml").write_text(
        '[probe]\nmodels = ["a", "b"]\nbase-rates = "uniform,labor-2016"\nseed = 3\n'
        'attributes = ["he", "she", "they"]\n'
    )
    cfg = ProbeConfig.from_file(tmp_path / "p.toml", seed=9, out=None)
    assert cfg.models == ["a", "b"]
    assert cfg.base_rates == ["uniform", "labor-2016"]
    assert cfg.seed == 9  # override wins; None overrides are ignored
    assert cfg.attributes == ["he", "she", "they"]
    (tmp_path / "p.yaml").write_text("model: x\nn_resamples: 50\nformats: [md]\n")
    cfg = ProbeConfig.from_file(tmp_path / "p.yaml")
    assert (cfg.models, cfg.n_resamples, cfg.formats) == (["x"], 50, ["md"])


def test_example_config_loads():
    cfg = ProbeConfig.from_file(Path(__file__).parents[2] / "examples" / "probe.toml")
    assert cfg.models and cfg.out


@pytest.mark.parametrize(
    "text, suffix, match",
    [
        (
            "modles = ['a']\n",
            ".toml",
            r"unknown config option 'modles' \(did you mean 'models'\?\)",
        ),
        ("models = [\n", ".toml", r"is not valid toml"),
        ("models: [a\n", ".yaml", r"is not valid yaml"),
        ("models = 'a'", ".ini", r"config file must end in .toml, .yaml or .yml"),
        ("- a\n- b\n", ".yaml", r"config must be a mapping"),
    ],
)
def test_config_file_errors(tmp_path, text, suffix, match):
    f = tmp_path / f"c{suffix}"
    f.write_text(text)
    with pytest.raises(BiasampError, match=match):
        ProbeConfig.from_file(f)


def test_config_missing_file(tmp_path):
    with pytest.raises(BiasampError, match=r"config file '.*nope.toml' does not exist"):
        ProbeConfig.from_file(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"compat": "wang"}, r"compat must be one of 'wang2021'; got 'wang' \(did you mean"),
        ({"batch_size": 0}, r"batch_size must be a positive integer; got 0"),
        ({"n_resamples": 2.5}, r"n_resamples must be a positive integer; got 2.5"),
        ({"max_templates": 0}, r"max_templates must be a positive integer; got 0"),
        ({"seed": "x"}, r"seed must be a non-negative integer; got 'x'"),
        ({"seed": -1}, r"seed must be a non-negative integer; got -1"),
        ({"confidence": 1.5}, r"confidence must be a number in \(0, 1\); got 1.5"),
        ({"tables": "xlsx"}, r"tables must be one of 'csv', 'parquet'; got 'xlsx'"),
        (
            {"scoring": "first_piece"},
            r"scoring must be one of 'word', .*; got 'first_piece' \(did you mean 'first-piece'",
        ),
        (
            {"formats": "md,htm"},
            r"formats must be some of 'md', .*; got 'htm' \(did you mean 'html'",
        ),
        ({"base_rates": ""}, r"base_rates must name at least one base-rate source; got ''"),
        ({"attributes": []}, r"attributes must name at least 2 attributes; got \[\]"),
        ({"attributes": "he,he"}, r"attributes must not repeat an attribute; got 'he,he'"),
        (
            {"attributes": "he,,she"},
            r"^attributes must not hold an empty attribute; got 'he,,she' \(name 2 is empty\)$",
        ),
        (
            {"attributes": ["he", " ", "she"]},
            r"^attributes must not hold an empty attribute; got \['he', ' ', 'she'\] \(name 2 is "
            r"empty\)$",
        ),
        ({"base_rates": ",uniform"}, r"base_rates must not hold an empty base-rate source; got"),
        ({"tasks": ["nurse"]}, r"^tasks must name at least 2 tasks; got \['nurse'\]$"),
        (
            {"models": [1]},
            r"models must be a list of strings or a comma-separated string; got \[1\]",
        ),
        (
            {"dtype": "fp128"},
            r"dtype must be one of 'float32', 'bfloat16', 'float16', 'float64'; got 'fp128'",
        ),
        ({"trust_remote_code": "yes"}, r"trust_remote_code must be True or False; got 'yes'"),
    ],
)
def test_config_validation(kwargs, match):
    with pytest.raises(BiasampError, match=match):
        ProbeConfig(models=["m"], **kwargs) if "models" not in kwargs else ProbeConfig(**kwargs)


def test_a_refused_value_is_named_as_it_was_given(tmp_path):
    from biasamp.cli import build_parser

    with pytest.raises(
        BiasampError,
        match=r"^unknown config option 'modles' \(did you mean "
        r"'models'\?\); allowed: models, model_type, ",
    ):
        ProbeConfig(modles=["m"])  # a keyword in Python
    conf = tmp_path / "p.toml"
    conf.write_text('models = ["m"]\nn-resamples = 0\n', encoding="utf-8")
    with pytest.raises(BiasampError, match=r"^n-resamples must be a positive integer; got 0$"):
        ProbeConfig.from_file(conf)  # the key as the file spells it
    conf.write_text('models = ["m"]\nn-resamples = 50\n', encoding="utf-8")
    for argv, message in (
        (["--n-resamples", "-3"], "--n-resamples must be a positive integer; got -3"),
        (
            ["--format", "md,htm"],
            "--format must be some of 'md', 'html', "
            "'json', 'model-card'; got 'htm' (did you "
            "mean 'html'?)",
        ),
        (
            ["-m", "a,", "--compat", "wang"],
            "--compat must be one of 'wang2021'; got 'wang' (did you mean 'wang2021'?)",
        ),
    ):
        args = build_parser().parse_args(["probe", "--config", str(conf), *argv])
        with pytest.raises(BiasampError) as err:  # the flag on the command line
            ProbeConfig.from_cli(args)
        assert str(err.value) == message


def test_a_config_is_checked_once_and_immutable():
    cfg = ProbeConfig(
        models="a,b",
        attributes=("he", "she"),
        max_memory="0=1GiB",
        device_map="auto",
        dtype="bf16",
        scoring="pll",
    )
    assert (cfg.models, cfg.attributes, cfg.max_memory, cfg.dtype) == (
        ["a", "b"],
        ["he", "she"],
        {0: "1GiB"},
        "bfloat16",
    )
    with pytest.raises(ValidationError, match="frozen"):
        cfg.seed = 3
    assert ProbeConfig(**cfg.model_dump()) == cfg  # its dict builds the same config
    with pytest.raises(BiasampError, match=r"^scoring 'continuation' is an estimator for causal"):
        ProbeConfig(models=["m"], model_type="masked", scoring="continuation")


def test_one_trailing_comma_is_allowed_and_an_empty_string_is_no_names():
    cfg = ProbeConfig(models="m,", attributes="he,she,", formats="")
    assert (cfg.models, cfg.attributes, cfg.formats) == (["m"], ["he", "she"], [])


def test_compat_resolution():
    cfg = ProbeConfig(
        models=["m"], compat="wang2021", base_rates="uniform,wikipedia,labor-2016-wang2021"
    ).resolved()
    assert cfg.base_rates == [
        "uniform-wang2021",
        "wikitext103-valtest-wang2021",
        "labor-2016-wang2021",
    ]
    assert ProbeConfig(models=["m"]).resolved().base_rates == ["uniform", "labor-2016"]
    with pytest.raises(BiasampError, match=r"base_rates: source 'file:x.csv' has no wang2021"):
        ProbeConfig(models=["m"], compat="wang2021", base_rates="file:x.csv").resolved()


def test_compat_overrides_templates_with_warning(caplog):
    cfg = ProbeConfig(models=["m"], compat="wang2021", templates="mine", scoring="pll")
    with caplog.at_level("WARNING", logger="biasamp.pipeline.config"):
        r = cfg.resolved()
    assert (r.templates, r.scoring) == ("wang2021", "first-piece")
    assert "ignoring templates='mine'" in caplog.text and "ignoring scoring='pll'" in caplog.text


def test_compat_warns_of_a_template_set_given_even_when_it_is_the_default(caplog):
    """``--templates adjectives --compat wang2021``: the set given is replaced, and said so,
    though it is the default; one not given is replaced without a word. A config rebuilt with
    more options keeps what was given (``as_config``)."""
    from biasamp.pipeline.config import as_config

    given = ProbeConfig(models=["m"], compat="wang2021", templates="adjectives")
    with caplog.at_level("WARNING", logger="biasamp.pipeline.config"):
        assert given.resolved().templates == "wang2021"
        assert as_config(given, seed=3).resolved().templates == "wang2021"
        ProbeConfig(models=["m"], compat="wang2021").resolved()
        as_config(ProbeConfig(models=["m"], compat="wang2021"), seed=3).resolved()
    assert [r.getMessage() for r in caplog.records] == [
        "compat='wang2021' uses templates='wang2021'; ignoring templates='adjectives'"
    ] * 2


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"device": "tpu"},
            r"^device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'; got 'tpu'$",
        ),
        ({"device": "cuda:x"}, r"got 'cuda:x'"),
        (
            {"device": "cpu", "dtype": "fp16"},
            r"dtype 'float16' needs a CUDA device; got device 'cpu'",
        ),
        (
            {"device": "mps", "dtype": "float64"},
            r"dtype 'float64' is not available on device 'mps'",
        ),
        ({"score_cache": "{f}"}, r"^score_cache '.*afile' is a file, not a folder; give a folder"),
        (
            {"hf_cache_dir": "{f}/sub/x"},
            r"^hf_cache_dir '.*afile/sub/x' lies under '.*afile', a file",
        ),
        (
            {"offload_folder": "{f}", "device_map": "auto"},
            r"^offload_folder '.*afile' is a file, not a folder",
        ),
        ({"out": "{d}/o", "score_cache": "{d}/o"}, r"^score_cache '.*/o' lies in out '.*/o'"),
        ({"out": "{d}/o", "score_cache": "{d}/o/c"}, r"^score_cache '.*/o/c' lies in out"),
    ],
)
def test_options_decidable_from_themselves_are_refused_when_the_config_is_built(
    tmp_path, kwargs, match
):
    (tmp_path / "afile").write_text("x")
    fill = {"f": str(tmp_path / "afile"), "d": str(tmp_path)}
    kwargs = {k: v.format(**fill) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(BiasampError, match=match):
        ProbeConfig(models=["m"], **kwargs)
    # the same values where they make sense are taken as given (nothing rewritten)
    ok = ProbeConfig(
        models=["m"],
        device="cuda:1",
        dtype="float16",
        score_cache=str(tmp_path / "new" / "cache"),
        out=str(tmp_path / "o"),
    )
    assert (ok.device, ok.score_cache) == ("cuda:1", str(tmp_path / "new" / "cache"))


def test_a_config_file_that_is_not_a_regular_file_is_named_so(tmp_path):
    import os

    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path, Path("/dev/zero")):
        with pytest.raises(BiasampError, match=r"is not a regular file \(a folder, device, FIFO"):
            ProbeConfig.from_file(path)


def test_from_dict_rejects_non_mapping():
    with pytest.raises(BiasampError, match="config must be a mapping"):
        ProbeConfig.from_dict(["a"])


def test_probe_needs_exactly_one_model():
    with pytest.raises(BiasampError, match=r"exactly one model.*got \['a', 'b'\]"):
        probe(models=["a", "b"])
    with pytest.raises(BiasampError, match=r"models must name at least one model"):
        probe_many(models=[])
    with pytest.raises(BiasampError, match=r"config must be a ProbeConfig, a mapping"):
        probe(42)


def test_unknown_model_path_is_an_input_error(tmp_path):
    with pytest.raises(BiasampError, match=r"model '.*nowhere': no such folder"):
        probe_many(models=[str(tmp_path / "nowhere")])
    f = tmp_path / "file.bin"
    f.write_text("x")
    with pytest.raises(BiasampError, match=r"is a file; give the model's folder"):
        probe_many(models=[str(f)])


def test_resolve_direction_and_slug():
    assert canonical_direction("A->T") == "attribute_to_task"
    assert canonical_direction("task_to_attribute") == "task_to_attribute"
    with pytest.raises(BiasampError, match=r"direction must be one of .*; got 'T>A'"):
        canonical_direction("T>A")
    assert model_slug("bert-base-uncased") == "bert-base-uncased"
    assert model_slug("./models/my bert") == "my-bert"


# -- each option declared once: ProbeConfig's fields generate the CLI, its help and the docs --


def test_every_option_is_declared_once_with_help_and_check():
    from biasamp.pipeline.config import GROUPS, cli_flags

    for name, field in ProbeConfig.model_fields.items():
        assert field.description.endswith(".") and len(field.description) > 15, name
        assert field.json_schema_extra.get("group") in (*GROUPS, None), name
        assert cli_flags(name)[0].startswith("--"), name
        # the docstring's Parameters section is generated from the same text
        assert f"\n    {name} : " in ProbeConfig.__doc__, name
        assert " ".join(field.description.split()[:6]) in " ".join(ProbeConfig.__doc__.split())


def test_probe_options_are_generated_from_the_config():
    from biasamp.cli import build_parser
    from biasamp.pipeline.config import cli_flags, cli_help

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    actions = {
        a.dest: a
        for a in sub["probe"]._actions
        if a.dest not in ("help", "config", "sub_verbose", "sub_quiet")
    }
    fields = {n for n, f in ProbeConfig.model_fields.items() if f.json_schema_extra.get("group")}
    assert set(actions) == fields  # nothing declared by hand beside --config
    assert "progress" not in actions  # the CLI's -q decides it
    for name, action in actions.items():
        assert tuple(action.option_strings) == cli_flags(name), name
        assert action.help == cli_help(name), name
        assert action.default is None, name  # so that a --config file's value stands
    groups = [g.title for g in sub["probe"]._action_groups if g._group_actions]
    assert groups[-6:] == [
        "model",
        "loading the model",
        "templates and tasks",
        "base rates",
        "bootstrap",
        "output",
    ]
    args = build_parser().parse_args(
        ["probe", "--seed", "3", "--confidence", "0.5", "--max-templates", "2", "--overwrite"]
    )
    assert (args.seed, args.confidence, args.max_templates, args.overwrite) == (3, 0.5, 2, True)


def test_probe_flags_build_the_config(tmp_path):
    from biasamp.cli import build_parser
    from biasamp.commands.model import build_config

    args = build_parser().parse_args(
        [
            "probe",
            "-m",
            "a",
            "--model",
            "b,c",
            "--out",
            str(tmp_path / "o"),
            "--seed",
            "3",
            "--confidence",
            "0.9",
            "--format",
            "md",
            "--overwrite",
            "--base-rates",
            "uniform",
            "--max-templates",
            "2",
            "--trust-remote-code",
        ]
    )
    cfg = build_config(args)
    assert cfg.models == ["a", "b", "c"] and cfg.seed == 3 and cfg.confidence == 0.9
    assert cfg.formats == ["md"] and cfg.overwrite is True and cfg.base_rates == ["uniform"]
    assert cfg.max_templates == 2 and cfg.trust_remote_code is True
    assert cfg.n_resamples == 10_000 and cfg.allow_missing_weights is False  # defaults


def test_a_config_file_value_stands_unless_the_flag_is_given(tmp_path):
    from biasamp.cli import build_parser
    from biasamp.commands.model import build_config

    conf = tmp_path / "p.toml"
    conf.write_text('models = ["m"]\nout = "o"\nseed = 7\nn_resamples = 50\n', encoding="utf-8")
    args = build_parser().parse_args(["probe", "--config", str(conf), "--seed", "1"])
    cfg = build_config(args)
    assert (cfg.seed, cfg.n_resamples) == (1, 50)


def test_cli_help_text():
    from biasamp.pipeline.config import cli_help

    assert cli_help("seed").endswith("(default: 0)")  # a default of 0 is shown
    assert "(default" not in cli_help("overwrite")  # a switch off by default
    assert cli_help("formats").endswith("(default: md,html,json)")
    assert "With --device-map:" in cli_help("max_memory")  # ``device_map``: its flag
    assert "'auto'" in cli_help("device")  # ``auto``: a value
    assert "wang2021, winobias" in cli_help("templates")  # the registered names
    assert cli_help("n_resamples").endswith("(default: 10000)")


def test_the_options_page_is_generated_from_the_fields():
    from biasamp.pipeline.config import options_markdown

    page = options_markdown()
    assert page.startswith("## model\n")
    assert (
        "| `n_resamples` | `--n-resamples` | `10000` | a positive integer | Bootstrap resamples. |"
    ) in page
    assert "| `formats` | `--format` | `md,html,json` |" in page
    assert "`<\\|endoftext\\|>`" in page  # a | in a cell is escaped
    assert page.count("\n## ") == 6  # the six groups and the Python-only options
