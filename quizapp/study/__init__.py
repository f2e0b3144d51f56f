"""Self-study tracking: the SQLite progress store, FSRS scheduling, the study queue and stats."""
