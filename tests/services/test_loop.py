"""`services.runtime.loop`: the services' event loop is uvloop where it is installed, asyncio's own
when asked or when uvloop is missing, and a demand for a missing uvloop is refused by name."""

from __future__ import annotations

import asyncio
import gc
import sys

import pytest

from services.runtime import loop
from services.runtime.config import Settings, SettingsError


async def _loop_name() -> str:
    return loop.current_loop_name()


def test_auto_runs_on_uvloop_where_it_is_installed() -> None:
    pytest.importorskip("uvloop", reason="uvloop has no wheel for this platform")
    assert loop.run(_loop_name(), Settings(event_loop="auto")) == "uvloop"
    assert loop.run(_loop_name(), Settings(event_loop="uvloop")) == "uvloop"


def test_asyncio_is_the_standard_librarys_loop() -> None:
    assert loop.run(_loop_name(), Settings(event_loop="asyncio")) == "asyncio"


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert loop.run(_loop_name(), Settings(event_loop="auto")) == "asyncio"
    main = _loop_name()
    with pytest.raises(loop.LoopUnavailable, match="SPADES_EVENT_LOOP=uvloop") as refused:
        loop.run(main, Settings(event_loop="uvloop"))
    assert refused.value.code == "event_loop_unavailable"
    assert main.cr_frame is None  # closed, not left to warn "never awaited"


def test_an_unknown_loop_is_refused_naming_the_variable() -> None:
    with pytest.raises(SettingsError, match="SPADES_EVENT_LOOP"):
        Settings.from_env({"SPADES_EVENT_LOOP": "trio"})


def test_the_loop_runs_the_coroutine_to_its_result() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert loop.run(answer(), Settings(event_loop="auto")) == 42


def test_the_collector_is_settled_to_the_setting_and_left_alone_at_zero() -> None:
    before = gc.get_threshold()
    try:
        loop.settle_collector(0)
        assert gc.get_threshold() == before  # Python's own
        loop.settle_collector(Settings.from_env({"SPADES_GC_YOUNG": "12345"}).gc_young)
        assert gc.get_threshold() == (12345, *before[1:])
        assert gc.get_freeze_count() > 0  # what was alive at start is out of its sight
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    with pytest.raises(SettingsError, match="SPADES_GC_YOUNG"):
        Settings.from_env({"SPADES_GC_YOUNG": "-1"})
