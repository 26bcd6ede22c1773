"""The gateway's id helpers on the command path keep their meaning when computed faster.

`scoped_command_id` is the command id the table sees (a retry is recognised by it, so it may
never change for the same client id), and `misspelt_game_id` refuses every spelling of a UUID
but the canonical one: both now take a shortcut on the hot path, checked here against the
standard library's definition.
"""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from services.gateway.protocol import COMMAND_NAMESPACE, misspelt_game_id, scoped_command_id


@given(player=st.text(), game=st.uuids(), command=st.uuids())
def test_scoped_command_id_is_uuid5_of_player_game_and_command(
    player: str, game: uuid.UUID, command: uuid.UUID
) -> None:
    expected = uuid.uuid5(COMMAND_NAMESPACE, f"{player}\n{game}\n{command}")
    scoped = scoped_command_id(player, str(game), command)
    assert scoped == expected
    assert scoped.version == 5


@given(game=st.uuids())
def test_only_the_canonical_spelling_of_a_game_id_passes(game: uuid.UUID) -> None:
    canonical = str(game)
    assert misspelt_game_id(canonical) is None
    for spelt in (canonical.upper(), f"{{{canonical}}}", f"urn:uuid:{canonical}", game.hex):
        why = misspelt_game_id(spelt)
        assert why is not None
        assert canonical in why


def test_text_that_is_no_uuid_is_left_to_the_callers() -> None:
    assert misspelt_game_id("not-a-game") is None
    assert misspelt_game_id("") is None
