"""Swiss events running: the tables of a round, paired from the standings so far.

A Swiss event's rows are a duplicate event's (`services.gateway.tourneys`), but its
``tourney_games`` rows are written one round at a time: round 1 when it starts, round N+1
only once every board of round N has its result (`services.gateway.eventrun` calls
`pair_next` then). The pairing is `services.gateway.swiss`'s, from each pair's total
matchpoints (cross-IMPs the tiebreak) over the boards scored so far, the meetings so far
and how often each pair sat North-South; the boards stay the ones committed at creation.
An odd field gives one pair a bye each round (in the log's RoundPaired), scored as an
average by `swiss.bye_scores`.
"""

from __future__ import annotations

import uuid

from events.pgstore import Conn
from services.gateway import duplicate, swiss
from services.gateway.tourneys import byes_of, games_of, log, scores_of


async def pair_next(conn: Conn, tourney_id: uuid.UUID, round_: int, pairs: list[int]) -> None:
    """Pair round ``round_`` of a Swiss event among ``pairs`` and write its tables' boards."""
    games = await games_of(conn, tourney_id)
    per_round = await conn.fetchval(
        "SELECT boards_per_round FROM tourneys WHERE tourney_id = $1", tourney_id
    )
    scores = await scores_of(conn, tourney_id, games, per_round)
    totals: dict[int, int] = {}
    ties: dict[int, int] = {}
    for s in scores:
        totals[s.pair] = totals.get(s.pair, 0) + s.matchpoints
        ties[s.pair] = ties.get(s.pair, 0) + s.imps
    met = {swiss.met_key(g.ns_pair, g.ew_pair) for g in games}
    ns_times: dict[int, int] = {}
    for g in {(g.round, g.table): g for g in games}.values():
        ns_times[g.ns_pair] = ns_times.get(g.ns_pair, 0) + 1
    order = swiss.ranking(pairs, totals, ties)
    byes = await byes_of(conn, tourney_id)
    had = {p: list(byes.values()).count(p) for p in pairs}
    pairing = swiss.pair_round(order, met, had)
    seatings = [
        duplicate.Seating(round=round_, table=t, ns=ns, ew=ew)
        for t, (a, b) in enumerate(pairing.tables, 1)
        for ns, ew in [swiss.seat(a, b, ns_times)]
    ]
    await conn.executemany(
        "INSERT INTO tourney_games (tourney_id, board, round, table_no, ns_pair, ew_pair)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        [
            (tourney_id, board, s.round, s.table, s.ns, s.ew)
            for s in seatings
            for board in duplicate.boards_of_round(round_, per_round)
        ],
    )
    await log(
        conn,
        tourney_id,
        "RoundPaired",
        round=round_,
        order=order,
        totals={str(p): totals.get(p, 0) for p in order},
        tables=[[s.ns, s.ew] for s in seatings],
        bye=pairing.bye,
    )


__all__ = ["pair_next"]
