"""The bot tier reviews a finished game (`cmd.bots.analyse`): a real worker process answers
over NATS with the review, refuses a game still in play, and the review's steps point at the
decisions they grade."""

from __future__ import annotations

import msgspec
import nats.errors
from nats.aio.client import Client as NATS

import engine
from engine.bot import play_game
from engine.par import HandPar
from events.contracts import game as wire
from events.contracts.bots import AnalyseTranscript, AnalysisReply
from events.subjects import Subjects
from services.bots.analysis import analyse_transcript, luck_of
from services.records import transcript as transcripts
from tests.infra import Processes, eventually
from tests.services.opskit import ops_port
from tests.services.test_bot_tier import serve

RULES = engine.Ruleset(target=200)


def finished_transcript() -> tuple[str, list[wire.GameEvent]]:
    played, _ = play_game(RULES, 8)
    opened = wire.TableOpened(
        game_id="review-g", ladder="casual", rated=False, players=("a", "b", "c", "d")
    )
    events = [opened, *(wire.to_wire(e) for e in played)]
    return transcripts.export(events), events


def test_a_finished_game_is_reviewed_with_steps_of_its_stream() -> None:
    text, _ = finished_transcript()
    reply = analyse_transcript(text, worlds=3, dd_tricks=2)
    assert reply.ok, reply
    review = msgspec.json.decode(reply.body)
    assert review["decisions"]
    read = transcripts.parse(text).events
    for decision in review["decisions"]:
        graded = read[decision["at"]]
        assert isinstance(graded, wire.BidPlaced | wire.CardPlayed)
        assert graded.seat == decision["seat"]
    # the par, on request: strong bots in every seat with the same cards
    with_par = msgspec.json.decode(analyse_transcript(text, worlds=2, dd_tricks=0, par_runs=1).body)
    scored = [e for e in read if isinstance(e, wire.HandScored)]
    assert [p["hand"] for p in with_par["par"]] == [e.hand for e in scored]
    assert [tuple(p["scored"]) for p in with_par["par"]] == [tuple(e.points) for e in scored]
    # same text, same review: byte for byte
    assert analyse_transcript(text, worlds=3, dd_tricks=2).body == reply.body


def test_a_game_in_play_is_refused_and_nothing_is_reviewed() -> None:
    _, events = finished_transcript()
    middle = next(i for i, e in enumerate(events) if isinstance(e, wire.TrickWon))
    reply = analyse_transcript(transcripts.export(events[: middle + 1]), worlds=3)
    assert not reply.ok
    assert reply.code == "game_not_finished"
    assert bytes(reply.body) == b"null"


async def test_a_bot_worker_answers_the_review_request(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    worker = serve(processes, "bots")
    await ops_port(processes, worker)
    text, _ = finished_transcript()
    request = msgspec.json.encode(AnalyseTranscript(text=text, worlds=3, dd_tricks=1))

    async def answered() -> AnalysisReply | None:
        # The worker subscribes just after its ops server listens: ask until it answers.
        try:
            msg = await nc.request(subjects.bots_analyse(), request, timeout=30)
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
            return None
        return msgspec.json.decode(msg.data, type=AnalysisReply)

    reply = await eventually(answered, within=300, what="the bot tier's review")
    assert reply is not None
    assert reply.ok, reply
    assert msgspec.json.decode(reply.body)["accuracy"]
    refused = await nc.request(
        subjects.bots_analyse(),
        msgspec.json.encode(AnalyseTranscript(text=text.split("\n", 30)[0] + "\n")),
        timeout=20,
    )
    answer = msgspec.json.decode(refused.data, type=AnalysisReply)
    assert not answer.ok
    assert answer.code


def test_the_margin_splits_into_the_cards_and_the_play_by_hand_worked_numbers() -> None:
    pars = [
        HandPar(1, par=(50.0, 20.0), scored=(-60, 40)),  # set: the cards gave +30, got -100
        HandPar(2, par=(30.0, 70.0), scored=(71, 50)),
    ]
    # side 0: result (-60 + 71) - (40 + 50) = -79; cards (50 + 30) - (20 + 70) = -10
    assert luck_of(pars) == [
        {"side": 0, "result": -79.0, "cards": -10.0, "play": -69.0},
        {"side": 1, "result": 79.0, "cards": 10.0, "play": 69.0},
    ]
    assert luck_of([]) == []
