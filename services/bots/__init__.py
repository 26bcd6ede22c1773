"""The bot tier: the platform's expensive thinking, off every serving process.

Bot seats' moves (practice bots, turn-timeout takeovers, abandoned seats), practice hints
and transcript replays run here, in replicas of their own that share one NATS queue group
(`events.contracts.bots`). A table never searches: it asks, waits a bounded time, and plays
the baseline's move itself when no worker answers.
"""
