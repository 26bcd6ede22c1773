"""The records of finished games and the formats they are read in: one owner for each.

- `transcript` a stored game's plain-text transcript: the adapter between its events and the
               format the engine defines (`engine.transcript`).
- `public`     a game as the public may see it: face up once finished, a spectator's view live.
- `fairness`   `spades verify GAME`: every deal recomputed from the revealed seed.
- `export`     `spades export --month`: the open database of finished rated games.
- `openspiel`  each hand of a finished game as OpenSpiel ``spades`` action sequences.

These read the event log (through `events.pgstore`) and fold it with the engine; they write
nothing. The gateway serves them over HTTP, the CLI from the command line.
"""
