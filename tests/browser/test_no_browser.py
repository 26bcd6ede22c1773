"""Without a browser the browser tests fail saying what to install; they never skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.stack import NoBrowser, find_chromium


def test_a_machine_without_chromium_is_told_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(NoBrowser, match=r"apt-get install -y chromium"):
        find_chromium({"PATH": str(tmp_path)}, fallback=str(tmp_path / "chromium"))


def test_spades_chromium_must_name_an_executable(tmp_path: Path) -> None:
    with pytest.raises(NoBrowser, match="SPADES_CHROMIUM="):
        find_chromium({"SPADES_CHROMIUM": str(tmp_path / "nothing"), "PATH": str(tmp_path)})


def test_chromium_is_found_on_the_path_or_through_spades_chromium(tmp_path: Path) -> None:
    binary = tmp_path / "chromium"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert find_chromium({"PATH": str(tmp_path)}, fallback="/nonexistent") == str(binary)
    assert find_chromium({"SPADES_CHROMIUM": str(binary), "PATH": ""}) == str(binary)
