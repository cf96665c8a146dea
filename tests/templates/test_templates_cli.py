"""Tests of the ``biasamp templates`` subcommand (in-process)."""

from __future__ import annotations

import subprocess
import sys

from biasamp.cli import main


def test_list(capsys):
    assert main(["templates", "--list"]) == 0
    out = capsys.readouterr().out
    assert "Template sets:" in out and "Task vocabularies:" in out
    for line in (
        "wang2021             20 templates",
        "adjectives-large   1339 templates",
        "lu2019               40 templates",
        "lu2019-extended     102 templates",
        "winobias32       32 words, 32 grouped",
        "winogender60     60 words  ",
    ):
        assert line in out, line
    # bare `biasamp templates` lists too
    assert main(["templates"]) == 0
    assert capsys.readouterr().out == out


def test_show_prints_sentences_prompts_and_candidates(capsys):
    assert (
        main(
            [
                "templates",
                "show",
                "wang2021",
                "--attributes",
                "he,she,they",
                "--tasks",
                "winobias32",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# wang2021: 20 templates x 3 attributes x 32 tasks (agreement=no")
    assert out[1] == "## sentences (1920)"
    assert out[2] == "present-01-new\the is a new janitor."
    assert "past-08-old\tthey was an old sewer." in out
    i = out.index("## attribute_to_task prompts (60)")
    assert out[i + 3] == (
        "present-01-new\tthey is a new [BLANK].\tjanitor | cook | mover | "
        "laborer | constructor | chief | developer | carpenter | lawyer | "
        "farmer | driver | salesperson | physician | guard | analyst | sheriff | "
        "cashier | nurse | secretary | auditor | cleaner | receptionist | "
        "counselor | designer | hairdresser | writer | housekeeper | baker | "
        "accountant | editor | librarian | sewer"
    )
    j = out.index("## task_to_attribute prompts (640)")
    assert out[j + 1] == "present-01-new\t[BLANK] is a new janitor.\the | she | they"
    assert len(out) == 2 + 1920 + 1 + 60 + 1 + 640  # header, 2 sections + titles


def test_show_direction_limit_and_filters(capsys):
    assert (
        main(
            [
                "templates",
                "show",
                "adjectives",
                "--attributes",
                "she,they",
                "--tasks",
                "winobias40",
                "--direction",
                "T->A",
                "--limit",
                "2",
                "--tense",
                "past",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out == [
        out[0],
        "## sentences (800)",
        "past-01-new\tShe was a new supervisor.",
        "past-01-new\tShe was a new janitor.",
        "  ... (798 more)",
        "## task_to_attribute prompts (400)",
        "past-01-new\t[BLANK] a new supervisor.\tShe was | They were",
        "past-01-new\t[BLANK] a new janitor.\tShe was | They were",
        "  ... (398 more)",
    ]
    assert out[0].startswith("# adjectives: 10 templates x 2 attributes x 40 tasks (agreement=yes")


def test_show_direction_aliases_as_in_base_rates(capsys):
    # the one direction vocabulary of biasamp._conventions: any case, arrows or letters
    for alias, direction, n in (
        ("a->t", "attribute_to_task", 40),
        ("AT", "attribute_to_task", 40),
        ("t2a", "task_to_attribute", 40),
    ):
        assert (
            main(
                [
                    "templates",
                    "show",
                    "wang2021",
                    "--tasks",
                    "nurse,cook",
                    "--direction",
                    alias,
                    "--limit",
                    "1",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out.splitlines()
        assert out[1:4] == [
            "## sentences (80)",
            "present-01-new\the is a new nurse.",
            "  ... (79 more)",
        ]
        assert out[4:] == [
            f"## {direction} prompts ({n})",
            (
                "present-01-new\the is a new [BLANK].\tnurse | cook"
                if direction == "attribute_to_task"
                else "present-01-new\t[BLANK] is a new nurse.\the | she"
            ),
            f"  ... ({n - 1} more)",
        ]
    assert (
        main(
            [
                "templates",
                "show",
                "wang2021",
                "--tasks",
                "nurse,cook",
                "--direction",
                "BOTH",
                "--limit",
                "0",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.count(" prompts (40)") == 2


def test_show_bad_direction_names_the_option(capsys):
    assert main(["templates", "show", "wang2021", "--direction", "sideways"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "error: --direction must be one of {'attribute_to_task', 'task_to_attribute'} "
        "(aliases 'A->T', 'T->A', 'AT', 'TA'); got 'sideways'\n"
    )


def test_show_user_task_file(tmp_path, capsys):
    p = tmp_path / "jobs.txt"
    p.write_text("pilot\nengineer\n")
    assert (
        main(
            [
                "templates",
                "show",
                "lu2019",
                "--tasks",
                str(p),
                "--direction",
                "A->T",
                "--limit",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "present-01-hungry\tThe pilot is eating because he was hungry."
    assert (
        out[5]
        == "present-01-hungry\tThe [BLANK] is eating because he was hungry.\tpilot | engineer"
    )


def test_show_errors_exit_2(capsys):
    assert main(["templates", "show", "wang2020"]) == 2
    err = capsys.readouterr().err
    assert "unknown template set 'wang2020' (did you mean 'wang2021'?)" in err
    assert main(["templates", "show", "wang2021", "--tasks", "winobias23"]) == 2
    assert "did you mean 'winobias32'?" in capsys.readouterr().err
    assert main(["templates", "show", "wang2021", "--attributes", "he,it"]) == 2
    assert (
        "attributes must be a subset of {'he', 'she', 'they'}; got 'it'" in capsys.readouterr().err
    )
    assert main(["templates", "show", "wang2021", "--direction", "T>A"]) == 2
    assert "direction must be one of" in capsys.readouterr().err
    assert main(["templates", "show", "wang2021", "--limit", "-1"]) == 2
    assert "--limit must be a non-negative integer; got -1" in capsys.readouterr().err
    assert main(["templates", "show", "wang2021", "--family", "nope"]) == 2
    assert "no template of set 'wang2021' has family='nope'" in capsys.readouterr().err
    assert main(["templates", "show"]) == 2  # SET is required
    assert "required" in capsys.readouterr().err


def test_show_into_a_closed_pipe_exits_quietly():
    # `biasamp templates show ... | head -1`: the reader goes away after one line
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "biasamp",
            "templates",
            "show",
            "adjectives",
            "--attributes",
            "he,she,they",
            "--tasks",
            "winogender60",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"# adjectives: 20 templates x 3 attributes x 60 tasks")
    assert b"Traceback" not in err and b"BrokenPipe" not in err
