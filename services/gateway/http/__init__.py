"""The gateway's HTTP API, one module per area; `services.gateway.app` assembles them.

- `security`: who is calling. The bearer-token middleware (``request.user``) and the guard
  of the routes that need an account.
- `common`: what the areas share. The gateway's resources, services' refusals as HTTP errors.
- `accounts`: `/api/accounts`, `/api/tokens` (login, renewal, logout), `/api/me`.
- `queue`: `/api/queue`, the caller's place in a ladder's matchmaking queue.
- `practice`: `/api/practice`, tables of the caller and bots.
- `friends`: `/api/friends`, friends' tables: open, share a code, join, swap, start.
- `rematch`: `/api/games/{game_id}/rematch`, the same seats again after an unrated game.
- `ladders`: `/api/ladders`, `/api/players/{player_id}`, `/api/games` (the live directory).
- `compete`: `/api/players/{player_id}/stats`, season leaderboards.
- `tourneys`: `/api/events`, duplicate events: create, list, show, enter, withdraw, start.
- `games`: `/api/games/{game_id}/...` (summaries, events, states, transcripts, a seat's own
  view) and `/api/transcripts` (a transcript replayed).
- `analysis`: `/api/games/{game_id}/analysis` (a finished game's stored review) and
  `/api/players/{player_id}/luck` (the luck-adjusted figure over his analysed games).
- `social`: `/api/social/...`: follows (with presence), blocks, mutes at a game, reports.
- `exports`: the open database, a player's rated games and a finished month's.
- `web`: the browser client's page and static files.
- `limits`: the request budgets (per address, per account, on logins).
- `openapi`: the document at `/schema`.

Every path is under `/api` (the client's page at `/`); handlers hold no game state: games
live in the table service, queues in matchmaking, ratings in the rating service, and the
gateway reads finished games from the event log.
"""

from __future__ import annotations

from typing import Any

from services.gateway.http.accounts import Accounts
from services.gateway.http.analysis import Analyses, Luck
from services.gateway.http.compete import Compete
from services.gateway.http.exports import Exports
from services.gateway.http.friends import Friends
from services.gateway.http.games import Games, Transcripts
from services.gateway.http.ladders import Ladders
from services.gateway.http.practice import Practice
from services.gateway.http.queue import Queue
from services.gateway.http.rematch import Rematches
from services.gateway.http.social import Social
from services.gateway.http.tourneys import EventPages, Events
from services.gateway.http.web import web_routes


def http_routes() -> list[Any]:
    """Return the route handlers of the HTTP API and the browser client, in the order the
    OpenAPI document lists them."""
    return [
        Accounts,
        Queue,
        Practice,
        Friends,
        Ladders,
        Compete,
        Events,
        EventPages,
        Games,
        Analyses,
        Luck,
        Rematches,
        Transcripts,
        Exports,
        Social,
        *web_routes(),
    ]


__all__ = ["http_routes"]
