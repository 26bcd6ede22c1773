"""`events.logs`: the ids bound to log lines nest, restore, stay in their task and win over
nothing a call passes itself. The whole services are checked in
`tests/services/test_log_context.py`; this is the context variable's own contract."""

from __future__ import annotations

import asyncio

from events.logs import bind_ids, bound_ids, current_ids, fresh_ids, merge_ids
from services.runtime.logs import work


def test_bound_ids_nest_and_restore() -> None:
    assert current_ids() == {}
    with bound_ids(request_id="r1", game_id="g1"):
        with bound_ids(request_id="r2"):
            assert current_ids() == {"request_id": "r2", "game_id": "g1"}
        assert current_ids() == {"request_id": "r1", "game_id": "g1"}
    assert current_ids() == {}


def test_fresh_ids_and_work_drop_the_enclosing_ids() -> None:
    with bound_ids(request_id="outer", game_id="g1"):
        with fresh_ids(request_id="inner"):
            assert current_ids() == {"request_id": "inner"}
        with work(None, game_id=None, table_id="t") as rid:
            assert current_ids() == {"request_id": rid, "table_id": "t"}
        assert current_ids() == {"request_id": "outer", "game_id": "g1"}


def test_a_field_passed_to_the_call_wins_over_a_bound_one() -> None:
    with bound_ids(request_id="bound", game_id="g1"):
        line = merge_ids(None, "info", {"event": "x", "request_id": "mine"})
    assert line == {"event": "x", "request_id": "mine", "game_id": "g1"}
    assert merge_ids(None, "info", {"event": "y"}) == {"event": "y"}


async def test_a_task_inherits_the_ids_and_its_own_binding_stays_in_it() -> None:
    seen: dict[str, object] = {}

    async def child() -> None:
        seen.update(current_ids())
        bind_ids(player_id="p1")
        assert current_ids()["player_id"] == "p1"

    with bound_ids(request_id="r1"):
        await asyncio.create_task(child())
        assert current_ids() == {"request_id": "r1"}
    assert seen == {"request_id": "r1"}
