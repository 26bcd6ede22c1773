"""`spades reports` as an operator reads it: each report with the talk around the message,
the reported one marked, text printed escaped (a message cannot drive a terminal)."""

from __future__ import annotations

from services.gateway.reports import InContext, Line, render
from services.gateway.social import Report


def test_a_report_is_printed_with_its_context_and_escaped_text() -> None:
    report = Report(
        report_id=7,
        reporter="dan",
        reported="bob",
        game_id="0b6c0000-0000-4000-8000-000000000001",
        seq=12,
        reason="abuse",
        note="again",
        created_at="2026-11-28T02:00:00+00:00",
        closed=False,
    )
    talk = [
        Line(seq=9, player_id="ann", to="partner", said="I can take 4", reported=False),
        Line(seq=12, player_id="bob", to="table", said='\x1b[2Jgotcha "you"', reported=True),
    ]
    text = render([InContext(report=report, ladder="casual", rated=False, talk=talk)])
    lines = text.splitlines()
    assert lines[0] == "#7 [open] 2026-11-28T02:00:00+00:00 dan reports bob: abuse (again)"
    assert lines[1] == "  game 0b6c0000-0000-4000-8000-000000000001 (casual, unrated)"
    assert lines[2] == '         9 ann to partner: "I can take 4"'
    assert lines[3] == '  >>    12 bob to table: "\\u001b[2Jgotcha \\"you\\""'
    assert "\x1b" not in text
    assert render([]) == "no open reports\n"
