"""A late copy of a resent queue request changes nothing (`services.matchmaking.freshness`)."""

from __future__ import annotations

from services.matchmaking.freshness import KEPT, STALE_AFTER, Freshness


def test_a_copy_issued_before_the_players_last_change_is_stale() -> None:
    fresh = Freshness()
    assert not fresh.stale("ann", 100.0, 101.0)  # his join, first copy
    fresh.applied("ann", 100.0, 101.0)
    assert not fresh.stale("ann", 100.0, 103.0)  # a second copy of it: a duplicate, not stale
    assert not fresh.stale("ann", 105.0, 105.5)  # his leave
    fresh.applied("ann", 105.0, 105.5)
    assert fresh.stale("ann", 100.0, 110.0)  # the join's copy a paused replica resumed with
    assert not fresh.stale("bob", 100.0, 110.0)  # another player's order is his own


def test_a_copy_over_a_minute_late_is_stale_and_an_undated_one_never() -> None:
    fresh = Freshness()
    assert fresh.stale("ann", 100.0, 100.0 + STALE_AFTER + 1)
    assert not fresh.stale("ann", 0.0, 10_000.0)  # an old client: no order to keep
    fresh.applied("ann", 0.0, 10_000.0)
    assert fresh.changed == {}


def test_the_record_is_bounded() -> None:
    fresh = Freshness()
    for i in range(KEPT + 1):
        fresh.applied(f"p{i}", 1.0, 1.0)
    fresh.applied("late", 1000.0, 1000.0)  # the rest are older than a minute: dropped
    assert fresh.changed == {"late": 1000.0}
