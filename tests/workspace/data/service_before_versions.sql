-- The service's thread store (.skillrag/service.sqlite) as skillrag made it before schema versions
-- (commit 5d26c1f, user_version 0), dumped from a file built by that code.

CREATE TABLE turns (
    thread_key  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    question    TEXT NOT NULL,
    condensed   TEXT NOT NULL,
    answer      TEXT NOT NULL,
    skill       TEXT,
    citations   TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (thread_key, seq)
);
CREATE TABLE turn_scores (
    thread_key  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    scores      TEXT NOT NULL,
    scored_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (thread_key, seq)
);
CREATE TABLE service_runs (
    id          TEXT PRIMARY KEY,
    status      TEXT NOT NULL,
    case_id     TEXT NOT NULL,
    result      TEXT,
    error       TEXT,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at TEXT
);
