"""The one backoff schedule every retry of a transient fault uses."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.retry import Backoff

schedules = st.builds(
    Backoff,
    first=st.floats(0, 1),
    factor=st.floats(1, 4),
    most=st.just(5.0),
    jitter=st.floats(0, 0.9),
)


@given(backoff=schedules, attempt=st.integers(1, 200))
def test_every_delay_lies_between_first_and_most_give_or_take_the_jitter(
    backoff: Backoff, attempt: int
) -> None:
    delay = backoff.delay(attempt)
    assert backoff.first * (1 - backoff.jitter) <= delay <= backoff.most * (1 + backoff.jitter)


@given(first=st.floats(0.001, 1), factor=st.floats(1, 4), attempts=st.integers(1, 60))
def test_without_jitter_delays_grow_until_the_ceiling_and_stay_there(
    first: float, factor: float, attempts: int
) -> None:
    backoff = Backoff(first=first, factor=factor, most=3.0)
    delays = [backoff.delay(n) for n in range(1, attempts + 1)]
    assert delays[0] == first
    assert delays == sorted(delays)
    assert max(delays) <= 3.0


@pytest.mark.parametrize(
    "bad",
    [
        {"first": -1.0},
        {"first": 2.0, "most": 1.0},
        {"factor": 0.5},
        {"jitter": 1.0},
        {"jitter": -0.1},
    ],
)
def test_a_schedule_that_cannot_work_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=r"schedule|jitter"):
        Backoff(**bad)


async def test_attempts_stop_at_the_limit() -> None:
    seen = [n async for n in Backoff(first=0.0, most=0.0).attempts(limit=3)]
    assert seen == [1, 2, 3]


async def test_attempts_stop_before_a_pause_would_end_past_within() -> None:
    seen = [n async for n in Backoff(first=0.02, factor=2.0, most=0.08).attempts(within=0.2)]
    # pauses 0.02, 0.04, 0.08 end by 0.14; one more (0.22) would pass 0.2: four attempts
    assert seen == [1, 2, 3, 4]


async def test_stop_ends_the_attempts_and_cuts_the_pause_short() -> None:
    stop = asyncio.Event()
    seen = []
    loop = asyncio.get_running_loop()
    started = loop.time()
    async for n in Backoff(first=30.0, most=30.0).attempts(stop=stop):
        seen.append(n)
        loop.call_soon(stop.set)  # set while the 30 s pause runs
    assert seen == [1]
    assert loop.time() - started < 5
