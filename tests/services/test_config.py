"""The one settings loader: typed values, defaults when unset, errors that name the variable."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.settings import SettingsError, from_environ, variable_of
from services.gateway.config import MIN_SECRET_CHARS, ConfigError, GatewayConfig
from services.runtime.config import Settings

KEY = "k" * MIN_SECRET_CHARS


def test_unset_and_blank_variables_keep_the_documented_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .spades/infra.env of a running stack
    assert Settings.from_env({}) == Settings()
    assert Settings.from_env({"SPADES_OPS_PORT": " ", "SPADES_TURN_SECONDS": ""}) == Settings()
    assert Settings.from_env({"SPADES_NATS_PREFIX": ""}).nats_prefix == ""


def test_values_are_decoded_to_the_fields_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env(
        {
            "SPADES_OPS_PORT": "9100",
            "SPADES_TURN_SECONDS": "2.5",
            "SPADES_ABANDON_STREAK": " 4 ",
            "SPADES_LOG_LEVEL": "DEBUG",
            "SPADES_REPLICA_ID": "table-7f9c",
        }
    )
    assert (settings.ops_port, settings.turn_seconds, settings.abandon_streak) == (9100, 2.5, 4)
    assert (settings.log_level, settings.replica_id) == ("DEBUG", "table-7f9c")


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("SPADES_OPS_PORT", "nine thousand", "expected `int`, got `str`"),
        ("SPADES_OPS_PORT", "70000", "<= 65535"),
        ("SPADES_HTTP_PORT", "80.5", "expected `int`"),
        ("SPADES_ABANDON_STREAK", "0", ">= 1"),
        ("SPADES_LEASE_SECONDS", "-1", "> 0"),
        ("SPADES_TURN_SECONDS", "soon", "expected `float`"),
        ("SPADES_LOG_LEVEL", "loud", "matching regex"),
        ("SPADES_LOG_FORMAT", "xml", "enum"),
    ],
)
def test_a_bad_value_is_refused_naming_its_variable(
    variable: str,
    value: str,
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"SPADES_OPS_PORT": "9000", variable: value})
    assert caught.value.variable == variable
    assert caught.value.value == value.strip()
    assert caught.value.code == "bad_setting"
    assert str(caught.value).startswith(f"{variable}={value.strip()!r} is not usable: ")
    assert expected in str(caught.value)


@given(port=st.integers(min_value=0, max_value=65535), streak=st.integers(1, 10_000))
def test_every_valid_number_round_trips(port: int, streak: int) -> None:
    env = {"SPADES_OPS_PORT": str(port), "SPADES_ABANDON_STREAK": str(streak)}
    settings = from_environ(Settings, env)
    assert (settings.ops_port, settings.abandon_streak) == (port, streak)


@given(
    junk=st.text(min_size=1).filter(lambda s: s.strip() and not s.strip().lstrip("+-").isdigit())
)
def test_any_non_number_for_a_port_names_the_port(junk: str) -> None:
    with pytest.raises(SettingsError) as caught:
        from_environ(Settings, {"SPADES_HTTP_PORT": junk})
    assert caught.value.variable == "SPADES_HTTP_PORT"


def test_every_field_has_its_variable() -> None:
    names = [variable_of(f.name) for f in dataclasses.fields(Settings)]
    assert "SPADES_ABANDON_STREAK" in names
    assert all(name.startswith("SPADES_") and name.isupper() for name in names)


def test_the_gateway_refuses_a_bad_setting_by_name() -> None:
    settings = Settings(jwt_secret=KEY)
    with pytest.raises(ConfigError, match=r"^SPADES_RATE_PER_MINUTE='lots' is not usable: "):
        GatewayConfig.from_env(settings, {"SPADES_RATE_PER_MINUTE": "lots"})
    with pytest.raises(ConfigError, match=r"^SPADES_TOKEN_SECONDS='0' is not usable: .*>= 1"):
        GatewayConfig.from_env(settings, {"SPADES_TOKEN_SECONDS": "0"})
    with pytest.raises(ConfigError, match="SPADES_JWT_SECRET is not set"):
        GatewayConfig.from_env(Settings(), {"SPADES_GATEWAY_DEV": "0"})


def test_the_gateway_reads_its_own_variables() -> None:
    config = GatewayConfig.from_env(
        Settings(), {"SPADES_GATEWAY_DEV": "1", "SPADES_RATE_PER_MINUTE": "60"}
    )
    assert config.dev_secret
    assert len(config.jwt_secret) >= MIN_SECRET_CHARS
    assert config.rate_per_minute == 60
    assert GatewayConfig.from_env(Settings(jwt_secret=KEY), {}).token_seconds == 900


def test_a_service_started_with_a_bad_setting_exits_naming_it(tmp_path: Path) -> None:
    """Before any connection: one line on stderr that says which variable, and a failure."""
    env = {**os.environ, "SPADES_OPS_PORT": "ninety", "SPADES_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "services.tools.cli", "serve", "rating"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        "spades rating: SPADES_OPS_PORT='ninety' is not usable: expected `int`, got `str`"
    )
