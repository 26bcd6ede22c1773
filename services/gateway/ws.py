"""The WebSocket protocol at `/ws`: play and watch games (PROTOCOL.md has examples).

Every message is one JSON text frame with a ``type`` (with ``/ws?batch=1``, every frame the server
sends is a JSON array of the messages ready at once, in order); both directions are msgspec Structs
(`services.gateway.protocol`, and `events.contracts.audience` for the messages about a game), so
what is declared is exactly what is accepted and sent. The gateway is a forwarder: what a seat or a
spectator is told of a game (events, hands, views, turns, clocks) is decided and encoded by the
game's table, once per audience; the gateway sends those bytes as they are
(`services.gateway.rooms`, `services.gateway.watch`; the connection: `services.gateway.session`).

Client to server:

- ``auth {token}``: first, within 10 s: the access token of POST /api/tokens. It may be sent
  again later with a fresh token for the same account (tokens are short-lived). Watching needs
  no account: without ``auth``, ``subscribe`` (up to ANONYMOUS_WATCHES games at once),
  ``view`` and ``unsubscribe`` work as a spectator (one trick behind, no hands, the same view
  as any account without a seat there); ``command`` answers ``unauthenticated``. A
  connection that neither authenticates nor watches a game within 10 s is closed; at most
  SPADES_WS_ANONYMOUS_PER_ADDRESS connections of one address watch without an account.
  Connections are capped per address (SPADES_WS_PER_ADDRESS) and per account
  (SPADES_WS_PER_ACCOUNT): one too many gets ``too_many_connections`` and close 1008.
- ``subscribe {game_id, last_seq?, hints?}``: watch a game: as its seat if the account sits at
  it, else as a spectator. Without ``last_seq`` the server sends ``view`` (a snapshot at seq
  N) then every event after N. With ``last_seq`` it sends exactly the events after it: a
  client that reconnects resumes with no gap and no duplicate. ``hints``: add the bot tier's
  suggestion to ``your_turn`` (asked once a turn), at a practice table only
  (`events.contracts.game.hints_allowed`: the server decides from the game's kind; at a
  rated or casual table the flag is ignored).
- ``command {game_id, command_id, command}``: act at the seat: ``command`` is one of
  PlaceBid {tricks, blind?}, DeclareBlindNil, DeclineBlindNil, PassCards {cards},
  PlayCard {card}, DrawCard {keep} (``type`` names it; the seat is always the sender's own).
  ``command_id`` (a UUID the client makes) makes a retry safe: the same id is applied once.
- ``view {game_id}``: a fresh snapshot; ``unsubscribe {game_id}``; ``ping``.

Once the connection's access token has expired, only ``auth`` (with a fresh token) and
``ping`` are answered; anything else gets ``token_expired``. Watches opened before the expiry
keep streaming (the client renews its token before it runs out).

Server to client:

- ``welcome {player_id, bot, expires_at}``, ``subscribed {game_id, role, seat, players}``.
- ``view {game_id, seq, view}``: the seat's view at seq (own hand only, legal commands).
  Replace your state with it and ignore events with a seq at or below it.
- ``event {game_id, seq, event, hand?}``: one event of the game as this seat may know it
  (`engine.audience.redact`: no seed, no other seat's cards before they are played,
  exchanged cards only to giver and receiver); ``seq`` is the event's number in the game,
  from 1, with no gap. ``hand`` is the seat's whole hand whenever it changes (deal, blind
  choice, exchange, play); a blind-nil candidate gets none until he has chosen. Spectators
  are kept one trick behind: they receive events in batches ending with a completed trick
  (or the game's end).
- ``your_turn {game_id, seq, legal, suggestion?, deadline}``: the seat is on turn; ``legal``
  lists every command it may send, ``deadline`` (unix seconds) is when the turn timer lets the
  bot act for it (null at an untimed practice table: no timer).
- ``clock {game_id, seq, seat, deadline, now, bot?}``: to every watcher (seats and spectators):
  ``seat`` is on turn after event ``seq`` until ``deadline`` (the table's turn timer, as the
  table recorded it in the game's log), ``now`` the server's time when it was built; sent on
  subscribing, on a fresh ``view`` and after every move (each time the turn passes). There
  are no ticks: count down locally from ``deadline - now``. ``bot``: a bot holds the seat.
- ``match_found {game_id, match_id, ladder, seat, players}``: the account was matched in a
  ranked game: to each of its connections when the match forms, and right after ``auth`` while
  it is seated in a live ranked game (what GET /api/queue answers). Once per game per
  connection.
- ``ack {game_id, command_id, seq, code}``: ``applied`` (its events end at seq) or
  ``already_applied`` (a retried command id: nothing new happened).
- ``error {code, message, game_id?, command_id?}``: ``code`` names the reason: ``malformed``,
  ``unknown_type``, ``frame_too_large``, ``binary_frame``, ``rate_limited``,
  ``unauthenticated``, ``token_expired``, ``token_invalid``, ``account_mismatch``,
  ``unknown_game``, ``not_subscribed``, ``unavailable``, or the table's rule codes
  (``out_of_turn``, ``must_follow_suit``, ``not_your_seat``, ...). An error never closes the
  connection, except ``auth_timeout`` (close 1008, policy violation) and a client too slow
  to read what it is sent (close 1013: reconnect and resume with ``last_seq``). A frame nested
  too deeply to decode is ``malformed`` like any other. Frames over 64 KiB are refused by the server
  itself (close 1009).
"""

from __future__ import annotations

from typing import Any

from litestar import WebSocket, websocket
from litestar.datastructures import State

from services.gateway.session import ANONYMOUS_WATCHES, RATE_BURST, Session

__all__ = ["ANONYMOUS_WATCHES", "RATE_BURST", "play"]


@websocket("/ws")
async def play(socket: WebSocket[Any, Any, Any], state: State) -> None:
    """The WebSocket endpoint (see the module docstring for the protocol)."""
    await Session(state.gateway, state.rooms, socket).run()
