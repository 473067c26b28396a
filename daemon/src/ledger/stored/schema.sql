-- The ledger's schema at its latest version, and its rows: what every
-- migration in store.rs builds, written at once for a new store.
-- Generated (BEE_WRITE_LATEST_SCHEMA=1 cargo test -p bee-daemon latest_schema); do not edit.
CREATE TABLE call (
        record_id                    TEXT NOT NULL UNIQUE,
        source                       TEXT NOT NULL,
        provider                     TEXT NOT NULL,
        started_at_utc               TEXT NOT NULL,
        started_at_ms                INTEGER NOT NULL,
        duration_ms                  INTEGER,
        success                      INTEGER,
        model                        TEXT,
        project_path                 TEXT,
        cost_usd                     REAL,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER,
        model_invocations            INTEGER,
        context_window               INTEGER,
        context_tokens               INTEGER,
        compactions                  INTEGER,
        session_id                   TEXT, crc INTEGER, outcome TEXT,
        PRIMARY KEY (started_at_ms, record_id)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE quota_snapshot (
        seq             INTEGER PRIMARY KEY NOT NULL,
        call_record_id  TEXT,
        provider        TEXT NOT NULL,
        observed_at_utc TEXT NOT NULL,
        observed_at_ms  INTEGER NOT NULL,
        window          TEXT NOT NULL,
        window_minutes  INTEGER,
        used_percent    REAL NOT NULL,
        resets_at_utc   TEXT,
        resets_at_ms    INTEGER
    , crc INTEGER, limit_id TEXT) STRICT;
CREATE INDEX quota_snapshot_observed ON quota_snapshot (observed_at_ms);
CREATE TABLE limit_hit (
        seq            INTEGER PRIMARY KEY NOT NULL,
        record_id      TEXT NOT NULL UNIQUE,
        provider       TEXT NOT NULL,
        at_utc         TEXT NOT NULL,
        at_ms          INTEGER NOT NULL,
        resets_at_utc  TEXT,
        detection      TEXT NOT NULL,
        window         TEXT
    , crc INTEGER, window_minutes INTEGER, limit_id TEXT, session_id TEXT) STRICT;
CREATE INDEX limit_hit_at ON limit_hit (at_ms);
CREATE TABLE work (
        seq          INTEGER PRIMARY KEY NOT NULL,
        record_id    TEXT NOT NULL UNIQUE,
        provider     TEXT NOT NULL,
        at_utc       TEXT NOT NULL,
        at_ms        INTEGER NOT NULL,
        commit_hash  TEXT NOT NULL,
        run_mode     TEXT NOT NULL,
        task_id      TEXT NOT NULL
    , crc INTEGER) STRICT;
CREATE INDEX work_at ON work (at_ms);
CREATE TRIGGER call_no_update BEFORE UPDATE ON call BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER call_no_delete BEFORE DELETE ON call BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER snapshot_no_update BEFORE UPDATE ON quota_snapshot BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER snapshot_no_delete BEFORE DELETE ON quota_snapshot BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER limit_no_update BEFORE UPDATE ON limit_hit BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER limit_no_delete BEFORE DELETE ON limit_hit BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER work_no_update BEFORE UPDATE ON work BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER work_no_delete BEFORE DELETE ON work BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TABLE turn_mark (
        seq              INTEGER PRIMARY KEY NOT NULL,
        edge             TEXT NOT NULL,
        session_id       TEXT NOT NULL,
        at_utc           TEXT NOT NULL,
        at_ms            INTEGER NOT NULL,
        transcript_path  TEXT,
        cwd              TEXT
    , crc INTEGER) STRICT;
CREATE INDEX turn_mark_session ON turn_mark (session_id, at_ms);
CREATE TRIGGER turn_mark_no_update BEFORE UPDATE ON turn_mark BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER turn_mark_no_delete BEFORE DELETE ON turn_mark BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TABLE rollup_time (
        hour_ms           INTEGER NOT NULL,
        provider          TEXT NOT NULL,   -- '' for all providers: their union
        calls             INTEGER NOT NULL,
        without_duration  INTEGER NOT NULL,
        agent_ms          INTEGER NOT NULL,
        used_ms           INTEGER NOT NULL,
        cost_usd          REAL,            -- NULL when no call reported one
        cost_calls        INTEGER NOT NULL,
        PRIMARY KEY (hour_ms, provider)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE rollup_dirty (hour_ms INTEGER PRIMARY KEY NOT NULL) STRICT;
CREATE TABLE session_span (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        first_ms   INTEGER NOT NULL,
        end_ms     INTEGER NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE longest_call (id INTEGER PRIMARY KEY CHECK (id = 1), duration_ms INTEGER NOT NULL) STRICT;
CREATE TABLE damaged_record (
        tbl       TEXT NOT NULL,
        key       TEXT NOT NULL,
        found_ms  INTEGER NOT NULL,
        PRIMARY KEY (tbl, key)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE response (
        digest                       INTEGER NOT NULL,
        key_hash                     INTEGER NOT NULL,
        provider                     TEXT NOT NULL,
        response_key                 TEXT NOT NULL,
        session_id                   TEXT,
        at_utc                       TEXT NOT NULL,
        at_ms                        INTEGER NOT NULL,
        model                        TEXT,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER,
        context_tokens               INTEGER,
        context_window               INTEGER,
        final                        INTEGER NOT NULL,
        crc                          INTEGER,
        -- The same write read again (another pass, the same line) is stored
        -- once: its time and digest (which names its response) are the same.
        PRIMARY KEY (at_ms, digest)
    ) STRICT, WITHOUT ROWID;
CREATE INDEX response_key_hash ON response (key_hash);
CREATE TRIGGER response_no_update BEFORE UPDATE ON response BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER response_no_delete BEFORE DELETE ON response BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TABLE logged_session (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE derived_turn (
        provider       TEXT NOT NULL,
        session_id     TEXT NOT NULL,
        started_at_ms  INTEGER NOT NULL,
        ended_at_ms    INTEGER NOT NULL,
        crc            INTEGER,
        PRIMARY KEY (started_at_ms, provider, session_id, ended_at_ms)
    ) STRICT, WITHOUT ROWID;
CREATE TRIGGER derived_turn_no_update BEFORE UPDATE ON derived_turn BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER derived_turn_no_delete BEFORE DELETE ON derived_turn BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE INDEX call_session ON call (provider, session_id, started_at_ms);
CREATE TABLE session_cost (
        provider    TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        at_ms       INTEGER NOT NULL,
        total_usd   REAL NOT NULL,
        crc         INTEGER,
        PRIMARY KEY (provider, session_id, at_ms, total_usd)
    ) STRICT, WITHOUT ROWID;
CREATE INDEX session_cost_at ON session_cost (at_ms);
CREATE TRIGGER session_cost_no_update BEFORE UPDATE ON session_cost BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER session_cost_no_delete BEFORE DELETE ON session_cost BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TABLE costed_session (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE response_pack (
        id       INTEGER PRIMARY KEY,
        hour_ms  INTEGER NOT NULL,
        writes   INTEGER NOT NULL,
        -- Which providers' writes it holds (`provider_bit`): which providers
        -- responded in whole hours, without decoding their packs.
        providers INTEGER NOT NULL,
        body     BLOB NOT NULL,
        crc      INTEGER NOT NULL
    ) STRICT;
CREATE INDEX response_pack_hour ON response_pack (hour_ms, providers, writes);
CREATE TABLE response_write (
        key_hash  INTEGER NOT NULL,
        at_ms     INTEGER NOT NULL,
        digest    INTEGER NOT NULL,
        -- NULL: a row of `response`, stored before packs.
        pack      INTEGER,
        PRIMARY KEY (key_hash, at_ms, digest)
    ) STRICT, WITHOUT ROWID;
CREATE TRIGGER response_pack_no_update BEFORE UPDATE ON response_pack BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER response_pack_no_delete BEFORE DELETE ON response_pack BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER response_write_no_update BEFORE UPDATE ON response_write BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER response_write_no_delete BEFORE DELETE ON response_write BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TABLE rollup_parts (
        hour_ms  INTEGER PRIMARY KEY NOT NULL,
        body     BLOB NOT NULL
    ) STRICT;
CREATE TABLE "ingest_offset" (
        path         TEXT PRIMARY KEY NOT NULL,
        dev          INTEGER NOT NULL,
        ino          INTEGER NOT NULL,
        offset       INTEGER NOT NULL,
        agent_state  TEXT
    ) STRICT;
CREATE TABLE session_project (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        project    TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
CREATE TABLE hour_change (
        hour_ms INTEGER PRIMARY KEY NOT NULL,
        change  INTEGER NOT NULL
    ) STRICT;
CREATE INDEX hour_change_change ON hour_change (change);
CREATE TRIGGER rollup_dirty_change AFTER INSERT ON rollup_dirty BEGIN
        UPDATE hour_change SET change = (SELECT MAX(change) + 1 FROM hour_change) WHERE hour_ms = NEW.hour_ms;
        INSERT OR IGNORE INTO hour_change (hour_ms, change)
        VALUES (NEW.hour_ms, (SELECT COALESCE(MAX(change), 0) + 1 FROM hour_change));
    END;
CREATE TABLE record_count (
        tbl TEXT PRIMARY KEY NOT NULL,
        n   INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
CREATE TRIGGER call_counted AFTER INSERT ON call BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'call'; END;
CREATE TRIGGER response_counted AFTER INSERT ON response BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'response'; END;
CREATE TRIGGER quota_snapshot_counted AFTER INSERT ON quota_snapshot BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'quota_snapshot'; END;
CREATE TRIGGER limit_hit_counted AFTER INSERT ON limit_hit BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'limit_hit'; END;
CREATE TRIGGER work_counted AFTER INSERT ON work BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'work'; END;
CREATE TRIGGER session_cost_counted AFTER INSERT ON session_cost BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'session_cost'; END;
CREATE TRIGGER derived_turn_counted AFTER INSERT ON derived_turn BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'derived_turn'; END;
CREATE TRIGGER response_pack_counted AFTER INSERT ON response_pack BEGIN
        UPDATE record_count SET n = n + NEW.writes WHERE tbl = 'response_pack'; END;
CREATE TABLE turn_mark_agent (
        seq       INTEGER PRIMARY KEY NOT NULL,
        provider  TEXT NOT NULL
    ) STRICT;
CREATE TRIGGER turn_mark_agent_no_update BEFORE UPDATE ON turn_mark_agent
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER turn_mark_agent_no_delete BEFORE DELETE ON turn_mark_agent
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
INSERT INTO longest_call VALUES (1, 0);
INSERT INTO record_count VALUES ('call', 0);
INSERT INTO record_count VALUES ('derived_turn', 0);
INSERT INTO record_count VALUES ('limit_hit', 0);
INSERT INTO record_count VALUES ('quota_snapshot', 0);
INSERT INTO record_count VALUES ('response', 0);
INSERT INTO record_count VALUES ('response_pack', 0);
INSERT INTO record_count VALUES ('session_cost', 0);
INSERT INTO record_count VALUES ('work', 0);
