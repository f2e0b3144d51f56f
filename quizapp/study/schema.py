"""The progress database's schema, as an ordered list of migrations. Version = PRAGMA user_version."""

from __future__ import annotations

# Each entry upgrades the schema by one version; never edit a released entry, append a new one.
MIGRATIONS: tuple[str, ...] = (
    # 1: answers, FSRS card state, grade attempts
    """
    CREATE TABLE answers (
        id           INTEGER PRIMARY KEY,
        question_id  TEXT    NOT NULL,
        topic        TEXT    NOT NULL,
        answered_at  TEXT    NOT NULL,              -- ISO 8601, UTC
        correct      INTEGER,                       -- 1/0; NULL for a self-rated card
        rating       INTEGER NOT NULL,              -- FSRS rating 1 Again .. 4 Easy
        duration_ms  INTEGER,
        response     TEXT                           -- JSON of what the learner answered
    );
    CREATE INDEX answers_question ON answers(question_id);
    CREATE INDEX answers_time ON answers(answered_at);

    CREATE TABLE cards (
        question_id  TEXT PRIMARY KEY,
        topic        TEXT NOT NULL,
        due          TEXT NOT NULL,                 -- ISO 8601, UTC; mirrors the card JSON for queries
        card         TEXT NOT NULL,                 -- fsrs.Card.to_dict() as JSON
        reviewed_at  TEXT NOT NULL
    );
    CREATE INDEX cards_due ON cards(due);

    CREATE TABLE grades (
        id             INTEGER PRIMARY KEY,
        exercise_id    TEXT    NOT NULL,
        graded_at      TEXT    NOT NULL,
        file_path      TEXT,
        file_hash      TEXT,                        -- sha256 of the graded file
        device         TEXT,
        status         TEXT    NOT NULL,            -- pass | fail | error
        checks_passed  INTEGER NOT NULL,
        checks_total   INTEGER NOT NULL,
        duration_s     REAL,
        report         TEXT                         -- the grade JSON
    );
    CREATE INDEX grades_exercise ON grades(exercise_id);
    CREATE INDEX grades_time ON grades(graded_at);
    """,
    # 2: a stable id per answer and grade (a JSON import merges by it), mock interviews, settings
    """
    ALTER TABLE answers ADD COLUMN uid TEXT;
    UPDATE answers SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
    CREATE UNIQUE INDEX answers_uid ON answers(uid);

    ALTER TABLE grades ADD COLUMN uid TEXT;
    UPDATE grades SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
    CREATE UNIQUE INDEX grades_uid ON grades(uid);

    CREATE TABLE interviews (
        id           INTEGER PRIMARY KEY,
        uid          TEXT NOT NULL UNIQUE,
        started_at   TEXT NOT NULL,                 -- ISO 8601, UTC
        finished_at  TEXT NOT NULL,                 -- ISO 8601, UTC
        minutes      REAL NOT NULL,
        score        REAL NOT NULL,                 -- 0..1
        report       TEXT NOT NULL                  -- the interview's report card as JSON
    );
    CREATE INDEX interviews_time ON interviews(started_at);

    CREATE TABLE settings (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL                        -- JSON
    );
    """,
    # 3: what happened around an exercise besides its grades (a hint shown, the reference read):
    # with the grades, the history its review schedule is replayed from
    """
    CREATE TABLE exercise_events (
        id           INTEGER PRIMARY KEY,
        uid          TEXT NOT NULL UNIQUE,
        exercise_id  TEXT NOT NULL,
        kind         TEXT NOT NULL,                 -- hint | solution
        at           TEXT NOT NULL                  -- ISO 8601, UTC
    );
    CREATE INDEX exercise_events_exercise ON exercise_events(exercise_id);
    """,
    # 4: undo of a rating, and the learner's marks on questions (a flag with a note; suspended)
    """
    -- The question's cards row before this answer, as JSON {"topic", "due", "card", "reviewed_at"}
    -- ('null' when it had none): undoing the answer puts it back. NULL for older and imported answers.
    ALTER TABLE answers ADD COLUMN previous_card TEXT;

    CREATE TABLE question_marks (
        question_id  TEXT PRIMARY KEY,
        flagged      INTEGER NOT NULL DEFAULT 0,    -- 1: the learner doubts the question
        note         TEXT,                          -- the learner's note with the flag
        suspended    INTEGER NOT NULL DEFAULT 0,    -- 1: kept out of every session until unsuspended
        updated_at   TEXT    NOT NULL               -- ISO 8601, UTC; an import keeps the later mark
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
