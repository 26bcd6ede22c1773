"""`spades export --month YYYY-MM [--out DIR]`: the open database of finished rated games.

One month's files, like lichess's monthly dumps:

- ``spades-games-YYYY-MM.ndjson.gz``: one finished rated game per line (`game_record`):
  players with their ratings before and after, rules, the result, and every event of the game
  as the public sees a finished one (every deal, the commitment, the contributions and the
  revealed seed; a legacy game's deck seed never leaves the server).
  Each line also carries the game's stored review as ``analysis`` (`engine.review`: every
  decision graded, the hands' double-dummy figures, each hand's par and the game's margin
  split into the cards and the play; the bot tier's `AnalysisFinished`, byte for byte as
  stored), or null when none is stored (yet, or it failed).
- ``spades-transcripts-YYYY-MM.tar.gz``: each game's plain-text transcript
  (`engine.transcript`, through `services.records.transcript`).
- ``SHA256SUMS-YYYY-MM``: the two files' SHA-256, in ``sha256sum -c`` format.

``--format openspiel`` writes instead each hand as an OpenSpiel ``spades`` episode
(`services.records.openspiel`), ``spades-openspiel-skipped-YYYY-MM.ndjson`` naming every game or
hand left out and why, and their SHA-256 sums.

The same record streams one player's games (`GET /api/players/NAME/games.ndjson`).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gzip
import hashlib
import io
import re
import tarfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

import engine
from events.contracts import game as wire
from events.contracts.analysis import AnalysisFinished, analysis_stream
from events.contracts.rating import RatingsUpdated, rating_stream
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from services.records import transcript as transcripts

_MONTH = re.compile(r"([1-9]\d{3})-(0[1-9]|1[0-2])")
_encoder = msgspec.json.Encoder()


class BadMonth(ValueError):
    """A month that is not written YYYY-MM."""


def month_bounds(month: str) -> tuple[dt.datetime, dt.datetime]:
    """Return the first instant of ``month`` (UTC) and of the month after."""
    found = _MONTH.fullmatch(month)
    if found is None:
        raise BadMonth(f"a month is written YYYY-MM (e.g. 2026-10), not {month[:20]!r}")
    year, number = int(found[1]), int(found[2])
    if (year, number) == (9999, 12):
        raise BadMonth("9999-12 is the calendar's last month: it has no month after it")
    start = dt.datetime(year, number, 1, tzinfo=dt.UTC)
    end = dt.datetime(year + number // 12, number % 12 + 1, 1, tzinfo=dt.UTC)
    return start, end


def month_over(month: str, now: dt.datetime | None = None) -> bool:
    """Return whether ``month`` (YYYY-MM, UTC) has ended: only an ended month is exported
    (by `spades export` and by GET /api/exports alike), so an export never changes later."""
    now = now or dt.datetime.now(dt.UTC)
    return month < f"{now.year:04d}-{now.month:02d}"


def public_event(event: wire.GameEvent) -> Any:
    """Return an event of a finished game as the public sees it (no legacy deck seed)."""
    return wire.redact(event, -1) if isinstance(event, wire.GameStarted) else event


def game_record(
    game_id: str,
    stored: Sequence[StoredEvent],
    ratings: dict[str, dict[str, float]],
    analysis: msgspec.Raw | None = None,
) -> dict[str, Any]:
    """Return one finished game's line of the export (``ratings``: per player, from the
    game's `RatingsUpdated`: mu/sigma/ordinal before and after; ``analysis``: its stored
    review's JSON, None without one)."""
    decoded = [REGISTRY.decode(s) for s in stored]
    opened = decoded[0]
    assert isinstance(opened, wire.TableOpened)
    started = next(e for e in decoded if isinstance(e, wire.GameStarted))
    finished = decoded[-1]
    assert isinstance(finished, wire.GameFinished)
    revealed = next((e.server_seed for e in decoded if isinstance(e, wire.SeedRevealed)), "")
    return {
        "game_id": game_id,
        "ladder": opened.ladder,
        "rated": opened.rated,
        "finished_at": stored[-1].recorded_at.isoformat(),
        "players": [
            {
                "seat": seat,
                "player_id": player,
                "bot": seat in opened.bots,
                "rating": ratings.get(player),
            }
            for seat, player in enumerate(opened.players)
        ],
        "rules": started.rules,
        "deals": {
            "scheme": started.scheme,
            "commitment": started.commitment,
            "server_seed": revealed,
        },
        "winner": finished.winner,
        "reason": finished.reason,
        "scores": finished.scores,
        "abandoned": finished.abandoned,
        "events": [
            {"seq": s.version, "type": s.type, "event": msgspec.to_builtins(public_event(e))}
            for s, e in zip(stored, decoded, strict=True)
        ],
        "analysis": analysis,
    }


def encode_line(record: dict[str, Any]) -> bytes:
    """Return a record as one NDJSON line."""
    return _encoder.encode(record) + b"\n"


def events_of(record: dict[str, Any]) -> list[wire.GameEvent]:
    """Return a record's events as wire events again (a legacy start gets seed 0)."""
    out: list[wire.GameEvent] = []
    for item in record["events"]:
        body = dict(item["event"])
        if item["type"] == "GameStarted":
            body.setdefault("seed", 0)
        out.append(msgspec.convert(body, wire.GameStreamEvent))
    return out


def replay_record(record: dict[str, Any]) -> engine.GameState:
    """Return the final state an exported game folds to through the engine."""
    return wire.fold(events_of(record))


# -- reading the store --------------------------------------------------------------------------


async def finished_games(
    pool: asyncpg.Pool, start: dt.datetime, end: dt.datetime, player: str | None = None
) -> list[str]:
    """Return the ids of the rated games that finished in [start, end), oldest first
    (only those ``player`` sat at, when given)."""
    store = PostgresEventStore(pool)
    ended = await store.streams_recording("GameFinished", start, end, flag="rated", player=player)
    return [stream_id.removeprefix("game-") for stream_id in ended]


async def records(pool: asyncpg.Pool, game_ids: Sequence[str]) -> AsyncIterator[dict[str, Any]]:
    """Yield the export record of each game, in order. The ratings come from the log too:
    the rating service records each rated game's changes as a `RatingsUpdated` event in the
    game's own rating stream, so nothing here reads another service's tables."""
    store = PostgresEventStore(pool)
    for game_id in game_ids:
        stored = await store.read(f"game-{game_id}")
        ratings: dict[str, dict[str, float]] = {}
        for event in await store.read(rating_stream(game_id)):
            update = REGISTRY.decode(event)
            if isinstance(update, RatingsUpdated):
                ratings.update(
                    {
                        c.player_id: {
                            "mu_before": c.mu_before,
                            "sigma_before": c.sigma_before,
                            "ordinal_before": c.ordinal_before,
                            "mu_after": c.mu_after,
                            "sigma_after": c.sigma_after,
                            "ordinal_after": c.ordinal_after,
                        }
                        for c in update.changes
                    }
                )
        yield game_record(game_id, stored, ratings, await stored_analysis(store, game_id))


async def stored_analysis(store: PostgresEventStore, game_id: str) -> msgspec.Raw | None:
    """Return a game's stored review (its canonical JSON as stored), None without one."""
    for event in await store.read(analysis_stream(game_id)):
        finished = REGISTRY.decode(event)
        if isinstance(finished, AnalysisFinished) and finished.ok:
            return finished.review
    return None


async def export_openspiel(pool: asyncpg.Pool, month: str, out: Path) -> dict[str, Any]:
    """Write a month's hands as OpenSpiel spades episodes, and the list of what was skipped."""
    from services.records import openspiel

    started = time.perf_counter()
    game_ids = await finished_games(pool, *month_bounds(month))
    out.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240  (a CLI's one-off write)
    hands_path = out / f"spades-openspiel-{month}.ndjson.gz"
    skipped_path = out / f"spades-openspiel-skipped-{month}.ndjson"
    count = games = 0
    skipped: list[dict[str, Any]] = []
    with gzip.open(hands_path, "wb", compresslevel=9) as hands:
        async for record in records(pool, game_ids):
            episodes, left = openspiel.hands_of(record["game_id"], events_of(record))
            games += 1
            skipped += left
            for episode in episodes:
                hands.write(encode_line(episode))
                count += 1
    skipped_path.write_bytes(b"".join(encode_line(s) for s in skipped))
    sums = "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
        for p in (hands_path, skipped_path)
    )
    (out / f"SHA256SUMS-openspiel-{month}").write_text(sums)
    return {
        "month": month,
        "games": games,
        "hands": count,
        "skipped": skipped,
        "bytes": hands_path.stat().st_size,
        "seconds": round(time.perf_counter() - started, 3),
        "files": [hands_path.name, skipped_path.name, f"SHA256SUMS-openspiel-{month}"],
    }


async def export_month(pool: asyncpg.Pool, month: str, out: Path) -> dict[str, Any]:
    """Write a month's files into ``out``; return what was written (games, bytes, seconds)."""
    started = time.perf_counter()
    start, end = month_bounds(month)
    game_ids = await finished_games(pool, start, end)
    out.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240  (a CLI's one-off write)
    games_path = out / f"spades-games-{month}.ndjson.gz"
    texts_path = out / f"spades-transcripts-{month}.tar.gz"
    count = 0
    with (
        gzip.open(games_path, "wb", compresslevel=9) as games,
        tarfile.open(texts_path, "w:gz") as texts,
    ):
        async for record in records(pool, game_ids):
            games.write(encode_line(record))
            text = transcripts.export(events_of(record)).encode()
            info = tarfile.TarInfo(f"{record['game_id']}.txt")
            info.size = len(text)
            info.mtime = int(dt.datetime.fromisoformat(record["finished_at"]).timestamp())
            texts.addfile(info, io.BytesIO(text))
            count += 1
    sums = "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
        for p in (games_path, texts_path)
    )
    (out / f"SHA256SUMS-{month}").write_text(sums)
    return {
        "month": month,
        "games": count,
        "bytes": games_path.stat().st_size + texts_path.stat().st_size,
        "seconds": round(time.perf_counter() - started, 3),
        "files": [games_path.name, texts_path.name, f"SHA256SUMS-{month}"],
    }


def run(args: argparse.Namespace) -> int:
    """Export a month; exit 2 on a bad month, a month not over yet, or no database."""
    import events.contracts.matchmaking  # noqa: F401  (registers every context the log may hold)
    from events.settings import no_database
    from services.runtime.config import Settings

    try:
        month_bounds(args.month)
    except BadMonth as exc:
        print(exc)
        return 2
    if not month_over(args.month):
        print(
            f"{args.month} is not over: no export yet (month_not_finished);"
            " games still finish in it"
        )
        return 2
    settings = Settings.from_env()
    if not settings.database_url:
        print(no_database())
        return 2

    async def go() -> dict[str, Any]:
        pool = await asyncpg.create_pool(settings.database_url, min_size=1, max_size=2)
        try:
            if args.format == "openspiel":
                return await export_openspiel(pool, args.month, Path(args.out))
            return await export_month(pool, args.month, Path(args.out))
        finally:
            await pool.close()

    done = asyncio.run(go())
    hands = f", {done['hands']} OpenSpiel hands" if "hands" in done else ""
    print(
        f"{done['month']}: {done['games']} games{hands}, {done['bytes']} bytes"
        f" in {done['seconds']} s -> {args.out}/ ({', '.join(done['files'])})"
    )
    for skip in done.get("skipped", []):
        where = "whole game" if skip["hand"] is None else f"hand {skip['hand']}"
        print(f"  skipped {skip['game_id']} {where}: {skip['reason']}")
    return 0
