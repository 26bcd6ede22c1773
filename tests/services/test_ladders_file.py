"""Ladders come from one operator file (`events/contracts/ladders.py`): the shipped set, the
refusals of a broken file (one line naming the problem), and services that will not start
on one: real processes exiting non-zero with that line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from events.contracts import ladders
from events.contracts.ladders import LadderFileError, load, rules_in_words

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ladders.toml"
    path.write_text(text)
    return path


def test_the_shipped_file_holds_the_default_set_each_a_valid_table() -> None:
    shipped = load(ladders.DEFAULT_FILE)
    assert list(shipped) == [
        "standard",
        "heads-up",
        "cut-throat",
        "five",
        "suicide",
        "jokers",
        "blitz",
        "classic",
    ]
    seats = {name: lad.rules.players for name, lad in shipped.items()}
    assert seats == {
        "standard": 4,
        "heads-up": 2,
        "cut-throat": 3,
        "five": 5,
        "suicide": 4,
        "jokers": 4,
        "blitz": 4,
        "classic": 4,
    }
    assert shipped["suicide"].rules.suicide
    assert shipped["jokers"].rules.jokers
    assert (shipped["blitz"].turn_seconds, shipped["blitz"].rules.target) == (10.0, 300)
    assert (shipped["classic"].turn_seconds, shipped["classic"].rated) == (60.0, False)
    assert shipped["standard"].turn_seconds is None  # the table's own SPADES_TURN_SECONDS
    assert shipped["standard"].rules == ladders.configured()["standard"].rules


def test_a_ladder_is_any_valid_ruleset_over_a_variant(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[ladder]]\nname = "five"\nvariant = "five-players"\n'
        "[ladder.rules]\ntarget = 250\nbags = false\n",
    )
    (five,) = load(path).values()
    assert (five.rules.players, five.rules.target, five.rules.bags) == (5, 250, False)
    words = rules_in_words(five.rules)
    assert words[0].startswith("5 players, each for himself")
    assert "First to 250 points wins" in words[1]
    assert any("Bags off" in w for w in words)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[[ladder]]\nname = "a"\n[[ladder]]\nname = "a"\nvariant = "jokers"\n',
            "duplicate ladder name 'a' (ladder 2)",
        ),
        (
            '[[ladder]]\nname = "bad"\nvariant = "cut-throat"\n[ladder.rules]\nboston = true\n',
            "ladder 'bad': invalid ruleset: boston is a partnership rule: it needs players=4",
        ),
        (
            '[[ladder]]\nname = "big"\n[ladder.rules]\ntarget = 5000\n',
            "ladder 'big': invalid ruleset: target must be between 100 and 1000, not 5000",
        ),
        ('[[ladder]]\nname = "x"\n[ladder.rules]\ncolour = 1\n', "unknown option 'colour'"),
        ('[[ladder]]\nname = "x"\nvariant = "whist"\n', "unknown variant 'whist'"),
        ('[[ladder]]\nname = "Bad Name"\n', "name must be 1..32 of a-z 0-9 - _"),
        ('[[ladder]]\nname = "practice"\n', "reserved for unrated tables"),
        ('[[ladder]]\nname = "x"\nturn_seconds = 0\n', "turn_seconds must be between 1"),
        ('[[ladder]]\nname = "x"\nseason_reset = "hard"\n', "season_reset must be one of"),
        ('[[ladder]]\nname = "x"\nseason_start = "soon"\n', "season_start is no date"),
        ('[[ladder]]\nname = "x"\nrated = "yes"\n', "rated takes true or false"),
        ('[[ladder]]\nname = "x"\ncolour = "red"\n', "unknown key 'colour'"),
        ("[ladder\n", "not TOML"),
        ("", "no ladder"),
    ],
)
def test_a_broken_file_is_refused_with_one_line_naming_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LadderFileError) as refused:
        load(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ")
    assert problem in message
    assert "\n" not in message
    assert refused.value.code == "bad_ladders_file"


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LadderFileError, match="cannot read it"):
        load(tmp_path / "nowhere.toml")


@pytest.mark.parametrize("service", ["matchmaking", "rating", "table", "gateway"])
def test_a_service_does_not_start_on_a_broken_file_and_says_why(
    tmp_path: Path, service: str
) -> None:
    path = write(tmp_path, '[[ladder]]\nname = "a"\n[[ladder]]\nname = "a"\n')
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SPADES_HOME": str(tmp_path),
        "SPADES_LADDERS": str(path),
        "SPADES_GATEWAY_DEV": "1",
        "SPADES_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
        "SPADES_NATS_URL": "nats://127.0.0.1:1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "services.tools.cli", "serve", service],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == (
        f"spades {service}: ladders file {path}: duplicate ladder name 'a' (ladder 2)"
    ), done.stderr
