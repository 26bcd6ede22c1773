"""`services.gateway.rooms.Inbox`: frames handed to an idle watch at once keep their order.

A watch waiting on an empty inbox forwards the frames that follow on straight from the bus
callback; a frame it cannot (a gap, a practice hint) is queued, and every frame after it
queues behind it until the watch's loop has dealt with it. No network here: the inbox and a
watch's forwarding alone (the whole path runs in the gateway's WebSocket tests)."""

from __future__ import annotations

from typing import Any

from events.contracts.audience import Frame
from services.gateway.rooms import Inbox, Room
from services.gateway.watch import Watch


def frame(first: int, last: int | None = None, *, turn: bool = False) -> Frame:
    last = first if last is None else last
    seat0 = tuple(f"e{seq}".encode() for seq in range(first, last + 1))
    return Frame(
        game_id="g",
        first=first,
        last=last,
        seats=(seat0, (), (), ()),
        turns=(b"turn" if turn else b"", b"", b"", b""),
        clock=b"clock",
    )


def seated_watch(*, hints: bool = False) -> tuple[Watch, list[bytes]]:
    sent: list[bytes] = []
    gateway: Any = None  # asking the table is follow()'s business, not tested here
    watch = Watch(gateway, Room("g"), Inbox(), "p0", sent.append, sent.append, hints=hints)
    watch.seat, watch.version, watch.hints = 0, 0, hints
    return watch, sent


def test_an_idle_inbox_hands_frames_over_and_queues_what_is_refused() -> None:
    inbox = Inbox()
    taken: list[int] = []

    def take_all_but_2(f: Frame) -> bool:
        taken.append(f.first)
        return f.first != 2

    inbox.inline = take_all_but_2
    for seq in (1, 2, 3):
        inbox.put_nowait(frame(seq))
    assert taken == [1, 2]  # 3 came while 2 waited: it queues behind it, not handed over
    assert [inbox.get_nowait().first for _ in range(inbox.qsize())] == [2, 3]


def test_without_a_reader_waiting_every_frame_is_queued() -> None:
    inbox = Inbox()
    inbox.put_nowait(frame(1))
    assert inbox.qsize() == 1


def test_a_failing_handler_is_dropped_and_the_frame_kept() -> None:
    inbox = Inbox()

    def broken(_: Frame) -> bool:
        raise RuntimeError("bug")

    inbox.inline = broken
    inbox.put_nowait(frame(1))
    assert inbox.inline is None
    assert inbox.get_nowait().first == 1


def test_a_watch_forwards_in_order_and_leaves_a_gap_to_its_loop() -> None:
    watch, sent = seated_watch()
    watch.queue.inline = watch._forward_now
    watch.queue.put_nowait(frame(1, 2, turn=True))
    assert sent == [b"e1", b"e2", b"turn", b"clock"]
    assert watch.version == 2
    watch.queue.put_nowait(frame(1, 2))  # again: dropped, nothing sent twice
    assert sent == [b"e1", b"e2", b"turn", b"clock"]
    watch.queue.put_nowait(frame(4))  # seq 3 is missing: the loop asks the table
    watch.queue.put_nowait(frame(5))  # behind the gap, even though it would follow on
    assert sent == [b"e1", b"e2", b"turn", b"clock"]
    assert [watch.queue.get_nowait().first for _ in range(watch.queue.qsize())] == [4, 5]


def test_a_turn_that_wants_a_hint_is_left_to_the_loop() -> None:
    watch, sent = seated_watch(hints=True)
    watch.queue.inline = watch._forward_now
    watch.queue.put_nowait(frame(1))  # no turn for this seat: forwarded
    watch.queue.put_nowait(frame(2, turn=True))  # its turn: the loop asks for the hint
    assert sent == [b"e1", b"clock"]
    assert watch.queue.get_nowait().first == 2


def test_a_stopped_watch_forwards_nothing_more_from_the_bus() -> None:
    watch, sent = seated_watch()
    watch.queue.inline = watch._forward_now
    watch.stop()  # unsubscribed: its loop's cancel may not have run yet
    watch.queue.put_nowait(frame(1))
    assert sent == []
