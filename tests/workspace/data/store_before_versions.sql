-- The workspace store (.skillrag/store.sqlite) as skillrag made it before schema versions
-- (commit 5d26c1f, user_version 0): the schema SQLite recorded, dumped from a store built by that
-- code with every table opened. tests/workspace/test_schema.py opens it with the current code.

CREATE TABLE articles (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_path  TEXT NOT NULL,
    source_tag   TEXT NOT NULL DEFAULT '',
    source_root  TEXT NOT NULL,
    sections     TEXT NOT NULL DEFAULT '[]',
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
    changed      INTEGER NOT NULL DEFAULT 0,
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    url          TEXT,
    skill        TEXT,
    parent       TEXT,
    heading_path TEXT NOT NULL DEFAULT '[]',
    parent_offset INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX articles_parent ON articles (parent);
CREATE TABLE corpus_stamp (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 0
);
CREATE TRIGGER articles_stamp_insert AFTER INSERT ON articles
BEGIN UPDATE corpus_stamp SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER articles_stamp_delete AFTER DELETE ON articles
BEGIN UPDATE corpus_stamp SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER articles_stamp_update_3659af63 AFTER UPDATE ON articles WHEN OLD.id IS NOT NEW.id OR OLD.title IS NOT NEW.title OR OLD.body IS NOT NEW.body OR OLD.content_hash IS NOT NEW.content_hash OR OLD.source_path IS NOT NEW.source_path OR OLD.source_tag IS NOT NEW.source_tag OR OLD.source_root IS NOT NEW.source_root OR OLD.sections IS NOT NEW.sections OR OLD.status IS NOT NEW.status OR OLD.url IS NOT NEW.url OR OLD.skill IS NOT NEW.skill OR OLD.parent IS NOT NEW.parent OR OLD.heading_path IS NOT NEW.heading_path OR OLD.parent_offset IS NOT NEW.parent_offset BEGIN UPDATE corpus_stamp SET revision = revision + 1 WHERE id = 1; END;
CREATE TABLE tool_sessions (
    id          TEXT PRIMARY KEY,
    case_id     TEXT NOT NULL,
    skill       TEXT NOT NULL,
    surface     TEXT NOT NULL DEFAULT '',
    as_of       TEXT NOT NULL,
    max_queries INTEGER NOT NULL,
    max_fetches INTEGER NOT NULL,
    max_saves   INTEGER NOT NULL,
    queries     INTEGER NOT NULL DEFAULT 0,
    fetches     INTEGER NOT NULL DEFAULT 0,
    saves       INTEGER NOT NULL DEFAULT 0,
    accepted    INTEGER NOT NULL DEFAULT 0,
    current     INTEGER NOT NULL DEFAULT 0,
    private     INTEGER NOT NULL DEFAULT 0,
    started_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX tool_sessions_case ON tool_sessions (skill, case_id, current);
CREATE TABLE tool_session_calls (
    session_id TEXT NOT NULL REFERENCES tool_sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    tool       TEXT NOT NULL,
    target     TEXT NOT NULL DEFAULT '',
    charged    TEXT,
    ok         INTEGER NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE tool_session_saves (
    session_id TEXT NOT NULL REFERENCES tool_sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    accepted   INTEGER NOT NULL,
    at         TEXT NOT NULL,
    receipt    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE search_vectors (
    embedder  TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (embedder, text_hash)
);
CREATE TABLE wiki_journal (
    article_id    TEXT PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('applying', 'done', 'failed')),
    action        TEXT,
    page_id       TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    reasons       TEXT NOT NULL DEFAULT '[]',
    payload       TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE wiki_journal_rebuild (
    article_id    TEXT PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('applying', 'done', 'failed')),
    action        TEXT,
    page_id       TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    reasons       TEXT NOT NULL DEFAULT '[]',
    payload       TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE wiki_agent_builds (
    build_id    TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    variant     TEXT NOT NULL,
    scope       TEXT,
    lease_s     REAL NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('open', 'finished', 'discarded')),
    finished_at REAL,
    structure_key TEXT,
    structure     TEXT,
    summary       TEXT
);
CREATE TABLE wiki_agent_claims (
    build_id   TEXT NOT NULL,
    key        TEXT NOT NULL,
    claim      TEXT NOT NULL UNIQUE,
    agent      TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    epoch      INTEGER NOT NULL DEFAULT 0,
    seen       TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (build_id, key)
);
CREATE TABLE wiki_agent_events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    build_id TEXT NOT NULL,
    at       REAL NOT NULL,
    agent    TEXT,
    claim    TEXT,
    key      TEXT,
    event    TEXT NOT NULL CHECK (event IN ('claimed', 'released', 'expired', 'rejected', 'accepted')),
    page_id  TEXT,
    reasons  TEXT
);
CREATE TABLE review_actions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id       TEXT NOT NULL,
    output_sha256 TEXT NOT NULL,
    action        TEXT NOT NULL CHECK (action IN ('approve', 'reject', 'edit')),
    version       INTEGER NOT NULL CHECK (version >= 0),
    reviewer      TEXT NOT NULL,
    at            TEXT NOT NULL,
    comment       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX review_actions_case ON review_actions (case_id, output_sha256, id);
CREATE TABLE review_guidance (
    case_id       TEXT NOT NULL,
    output_sha256 TEXT NOT NULL,
    version       INTEGER NOT NULL CHECK (version >= 1),
    guidance      TEXT NOT NULL,
    action_id     INTEGER NOT NULL REFERENCES review_actions (id),
    PRIMARY KEY (case_id, output_sha256, version)
);
CREATE TABLE review_snippets (
    case_id        TEXT NOT NULL,
    output_sha256  TEXT NOT NULL,
    version        INTEGER NOT NULL CHECK (version >= 1),
    position       INTEGER NOT NULL CHECK (position >= 0),
    source_article TEXT NOT NULL,
    source_title   TEXT NOT NULL,
    text           TEXT NOT NULL,
    why            TEXT NOT NULL,
    start          INTEGER NOT NULL CHECK (start >= 0),
    "end"          INTEGER NOT NULL,
    content_hash   TEXT NOT NULL,
    occurrences    INTEGER NOT NULL DEFAULT 1,
    action_id      INTEGER NOT NULL REFERENCES review_actions (id),
    PRIMARY KEY (case_id, output_sha256, version, position),
    CHECK ("end" > start)
);
CREATE TRIGGER review_snippets_append_only_u BEFORE UPDATE ON review_snippets
    BEGIN SELECT RAISE(ABORT, 'review_snippets is append-only'); END;
CREATE TRIGGER review_snippets_append_only_d BEFORE DELETE ON review_snippets
    BEGIN SELECT RAISE(ABORT, 'review_snippets is append-only'); END;
CREATE TRIGGER review_actions_append_only_u BEFORE UPDATE ON review_actions
    BEGIN SELECT RAISE(ABORT, 'review_actions is append-only'); END;
CREATE TRIGGER review_actions_append_only_d BEFORE DELETE ON review_actions
    BEGIN SELECT RAISE(ABORT, 'review_actions is append-only'); END;
CREATE TRIGGER review_guidance_append_only_u BEFORE UPDATE ON review_guidance
    BEGIN SELECT RAISE(ABORT, 'review_guidance is append-only'); END;
CREATE TRIGGER review_guidance_append_only_d BEFORE DELETE ON review_guidance
    BEGIN SELECT RAISE(ABORT, 'review_guidance is append-only'); END;
CREATE TABLE wiki_link_audit (
    page_hash    TEXT NOT NULL,
    article_hash TEXT NOT NULL,
    page_id      TEXT NOT NULL,
    article_id   TEXT NOT NULL,
    model        TEXT NOT NULL,
    supported    INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    PRIMARY KEY (page_hash, article_hash, article_id, model)
);
