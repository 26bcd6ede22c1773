"""Generate `events/contracts/game_wire.py`: wire Structs of the engine's events and commands.

The engine's frozen dataclasses are the one declaration of every event and seat command
(`engine/model.py`) and of the redacted forms a seat may be told (`engine/audience.py`). This
reads their source (names, annotations, defaults, docstrings, in order) and
writes each one's msgspec twin, cards by name, so the two cannot drift apart; a test fails when
the checked-in module differs from what this writes now.

    python -m events.contracts.wiregen            # rewrite events/contracts/game_wire.py
    python -m events.contracts.wiregen --check    # exit 1 (and say so) when it is out of date

What the wire does differently from the engine is the small table below, and nothing else:
a `Card` annotation stays `Card` (on the wire a name, "QS"), the seat commands lose ``seat``
(the seat is whoever asks), ``GameStarted`` stores its rules as a dict, ``GameFinished``
carries the table's facts about the players, and a redacted form goes under the tag of the
event it stands for, a card it does not tell as None.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import sys
from pathlib import Path

import engine.audience
import engine.model

GENERATED = Path(__file__).with_name("game_wire.py")
MODEL = Path(engine.model.__file__)
AUDIENCE = Path(engine.audience.__file__)
COMMAND = "python -m events.contracts.wiregen"

# -- the wire's differences from the engine (the only hand-kept part) -----------------------------

RENAMED: dict[tuple[str, str], tuple[str, str]] = {
    ("GameStarted", "ruleset"): ("rules", "dict[str, RuleValue]"),
    ("SeatGameStarted", "ruleset"): ("rules", "dict[str, RuleValue]"),
}
"""(class, engine field) -> (wire field, wire annotation): the stored rules are a dict."""

EXTRA: dict[str, tuple[tuple[str, str], ...]] = {
    "GameFinished": (
        ('ladder: str = ""', 'The ladder the game was played on ("" off any ladder).'),
        ("rated: bool = False", "Whether ratings move."),
        ("players: tuple[str, ...] = ()", "Each seat's player id: consumers need no other stream."),
        ("abandoned: tuple[int, ...] = ()", "The seats a bot took over."),
    ),
}
"""Wire-only fields the table appends to an event, with their docstrings (each has a default:
the engine never sets them)."""

DROPPED = frozenset({"seat"})
"""Fields a seat command leaves out on the wire: the seat is whoever asks."""

SEAT_COMMANDS = (
    "PlaceBid",
    "DeclareBlindNil",
    "DeclineBlindNil",
    "PassCards",
    "PlayCard",
    "DrawCard",
    "Contribute",
)
"""The engine's seat commands in the order the wire's union (and the OpenAPI document) lists."""

LINE = 100
"""The project's line length (the generated module passes ``ruff format --check`` as written)."""

REDACTED = ("SeatGameStarted", "SeatHandDealt", "SeatCardDrawn", "SeatCardsPassed")
"""The redacted forms of `engine.audience`: each goes on the wire under the tag of the event it
stands for (its name without "Seat"), a card it leaves out (`NO_CARD`) as ``None``."""

NOT_TOLD = "NO_CARD"
"""The engine's default for a card a seat is not told; on the wire the field is None."""

WIRE_NAMES = frozenset({"int", "bool", "str", "tuple", "Card"})
"""The names an engine annotation may use to cross as it is."""

# -- reading the engine's source ------------------------------------------------------------------

HEADER = '''\
"""The engine's events, seat commands and redacted forms on the wire: Structs, cards by name.

Generated from engine/model.py and engine/audience.py by `{command}`;
do not edit. The engine's dataclasses are the one declaration; `events.contracts.wiregen` lists
what the wire does differently, and `events.contracts.game` re-exports these classes and
bridges them to the engine.
"""
# Generated from engine/model.py and engine/audience.py: `{command}`.

from __future__ import annotations

import msgspec

Card = str
"""A card by name: rank 23456789TJQKA then suit CDHS ("QS", "TH"), or "LJ" / "BJ"."""

RuleValue = int | bool | str


class GameEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of every event in a game stream; the tag is the class name."""


class SeatCommand(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of what a seat may ask; the seat itself comes from who is asking, never the body."""
'''


class WireGenError(ValueError):
    """An engine class has a field the wire cannot carry as it is (add it to the table)."""


def card_depth(annotation: ast.expr) -> int:
    """Return how deep cards sit in an annotation: 0 none, 1 `Card`, 2 a tuple of them, ..."""
    if isinstance(annotation, ast.Name):
        return 1 if annotation.id == "Card" else 0
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple):
        inner = card_depth(annotation.slice.elts[0])
        return inner + 1 if inner else 0
    return 0


def _literal(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool | int) or value is None or value == ():
        return repr(value)
    raise WireGenError(f"no wire literal for the default {value!r}")


def _class_lines(
    node: ast.ClassDef, cls: type, source: str, base: str, depths: dict[tuple[str, str], int]
) -> list[str]:
    name = node.name
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    options = "frozen=True, kw_only=True"
    if base == "msgspec.Struct":
        options += f', tag="{name.removeprefix("Seat")}"'
    lines = ["", "", f"class {name}({base}, {options}):"]
    body = list(node.body)
    fields: list[str] = []
    dropping = False
    for index, stmt in enumerate(body):
        segment = ast.get_source_segment(source, stmt)
        assert segment is not None
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            if index == 0:
                lines.append(f"    {segment}")
            elif not dropping:
                fields.append(f"    {segment}")  # the docstring of the field above
            continue
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            raise WireGenError(f"{name}: only annotated fields and docstrings can cross")
        field = stmt.target.id
        dropping = base == "SeatCommand" and field in DROPPED
        if dropping:
            continue
        wire_name, annotation = RENAMED.get(
            (name, field), (field, ast.get_source_segment(source, stmt.annotation))
        )
        if (name, field) not in RENAMED:
            used = {n.id for n in ast.walk(stmt.annotation) if isinstance(n, ast.Name)}
            if used - WIRE_NAMES:
                raise WireGenError(f"{name}.{field}: no wire form for {sorted(used - WIRE_NAMES)}")
        depth = card_depth(stmt.annotation)
        if depth:
            depths[name, field] = depth
        if stmt.value is None:
            default = ""
        elif ast.get_source_segment(source, stmt.value) == NOT_TOLD and annotation == "Card":
            annotation, default = "Card | None", " = None"
        else:
            default = f" = {_literal(defaults[field])}"
        fields.append(f"    {wire_name}: {annotation}{default}")
    for declaration, doc in EXTRA.get(name, ()):
        fields += [f"    {declaration}", f'    """Added by the table. {doc}"""']
    if fields:
        lines += ["", *fields]
    return lines


def _union(name: str, members: list[str], doc: str) -> list[str]:
    joined = " | ".join(members)
    if len(f"{name} = {joined}") <= LINE:
        lines = [f"{name} = {joined}"]
    elif len(f"    {joined}") <= LINE:
        lines = [f"{name} = (", f"    {joined}", ")"]
    else:
        lines = [f"{name} = (", f"    {members[0]}", *(f"    | {m}" for m in members[1:]), ")"]
    return ["", "", *lines, f'"""{doc}"""']


def _load(
    source: str, path: Path, module: str
) -> tuple[dict[str, object], dict[str, ast.ClassDef]]:
    """Return the namespace a module's source runs to and its class definitions."""
    namespace: dict[str, object] = {"__name__": module}
    exec(compile(source, str(path), "exec"), namespace)  # the classes of *this* source
    tree = ast.parse(source)
    return namespace, {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def render(source: str | None = None, audience: str | None = None) -> str:
    """Return the text of `events/contracts/game_wire.py` for the engine's model and audience
    sources (default: the engine's own `engine/model.py` and `engine/audience.py`)."""
    source = MODEL.read_text() if source is None else source
    audience = AUDIENCE.read_text() if audience is None else audience
    namespace, nodes = _load(source, MODEL, engine.model.__name__)
    told, told_nodes = _load(audience, AUDIENCE, engine.audience.__name__)
    events = list(namespace["EVENT_TYPES"])  # type: ignore[call-overload]
    seat_commands = {c.__name__ for c in namespace["SeatCommand"].__args__}  # type: ignore[attr-defined]
    if seat_commands != set(SEAT_COMMANDS):
        raise WireGenError(f"SEAT_COMMANDS must list the engine's: {sorted(seat_commands)}")
    depths: dict[tuple[str, str], int] = {}
    lines = [HEADER.format(command=COMMAND).rstrip("\n")]
    lines += ["", "", "# -- events " + "-" * 88]
    for name in events:
        lines += _class_lines(nodes[name], namespace[name], source, "GameEvent", depths)  # type: ignore[arg-type]
    lines += _union("EngineEvent", events, "Every event the engine decides (in its order).")
    lines += ["", "", "# -- what a seat may be told of an event that holds secrets " + "-" * 39]
    for name in REDACTED:
        lines += _class_lines(told_nodes[name], told[name], audience, "msgspec.Struct", depths)  # type: ignore[arg-type]
    lines += ["", "", "# -- seat commands " + "-" * 81]
    for name in SEAT_COMMANDS:
        lines += _class_lines(nodes[name], namespace[name], source, "SeatCommand", depths)  # type: ignore[arg-type]
    lines += _union("AnySeatCommand", list(SEAT_COMMANDS), "Everything a seat may ask.")
    lines += ["", "", "CARD_DEPTH: dict[tuple[str, str], int] = {"]
    lines += [f'    ("{c}", "{f}"): {d},' for (c, f), d in depths.items()]
    lines += ["}", '"""(class, field) -> how deep its cards sit: 1 a card, 2 a tuple, 3 tuples."""']
    lines += ["", "WIRE_NAMES: dict[tuple[str, str], str] = {"]
    lines += [f'    ("{c}", "{f}"): "{w}",' for (c, f), (w, _) in RENAMED.items()]
    lines += ["}", '"""(class, engine field) -> its wire field, where the names differ."""']
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the generated module; return the exit status."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the module is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not GENERATED.exists() or GENERATED.read_text() != text:
            print(f"{GENERATED} is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    GENERATED.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
