"""`events.ids.uuid5` is the standard library's `uuid.uuid5`, only cheaper: the same id for
every namespace and name (command and event ids derived from it must never change)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from events.ids import uuid5


@given(namespace=st.uuids(), name=st.text())
def test_uuid5_is_the_standard_librarys(namespace: uuid.UUID, name: str) -> None:
    made = uuid5(namespace, name)
    assert made == uuid.uuid5(namespace, name)
    assert made.version == 5
    assert made.variant == uuid.RFC_4122
