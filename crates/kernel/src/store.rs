//! The SQLite file: opening, pragmas, versioned migrations and transactions.
//!
//! Kernel tables are created by append-only migrations (`MIGRATIONS[i]` brings the file from
//! version `i` to `i + 1`, recorded in `PRAGMA user_version`); the pending ones run in one
//! transaction, after a backup of the file (`backup`). A file whose version is newer
//! than this build knows is refused, never "upgraded down". Record tables (`obj_<object>`)
//! are not migrations: deploying a definition creates and alters them (see `deploy`).

use crate::backup;
use crate::error::{Code, Error, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// `PRAGMA application_id` of a Countersign workspace ("CSG1").
pub const APPLICATION_ID: i32 = 0x4353_4731;

/// Append-only. Never edit a published entry; add a new one.
pub const MIGRATIONS: &[&str] = &[
    // 1: metadata generations and data history.
    "CREATE TABLE metadata_generation (
        generation  INTEGER PRIMARY KEY,
        definition  TEXT NOT NULL,
        deployed_at TEXT NOT NULL,
        deployed_by TEXT NOT NULL,
        forced      INTEGER NOT NULL DEFAULT 0,
        summary     TEXT NOT NULL DEFAULT '[]'
    );
    CREATE TABLE data_history (
        seq            INTEGER PRIMARY KEY,
        object         TEXT NOT NULL,
        record_id      TEXT NOT NULL,
        op             TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete')),
        field          TEXT NOT NULL,
        old_value      TEXT,
        new_value      TEXT,
        actor          TEXT NOT NULL,
        proposed_by    TEXT,
        correlation_id TEXT NOT NULL,
        at             TEXT NOT NULL,
        record_version INTEGER NOT NULL
    );
    CREATE INDEX data_history_by_record ON data_history (object, record_id, seq);
    CREATE INDEX data_history_by_correlation ON data_history (correlation_id);",
    // 2: model providers and model pins (the keys themselves live in the OS keyring only).
    "CREATE TABLE ai_provider (
        key             TEXT PRIMARY KEY,
        kind            TEXT NOT NULL CHECK (kind IN ('openai_compatible', 'ollama')),
        base_url        TEXT NOT NULL,
        credential_ref  TEXT CHECK (credential_ref IS NULL OR credential_ref LIKE 'secret://%'),
        structured_form TEXT NOT NULL,
        region          TEXT NOT NULL,
        retention       TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        created_by      TEXT NOT NULL
    );
    CREATE TABLE ai_model_pin (
        key                   TEXT PRIMARY KEY,
        provider              TEXT NOT NULL REFERENCES ai_provider (key),
        model_id              TEXT NOT NULL,
        digest                TEXT NOT NULL,
        served_fingerprint    TEXT NOT NULL,
        metadata              TEXT NOT NULL,
        temperature           REAL NOT NULL,
        max_output_tokens     INTEGER NOT NULL,
        input_price_per_mtok  REAL NOT NULL,
        output_price_per_mtok REAL NOT NULL,
        currency              TEXT NOT NULL,
        pinned_at             TEXT NOT NULL,
        pinned_by             TEXT NOT NULL,
        drift                 TEXT
    );",
    // 3: the AI pipeline: prompt components (append-only versions + an active pointer),
    // capability bindings, and the execution trace (one row per invocation).
    "CREATE TABLE ai_prompt_version (
        prompt       TEXT NOT NULL,
        version      INTEGER NOT NULL,
        instructions TEXT NOT NULL,
        examples     TEXT NOT NULL,
        inputs       TEXT NOT NULL,
        output_contract TEXT NOT NULL,
        published_at TEXT NOT NULL,
        published_by TEXT NOT NULL,
        PRIMARY KEY (prompt, version)
    );
    CREATE TRIGGER ai_prompt_version_frozen BEFORE UPDATE ON ai_prompt_version
    BEGIN SELECT RAISE(ABORT, 'a published prompt version is frozen; publish a new version'); END;
    CREATE TABLE ai_prompt (
        key            TEXT PRIMARY KEY,
        active_version INTEGER NOT NULL,
        FOREIGN KEY (key, active_version) REFERENCES ai_prompt_version (prompt, version)
    );
    CREATE TABLE ai_capability (
        key                 TEXT PRIMARY KEY,
        prompt              TEXT NOT NULL REFERENCES ai_prompt (key),
        model_pin           TEXT,
        required_permission TEXT NOT NULL,
        autonomy            TEXT NOT NULL CHECK (autonomy IN ('read_only', 'propose', 'auto_apply')),
        settings            TEXT NOT NULL
    );
    CREATE TABLE ai_trace (
        id                TEXT PRIMARY KEY,
        correlation_id    TEXT NOT NULL,
        capability        TEXT NOT NULL,
        actor             TEXT NOT NULL,
        prompt            TEXT NOT NULL,
        prompt_version    INTEGER NOT NULL,
        model_pin         TEXT,
        model_id          TEXT NOT NULL,
        model_version     TEXT NOT NULL,
        grounding_hash    TEXT NOT NULL,
        generation        INTEGER NOT NULL,
        input             TEXT NOT NULL,
        prompt_text       TEXT NOT NULL,
        output_text       TEXT NOT NULL DEFAULT '',
        result            TEXT,
        field_values      TEXT NOT NULL DEFAULT '[]',
        attempts          INTEGER NOT NULL DEFAULT 0,
        prompt_tokens     INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        estimated_cost    REAL NOT NULL,
        cost              REAL NOT NULL DEFAULT 0,
        currency          TEXT NOT NULL,
        model_ms          REAL NOT NULL DEFAULT 0,
        latency_ms        REAL NOT NULL DEFAULT 0,
        outcome           TEXT NOT NULL CHECK (outcome IN ('running', 'answered', 'refused', 'failed')),
        code              TEXT,
        fault             TEXT,
        message           TEXT,
        started_at        TEXT NOT NULL,
        finished_at       TEXT
    );
    CREATE INDEX ai_trace_by_actor ON ai_trace (actor, started_at);
    CREATE TABLE list_view (
        owner      TEXT NOT NULL,
        object     TEXT NOT NULL,
        name       TEXT NOT NULL,
        spec       TEXT NOT NULL,
        source     TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (owner, object, name)
    );
    CREATE INDEX ai_trace_by_time ON ai_trace (started_at);",
    // 4: proposals (a model's writes, waiting for a reviewer).
    "CREATE TABLE proposal (
        id                 TEXT PRIMARY KEY,
        capability         TEXT NOT NULL,
        object             TEXT NOT NULL,
        record_id          TEXT,
        operation          TEXT NOT NULL CHECK (operation IN ('create', 'update')),
        fields             TEXT NOT NULL,
        unmapped           TEXT NOT NULL,
        rationale          TEXT NOT NULL,
        basis_version      INTEGER,
        grounding_hash     TEXT NOT NULL,
        prompt             TEXT NOT NULL,
        prompt_version     INTEGER NOT NULL,
        model_id           TEXT NOT NULL,
        model_version      TEXT NOT NULL,
        generation         INTEGER NOT NULL,
        correlation_id     TEXT NOT NULL,
        state              TEXT NOT NULL CHECK (state IN ('open', 'accepted', 'discarded', 'expired', 'undone')),
        state_reason       TEXT,
        created_by         TEXT NOT NULL,
        created_at         TEXT NOT NULL,
        decided_by         TEXT,
        decided_at         TEXT,
        accepted_fields    TEXT NOT NULL,
        accept_correlation TEXT,
        result_version     INTEGER,
        undone_by          TEXT,
        undone_at          TEXT
    );
    CREATE INDEX proposal_by_state ON proposal (state, created_at);
    CREATE INDEX proposal_by_record ON proposal (object, record_id);",
    // 5: the document a proposal was extracted from (for the review preview), changes applied
    // without a reviewer (auto-apply) and the allowlist that permits them.
    "CREATE TABLE proposal_document (
        proposal_id TEXT PRIMARY KEY REFERENCES proposal (id) ON DELETE CASCADE,
        document    TEXT NOT NULL
    );
    ALTER TABLE proposal ADD COLUMN auto_applied INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE proposal ADD COLUMN reviewer_edits TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE auto_apply (
        capability TEXT NOT NULL,
        object     TEXT NOT NULL,
        field      TEXT NOT NULL,
        set_by     TEXT NOT NULL,
        set_at     TEXT NOT NULL,
        PRIMARY KEY (capability, object, field)
    );",
    // 6: the corpus of long texts (FTS5) for corpus grounding, and kernel flags.
    "CREATE VIRTUAL TABLE corpus USING fts5(object UNINDEXED, record_id UNINDEXED, field UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 2');
    CREATE TABLE kernel_state (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
    // 7: a running invocation's trace row is its in-flight slot, in every process: `holder`
    // (the process) and `lease_until` (renewed while the call goes on; an expired lease does
    // not count and its row is closed as `abandoned` on the next open). SQLite cannot change a
    // CHECK constraint, so `ai_trace` is rebuilt with the new outcome.
    "CREATE TABLE ai_trace_v7 (
        id                TEXT PRIMARY KEY,
        correlation_id    TEXT NOT NULL,
        capability        TEXT NOT NULL,
        actor             TEXT NOT NULL,
        prompt            TEXT NOT NULL,
        prompt_version    INTEGER NOT NULL,
        model_pin         TEXT,
        model_id          TEXT NOT NULL,
        model_version     TEXT NOT NULL,
        grounding_hash    TEXT NOT NULL,
        generation        INTEGER NOT NULL,
        input             TEXT NOT NULL,
        prompt_text       TEXT NOT NULL,
        output_text       TEXT NOT NULL DEFAULT '',
        result            TEXT,
        field_values      TEXT NOT NULL DEFAULT '[]',
        attempts          INTEGER NOT NULL DEFAULT 0,
        prompt_tokens     INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        estimated_cost    REAL NOT NULL,
        cost              REAL NOT NULL DEFAULT 0,
        currency          TEXT NOT NULL,
        model_ms          REAL NOT NULL DEFAULT 0,
        latency_ms        REAL NOT NULL DEFAULT 0,
        outcome           TEXT NOT NULL CHECK (outcome IN ('running', 'answered', 'refused', 'failed', 'abandoned')),
        code              TEXT,
        fault             TEXT,
        message           TEXT,
        started_at        TEXT NOT NULL,
        finished_at       TEXT,
        holder            TEXT,
        lease_until       TEXT
    );
    INSERT INTO ai_trace_v7 (id, correlation_id, capability, actor, prompt, prompt_version, model_pin, model_id,
        model_version, grounding_hash, generation, input, prompt_text, output_text, result, field_values, attempts,
        prompt_tokens, completion_tokens, estimated_cost, cost, currency, model_ms, latency_ms, outcome, code, fault,
        message, started_at, finished_at)
    SELECT id, correlation_id, capability, actor, prompt, prompt_version, model_pin, model_id,
        model_version, grounding_hash, generation, input, prompt_text, output_text, result, field_values, attempts,
        prompt_tokens, completion_tokens, estimated_cost, cost, currency, model_ms, latency_ms, outcome, code, fault,
        message, started_at, finished_at
    FROM ai_trace;
    DROP TABLE ai_trace;
    ALTER TABLE ai_trace_v7 RENAME TO ai_trace;
    CREATE INDEX ai_trace_by_actor ON ai_trace (actor, started_at);
    CREATE INDEX ai_trace_by_time ON ai_trace (started_at);
    CREATE INDEX ai_trace_running ON ai_trace (actor, capability) WHERE outcome = 'running';",
    // 8: Ask's examples learned from corrections (a question and the spec its user corrected
    // the answer to), with their questions indexed for similarity (FTS5, bm25).
    "CREATE TABLE ask_example (
        id          TEXT PRIMARY KEY,
        trace_id    TEXT NOT NULL UNIQUE,
        question    TEXT NOT NULL,
        object      TEXT NOT NULL,
        spec        TEXT NOT NULL,
        created_by  TEXT NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE ask_example_text USING fts5(example_id UNINDEXED, question, tokenize = 'porter unicode61 remove_diacritics 2');",
    // 9: a proposal's child records (an invoice's lines), proposed, accepted and undone with it.
    "ALTER TABLE proposal ADD COLUMN children TEXT NOT NULL DEFAULT '[]';",
    // 10: eval suites (versioned cases with a pass floor, per capability), their runs against a
    // prompt version and a model pin, the gate's decisions (passed, or overridden with a
    // reason), and the spend of trace entries past their retention, rolled up by day.
    "CREATE TABLE eval_suite (
        key           TEXT NOT NULL,
        version       INTEGER NOT NULL,
        capability    TEXT NOT NULL,
        fixture       TEXT NOT NULL,
        floor         REAL NOT NULL,
        cases         TEXT NOT NULL,
        published_at  TEXT NOT NULL,
        published_by  TEXT NOT NULL,
        PRIMARY KEY (key, version)
    );
    CREATE TABLE eval_run (
        id                 TEXT PRIMARY KEY,
        suite              TEXT NOT NULL,
        suite_version      INTEGER NOT NULL,
        capability         TEXT NOT NULL,
        prompt             TEXT NOT NULL,
        prompt_version     INTEGER NOT NULL,
        model_pin          TEXT NOT NULL,
        model_version      TEXT NOT NULL,
        started_by         TEXT NOT NULL,
        started_at         TEXT NOT NULL,
        finished_at        TEXT NOT NULL,
        outcome            TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'cancelled')),
        passed             INTEGER NOT NULL,
        total              INTEGER NOT NULL,
        hard_failures      INTEGER NOT NULL,
        floor              REAL NOT NULL,
        p50_ms             REAL NOT NULL,
        prompt_tokens      INTEGER NOT NULL,
        completion_tokens  INTEGER NOT NULL,
        cost               REAL NOT NULL,
        cases              TEXT NOT NULL
    );
    CREATE INDEX eval_run_by_candidate ON eval_run (capability, prompt_version, model_pin, started_at);
    CREATE TABLE ai_gate_decision (
        id              TEXT PRIMARY KEY,
        capability      TEXT NOT NULL,
        change          TEXT NOT NULL,
        prompt_version  INTEGER NOT NULL,
        model_pin       TEXT NOT NULL,
        run_id          TEXT,
        overridden      INTEGER NOT NULL,
        reason          TEXT,
        decided_by      TEXT NOT NULL,
        decided_at      TEXT NOT NULL
    );
    CREATE TABLE spend_rollup (
        day                TEXT NOT NULL,
        capability         TEXT NOT NULL,
        actor              TEXT NOT NULL,
        currency           TEXT NOT NULL,
        invocations        INTEGER NOT NULL,
        prompt_tokens      INTEGER NOT NULL,
        completion_tokens  INTEGER NOT NULL,
        cost               REAL NOT NULL,
        PRIMARY KEY (day, capability, actor, currency)
    );",
    // 11: the built-in runtime is a provider kind of its own (`built_in`). SQLite cannot change
    // a CHECK constraint, so the providers are rebuilt, and the pins with them (they reference
    // the providers: the new pins table references the new providers table, whose rename
    // carries the reference along).
    "CREATE TABLE ai_provider_v11 (
        key             TEXT PRIMARY KEY,
        kind            TEXT NOT NULL CHECK (kind IN ('openai_compatible', 'ollama', 'built_in')),
        base_url        TEXT NOT NULL,
        credential_ref  TEXT CHECK (credential_ref IS NULL OR credential_ref LIKE 'secret://%'),
        structured_form TEXT NOT NULL,
        region          TEXT NOT NULL,
        retention       TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        created_by      TEXT NOT NULL
    );
    INSERT INTO ai_provider_v11 SELECT key, kind, base_url, credential_ref, structured_form, region, retention,
        created_at, created_by FROM ai_provider;
    CREATE TABLE ai_model_pin_v11 (
        key                   TEXT PRIMARY KEY,
        provider              TEXT NOT NULL REFERENCES ai_provider_v11 (key),
        model_id              TEXT NOT NULL,
        digest                TEXT NOT NULL,
        served_fingerprint    TEXT NOT NULL,
        metadata              TEXT NOT NULL,
        temperature           REAL NOT NULL,
        max_output_tokens     INTEGER NOT NULL,
        input_price_per_mtok  REAL NOT NULL,
        output_price_per_mtok REAL NOT NULL,
        currency              TEXT NOT NULL,
        pinned_at             TEXT NOT NULL,
        pinned_by             TEXT NOT NULL,
        drift                 TEXT
    );
    INSERT INTO ai_model_pin_v11 SELECT key, provider, model_id, digest, served_fingerprint, metadata, temperature,
        max_output_tokens, input_price_per_mtok, output_price_per_mtok, currency, pinned_at, pinned_by, drift
        FROM ai_model_pin;
    DROP TABLE ai_model_pin;
    DROP TABLE ai_provider;
    ALTER TABLE ai_provider_v11 RENAME TO ai_provider;
    ALTER TABLE ai_model_pin_v11 RENAME TO ai_model_pin;",
    // 12: the assistant's conversations, each its user's own; a message keeps the steps its
    // turn took (what each ran and pointed at: result sets by their spec and ids, never the
    // rows, which are read again through the user's session when shown).
    "CREATE TABLE assistant_conversation (
        id         TEXT PRIMARY KEY,
        owner      TEXT NOT NULL,
        title      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX assistant_conversation_by_owner ON assistant_conversation (owner, updated_at);
    CREATE TABLE assistant_message (
        conversation_id TEXT NOT NULL REFERENCES assistant_conversation (id) ON DELETE CASCADE,
        seq             INTEGER NOT NULL,
        role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        text            TEXT NOT NULL,
        steps           TEXT NOT NULL DEFAULT '[]',
        correlation_id  TEXT,
        created_at      TEXT NOT NULL,
        PRIMARY KEY (conversation_id, seq)
    );",
    // 13: the value index of short text fields (records/value_index.rs): each distinct value
    // with how many records hold it, and the probes (word prefixes) it is found by. The corpus
    // is made again with the Porter stemmer ("delays" finds "delay"), rebuilt on open.
    "CREATE TABLE value_index (
        object TEXT NOT NULL,
        field  TEXT NOT NULL,
        value  TEXT NOT NULL,
        uses   INTEGER NOT NULL,
        PRIMARY KEY (object, field, value)
    ) WITHOUT ROWID;
    CREATE TABLE value_probe (
        probe  TEXT NOT NULL,
        object TEXT NOT NULL,
        field  TEXT NOT NULL,
        value  TEXT NOT NULL,
        PRIMARY KEY (probe, object, field, value)
    ) WITHOUT ROWID;
    CREATE INDEX value_probe_by_value ON value_probe (object, field, value);
    DROP TABLE corpus;
    CREATE VIRTUAL TABLE corpus USING fts5(object UNINDEXED, record_id UNINDEXED, field UNINDEXED, body, tokenize = 'porter unicode61 remove_diacritics 2');
    DELETE FROM kernel_state WHERE key = 'corpus_built';",
    // 14: a value's probes are deleted by their primary key (they follow from the value); the
    // second index on value_probe only cost every save of a short text field more pages.
    "DROP INDEX value_probe_by_value;",
    // 15: record counts per object and owner (records/counts.rs), kept by triggers that each
    // record table gets on open or deploy.
    "CREATE TABLE record_count (
        object TEXT NOT NULL,
        owner  TEXT NOT NULL,
        n      INTEGER NOT NULL,
        PRIMARY KEY (object, owner)
    ) WITHOUT ROWID;",
    // 16: indexes that follow use (records/use_index.rs): how often each query shape was
    // used, and the indexes made for them with their cost. The sort indexes on
    // `((col IS NULL), col)` are no longer read (keyset pages range over plain indexes) and
    // are dropped on open.
    "CREATE TABLE index_use (
        object    TEXT NOT NULL,
        shape     TEXT NOT NULL,
        uses      INTEGER NOT NULL,
        last_used TEXT NOT NULL,
        PRIMARY KEY (object, shape)
    ) WITHOUT ROWID;
    CREATE TABLE use_index (
        name       TEXT PRIMARY KEY NOT NULL,
        object     TEXT NOT NULL,
        shape      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        rows       INTEGER NOT NULL,
        build_ms   INTEGER NOT NULL,
        pinned     INTEGER NOT NULL DEFAULT 0
    );",
    // 17: tools from outside the kernel (ai/tools/registry.rs): every saved definition is a
    // version, kept; `tool` points at the one in use, or says the tool was removed. Their
    // calls (ai/tools/calls.rs), one per operation key, with their approval and outcome.
    "CREATE TABLE tool_version (
        name       TEXT NOT NULL,
        version    INTEGER NOT NULL,
        definition TEXT NOT NULL,
        saved_at   TEXT NOT NULL,
        saved_by   TEXT NOT NULL,
        PRIMARY KEY (name, version)
    ) WITHOUT ROWID;
    CREATE TABLE tool (
        name           TEXT PRIMARY KEY NOT NULL,
        active_version INTEGER NOT NULL,
        removed        INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE tool_call (
        id            TEXT PRIMARY KEY NOT NULL,
        operation_key TEXT NOT NULL UNIQUE,
        tool          TEXT NOT NULL,
        tool_version  INTEGER NOT NULL,
        effect        TEXT NOT NULL,
        capability    TEXT NOT NULL,
        asked_by      TEXT NOT NULL,
        arguments     TEXT NOT NULL,
        rationale     TEXT NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('waiting', 'approved', 'denied', 'expired', 'running',
                                                     'succeeded', 'failed', 'outcome_unknown')),
        comment       TEXT,
        created_at    TEXT NOT NULL,
        expires_at    TEXT,
        decided_by    TEXT,
        decided_at    TEXT,
        attempts      INTEGER NOT NULL DEFAULT 0,
        result        TEXT,
        finished_at   TEXT
    );
    CREATE INDEX tool_call_by_state ON tool_call (state, created_at);",
    // 18: MCP servers an admin connected (ai/tools/mcp_servers.rs): how to reach each, and the
    // tool list the admin reviewed with its digest (a call is refused when the list differs).
    "CREATE TABLE mcp_server (
        name       TEXT PRIMARY KEY NOT NULL,
        definition TEXT NOT NULL,
        digest     TEXT NOT NULL,
        tools      TEXT NOT NULL,
        pinned_at  TEXT NOT NULL,
        pinned_by  TEXT NOT NULL,
        removed    INTEGER NOT NULL DEFAULT 0
    );",
    // 19: locales (locale.rs). A user's own locale, over the workspace's; and a prompt version's
    // instructions and examples per language, frozen with the version (`{"de": {...}}`).
    "CREATE TABLE user_preference (
        user_key TEXT PRIMARY KEY NOT NULL,
        locale   TEXT
    );
    ALTER TABLE ai_prompt_version ADD COLUMN variants TEXT NOT NULL DEFAULT '{}';",
    // 20: judged assertions (eval/suites): a suite version's rubric and floor, and a run's
    // judged score with the judge that gave it (JSON, NULL for none).
    "ALTER TABLE eval_suite ADD COLUMN judged TEXT;
    ALTER TABLE eval_run ADD COLUMN judged TEXT;",
];

pub fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Open (or create) a workspace file and bring its kernel tables up to date, backing up a file
/// before migrating it (`now` names the backup).
pub fn open(path: &Path, create: bool, now: chrono::DateTime<chrono::Utc>) -> Result<Connection> {
    if !create && !path.exists() {
        return Err(Error::new(
            Code::NotInitialized,
            format!("no workspace at {}; create one with `init`", path.display()),
        ));
    }
    if !path.exists() {
        // A write-ahead log without its database belongs to a deleted file; SQLite would try to
        // replay it into the new one and fail with a bare I/O error.
        for suffix in ["-wal", "-shm"] {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            let side = std::path::PathBuf::from(side);
            if side.exists() {
                return Err(Error::new(
                    Code::Storage,
                    format!(
                        "{} is left over from a deleted workspace at this path; move it away to create a new one here",
                        side.display()
                    ),
                ));
            }
        }
    }
    let flags = if create {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let started = std::time::Instant::now();
    let conn = Connection::open_with_flags(path, flags)?;
    configure(&conn).map_err(|e| not_a_workspace(e, path))?;
    migrate(&conn, path, now).inspect_err(
        |e| tracing::warn!(path = %path.display(), code = e.code.as_str(), "workspace file refused"),
    )?;
    tracing::info!(path = %path.display(), create, ms = crate::logging::ms_since(started), "workspace file opened");
    Ok(conn)
}

fn not_a_workspace(e: Error, path: &Path) -> Error {
    if e.message.contains("damaged") || e.message.contains("not a database") {
        Error::new(
            Code::NotAWorkspace,
            format!("{} is not a Countersign workspace (not an SQLite database)", path.display()),
        )
    } else {
        e
    }
}

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    // WAL: readers never block the writer. NORMAL sync is atomic and consistent in WAL mode.
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        return Err(Error::new(Code::Storage, format!("could not enable WAL (journal mode {mode})")));
    }
    conn.execute_batch(
        "PRAGMA foreign_keys = ON;
         PRAGMA synchronous = NORMAL;
         PRAGMA temp_store = MEMORY;
         PRAGMA cache_size = -16384;",
    )?;
    conn.set_prepared_statement_cache_capacity(128);
    Ok(())
}

/// A store version newer than this build knows is refused; `unchanged` ends the message (what
/// was left as it was).
fn refuse_newer(path: &Path, version: i64, unchanged: &str) -> Result<()> {
    if version > schema_version() {
        return Err(Error::new(
            Code::StoreTooNew,
            format!(
                "{} was written by a newer Countersign (store version {version}; this build knows up to {}). {unchanged}",
                path.display(),
                schema_version()
            ),
        ));
    }
    Ok(())
}

/// A backup about to be restored (`src`, the file at `from`) must be a Countersign workspace
/// this build can open (`workspace.not_a_workspace`, `store.too_new` otherwise). Reads, changes
/// nothing.
pub fn check_restorable(src: &Connection, from: &Path) -> Result<()> {
    let not_a_workspace =
        || Error::new(Code::NotAWorkspace, format!("{} is not a Countersign workspace", from.display()));
    let app_id: i32 =
        src.query_row("PRAGMA application_id", [], |r| r.get(0)).map_err(|_| not_a_workspace())?;
    let version: i64 =
        src.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|_| not_a_workspace())?;
    if app_id != APPLICATION_ID {
        return Err(not_a_workspace());
    }
    refuse_newer(from, version, "Update Countersign to restore it; nothing was restored.")
}

fn migrate(conn: &Connection, path: &Path, now: chrono::DateTime<chrono::Utc>) -> Result<()> {
    let app_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app_id != APPLICATION_ID {
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
        if app_id != 0 || tables > 0 {
            return Err(Error::new(
                Code::NotAWorkspace,
                format!("{} is an SQLite file but not a Countersign workspace", path.display()),
            ));
        }
    }
    refuse_newer(path, version, "Update Countersign to open it; the file was not changed.")?;
    if version >= schema_version() {
        return Ok(());
    }
    if version > 0 {
        // The file as it was, in a backup of its own, before anything changes.
        backup::take(conn, path, backup::Reason::Migration, now)?;
    }
    // Every pending step in one transaction: a step that fails leaves the file exactly as it
    // was (SQLite's schema changes and the header's user_version are transactional).
    let started = std::time::Instant::now();
    let tx = immediate(conn)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql).map_err(|e| {
            Error::new(
                Code::Storage,
                format!(
                    "{} could not be brought to store version {} ({e}); the file was not changed",
                    path.display(),
                    i + 1
                ),
            )
        })?;
    }
    if version == 0 {
        // A new file has no records: its corpus and value index are complete from the start
        // (the save path keeps them), so opening it never rebuilds them.
        tx.execute_batch(
            "INSERT INTO kernel_state (key, value) VALUES ('corpus_built', '1'), ('value_index_built', '1');",
        )?;
    }
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {};",
        schema_version()
    ))?;
    tx.commit()?;
    tracing::info!(
        from_version = version,
        to_version = schema_version(),
        ms = crate::logging::ms_since(started),
        "store migrated"
    );
    Ok(())
}

/// Begin an IMMEDIATE transaction (the write lock is taken up front, so a save never fails
/// half-way on a lock upgrade). Dropped without `commit`, it rolls back.
pub fn immediate(conn: &Connection) -> Result<Transaction<'_>> {
    Ok(Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?)
}

/// Build something derived from the record tables (an index) once per file: `build` runs in
/// one transaction and `key` is set in `kernel_state` with it. When another process holds the
/// file, nothing is built now (it may be building right now; a later open builds it).
pub(crate) fn once(
    conn: &Connection,
    key: &str,
    build: impl FnOnce(&Transaction<'_>) -> Result<()>,
) -> Result<()> {
    let done = |c: &Connection| -> Result<bool> {
        Ok(c.query_row("SELECT 1 FROM kernel_state WHERE key = ?1", [key], |_| Ok(())).optional()?.is_some())
    };
    if done(conn)? {
        return Ok(());
    }
    let tx = match immediate(conn) {
        Ok(tx) => tx,
        Err(e) if e.retriable => return Ok(()),
        Err(e) => return Err(e),
    };
    // Checked again under the write lock: another opener may have built it meanwhile.
    if done(&tx)? {
        return Ok(());
    }
    build(&tx)?;
    tx.execute("INSERT INTO kernel_state (key, value) VALUES (?1, '1')", [key])?;
    tx.commit()?;
    Ok(())
}
