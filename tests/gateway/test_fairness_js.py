"""The browser's deal check (web/js/fairness.js) run in Node against games the engine dealt:
it accepts them and rejects one altered card, seed or contribution."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

import engine
from events.contracts import game as wire
from services.records.fairness import bot_game
from services.records.public import shown

MODULE = Path(__file__).resolve().parents[2] / "services" / "gateway" / "web" / "js" / "fairness.js"
CHECK = """
import { verifyDeals } from %s;
const games = JSON.parse(await new Promise((ok) => {
  let text = "";
  process.stdin.on("data", (d) => (text += d));
  process.stdin.on("end", () => ok(text));
}));
const out = [];
for (const g of games) out.push(await verifyDeals(g.events, g.mine));
console.log(JSON.stringify(out));
"""


def node() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    if found is None:
        pytest.fail("Node.js runs the browser's deal check here: apt-get install nodejs")
    return found


def check(games: list[dict[str, object]]) -> list[dict[str, object]]:
    script = CHECK % json.dumps(MODULE.as_uri())
    done = subprocess.run(
        [node(), "--input-type=module", "-e", script],
        input=json.dumps(games),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: list[dict[str, object]] = json.loads(done.stdout)
    return result


def public(rules: engine.Ruleset, seed: int, contributors: int) -> tuple[list[object], str]:
    rng = random.Random(seed)
    contributions = {s: rng.randbytes(32).hex() for s in range(contributors)}
    events = bot_game(rules, rng.randbytes(32).hex(), contributions, rng)
    out = [msgspec.to_builtins(shown(wire.to_wire(e), True)) for e in events]
    return out, contributions.get(0, "")


@pytest.mark.parametrize(
    "rules",
    [
        engine.Ruleset(target=150),
        engine.Ruleset(players=3, target=150),
        engine.Ruleset(jokers=True, target=150),
        engine.Ruleset(jokers=True, deuces_high=True, target=150),
        engine.Ruleset(players=2, deal="draw", blind_nil=False, blind_nil_exchange=0, target=100),
        engine.Ruleset(players=2, blind_nil=False, blind_nil_exchange=0, target=100),
        engine.Ruleset.from_options({"players": 3, "jokers": True, "target": 150}),
        engine.Ruleset.from_options({"players": 5, "target": 150}),
        engine.Ruleset.from_options({"players": 5, "jokers": True, "target": 150}),
    ],
    ids=[
        "ladder",
        "cut-throat",
        "jokers",
        "deuces-high",
        "heads-up-draw",
        "heads-up",
        "three-jokers",
        "five",
        "five-jokers",
    ],
)
def test_the_browser_check_accepts_real_deals_and_rejects_one_change(
    rules: engine.Ruleset,
) -> None:
    events, mine = public(rules, 7, 2 if rules.players > 2 else 1)
    dealt = next(i for i, e in enumerate(events) if e["type"] == "HandDealt")  # type: ignore[index]
    altered = json.loads(json.dumps(events))
    deal = altered[dealt]
    if deal["stock"]:
        deal["stock"][0], deal["stock"][1] = deal["stock"][1], deal["stock"][0]
    else:
        deal["hands"][0][0], deal["hands"][1][0] = deal["hands"][1][0], deal["hands"][0][0]
    reseeded = json.loads(json.dumps(events))
    for e in reseeded:
        if e["type"] == "SeedRevealed":
            e["server_seed"] = "0" * 64
    results = check(
        [
            {"events": events, "mine": mine},
            {"events": altered, "mine": mine},
            {"events": reseeded, "mine": mine},
            {"events": events, "mine": "ab" * 32},
        ]
    )
    hands = sum(e["type"] == "HandDealt" for e in events)  # type: ignore[index]
    assert results[0] == {"ok": True, "hands": hands}
    assert results[1]["ok"] is False
    assert "hand 1" in str(results[1]["reason"])
    assert results[2] == {"ok": False, "reason": "the revealed seed does not match the commitment"}
    assert results[3] == {"ok": False, "reason": "your contribution is not the one recorded"}
