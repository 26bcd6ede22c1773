"""Rematch against the real gateway, table and bots: when every person who played accepts, the
same seats and rules play again with the deal passed on; each refusal has its own code and
changes nothing; the players are told over the WebSocket."""

from __future__ import annotations

import asyncio
import uuid

import httpx

import engine
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.table.openings import opening_events
from tests.gateway.conftest import register_and_login
from tests.gateway.test_friends import platform, refused
from tests.gateway.test_leave import bearer, logged
from tests.gateway.wsclient import WsClient
from tests.infra import Processes

ONE_HAND = {"hand_cap": 1}
"""A game of one hand: it finishes after 13 tricks whatever the score."""


def last_dealer(events: list[wire.GameEvent]) -> int:
    return [e.dealer for e in events if isinstance(e, wire.HandDealt)][-1]


async def game_streams(store: PostgresEventStore) -> int:
    """Return how many games the store holds."""
    count: int = await store.pool.fetchval(
        "SELECT count(*) FROM spades_streams WHERE stream_id LIKE 'game-%'"
    )
    return count


async def test_a_practice_rematch_and_every_refusal(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        token = await register_and_login(http, "ann")
        h = bearer(token)
        other = bearer(await register_and_login(http, "bob"))
        opened = await http.post("/api/practice", json={"rules": ONE_HAND}, headers=h)
        game_id = opened.json()["game_id"]
        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h),
            409,
            "game_not_finished",
        )
        player = WsClient(gateway.ws_url, token, batch=True)
        await player.connect()
        await player.play(game_id)
        finished = await logged(event_store, game_id)
        assert isinstance(finished[-1], wire.GameFinished)

        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={}, headers=other),
            403,
            "not_a_player",
        )
        refused(
            await http.post(f"/api/games/{uuid.uuid4()}/rematch", json={}, headers=h),
            404,
            "unknown_game",
        )
        refused(await http.post(f"/api/games/{game_id}/rematch", json={}), 401, "unauthenticated")
        status = await http.get(f"/api/games/{game_id}/rematch", headers=h)
        assert status.json() == {
            "game_id": game_id,
            "players": ["ann"],
            "accepted": [],
            "declined": None,
            "new_game_id": None,
        }

        accepted = await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h)
        assert accepted.status_code == 200, accepted.text
        new_game_id = accepted.json()["new_game_id"]
        assert accepted.json()["accepted"] == ["ann"]
        told = await player.expect("rematch")
        assert told["new_game_id"] == new_game_id
        new = await logged(event_store, new_game_id)
        old_opening, new_opening = finished[0], new[0]
        assert isinstance(old_opening, wire.TableOpened)
        assert isinstance(new_opening, wire.TableOpened)
        assert new_opening.players == old_opening.players
        assert new_opening.bots == old_opening.bots
        assert new_opening.ladder == "practice"
        started = next(e for e in new if isinstance(e, wire.GameStarted))
        old_started = next(e for e in finished if isinstance(e, wire.GameStarted))
        assert started.rules == old_started.rules
        assert started.dealer == (last_dealer(finished) + 1) % 4  # the deal passes on

        games_before = await game_streams(event_store)
        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h),
            409,
            "already_accepted",
        )
        assert (await http.get(f"/api/games/{game_id}/rematch", headers=h)).json()[
            "new_game_id"
        ] == new_game_id
        # nothing more opened (the new game's own stream grows as its bots bid: count games)
        assert await game_streams(event_store) == games_before

        # the rematch is played out and declined: no rematch after a decline
        await player.play(new_game_id)
        declined = await http.post(
            f"/api/games/{new_game_id}/rematch", json={"accept": False}, headers=h
        )
        assert declined.status_code == 200
        assert declined.json()["declined"] == "ann"
        assert declined.json()["new_game_id"] is None
        refused(
            await http.post(f"/api/games/{new_game_id}/rematch", json={}, headers=h),
            409,
            "rematch_declined",
        )

        # a player who left: no rematch with the same seats
        left = (await http.post("/api/practice", json={"rules": ONE_HAND}, headers=h)).json()[
            "game_id"
        ]
        assert (await http.post(f"/api/games/{left}/leave", json={}, headers=h)).status_code == 200
        refused(
            await http.post(f"/api/games/{left}/rematch", json={}, headers=h), 409, "player_left"
        )
        await player.close()


async def test_a_ranked_game_has_no_rematch(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = bearer(await register_and_login(http, "cal"))
        game_id = str(uuid.uuid4())
        opened = wire.TableOpened(
            game_id=game_id,
            ladder="standard",
            rated=True,
            players=("cal", "dee", "eli", "fox"),
        )
        await event_store.append(stream_of(game_id), 0, [REGISTRY.new_event(opened)])
        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h), 409, "rated_game"
        )
        assert len(await event_store.read(stream_of(game_id))) == 1


async def test_friends_accept_a_rematch_and_play_the_same_seats_again(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        tokens = {n: await register_and_login(http, n) for n in ("gus", "hap")}
        h = {n: bearer(t) for n, t in tokens.items()}
        seats = [
            {"kind": "bot"},
            {"kind": "host"},
            {"kind": "bot"},
            {"kind": "player", "player_id": "hap"},
        ]
        code = (
            await http.post(
                "/api/friends", json={"rules": ONE_HAND, "seats": seats}, headers=h["gus"]
            )
        ).json()["code"]
        joined = await http.post(f"/api/friends/{code}/join", json={}, headers=h["hap"])
        assert joined.status_code == 200, joined.text
        started = await http.post(f"/api/friends/{code}/start", json={}, headers=h["gus"])
        assert started.status_code == 200, started.text  # a fresh clone once had no game_id
        game_id = started.json()["game_id"]
        clients = {n: WsClient(gateway.ws_url, t, batch=True) for n, t in tokens.items()}
        for client in clients.values():
            await client.connect()
        await asyncio.gather(*(c.play(game_id) for c in clients.values()))
        finished = await logged(event_store, game_id)

        first = await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h["hap"])
        assert first.json()["accepted"] == ["hap"]
        assert first.json()["new_game_id"] is None
        offer = await clients["gus"].expect("rematch")  # gus is asked
        assert offer["accepted"] == ["hap"]
        assert offer["players"] == ["gus", "hap"]
        both = await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h["gus"])
        new_game_id = both.json()["new_game_id"]
        assert new_game_id
        for client in clients.values():
            while (told := await client.expect("rematch")).get("new_game_id") is None:
                pass
            assert told["new_game_id"] == new_game_id
        new = await logged(event_store, new_game_id)
        opening = new[0]
        assert isinstance(opening, wire.TableOpened)
        assert opening.players == ("bot:0", "gus", "bot:2", "hap")
        assert opening.bots == (0, 2)
        assert opening.ladder == "casual"
        assert not opening.rated
        started = next(e for e in new if isinstance(e, wire.GameStarted))
        assert started.dealer == (last_dealer(finished) + 1) % 4
        for client in clients.values():
            await client.close()


async def test_two_last_acceptances_at_once_open_one_game(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = {n: bearer(await register_and_login(http, n)) for n in ("ida", "jay", "kit")}
        # a finished unlisted friends' game of ida and jay (and two bots), as the table logs it
        game_id = str(uuid.uuid4())
        players = ("ida", "bot:1", "jay", "bot:3")
        events = opening_events(
            game_id,
            ladder="casual",
            rated=False,
            players=players,
            bots=(1, 3),
            rules=engine.Ruleset(target=200),
            seed=0,
            turn_seconds=25.0,
            server_seed="cd" * 32,
            unlisted=True,
        )
        dealt = next(e for e in events if isinstance(e, wire.HandDealt))
        end = wire.GameFinished(
            winner=0, reason="target", scores=(210, 40), ladder="casual", players=players
        )
        await event_store.append(
            stream_of(game_id), 0, [REGISTRY.new_event(e) for e in [*events, end]]
        )
        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h["kit"]),
            403,
            "not_a_player",
        )
        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={"accept": 1}, headers=h["ida"]),
            400,
            "malformed",
        )
        answers = await asyncio.gather(
            *(
                http.post(f"/api/games/{game_id}/rematch", json={}, headers=h[n])
                for n in ("ida", "jay")
            )
        )
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        opened = [a.json()["new_game_id"] for a in answers if a.json().get("new_game_id")]
        assert len(opened) == 1  # the later of the two opened it, the earlier waited for it
        new_game_id = opened[0]
        status = (await http.get(f"/api/games/{game_id}/rematch", headers=h["ida"])).json()
        assert sorted(status["accepted"]) == ["ida", "jay"]
        assert status["new_game_id"] == new_game_id
        new = await logged(event_store, new_game_id)
        opening = new[0]
        assert isinstance(opening, wire.TableOpened)
        assert opening.players == players
        assert opening.unlisted  # the host's choice holds for the rematch too
        started = next(e for e in new if isinstance(e, wire.GameStarted))
        assert started.rules["target"] == 200
        assert started.dealer == (dealt.dealer + 1) % 4
        refused(
            await http.post(f"/api/games/{game_id}/rematch", json={}, headers=h["jay"]),
            409,
            "already_accepted",
        )
