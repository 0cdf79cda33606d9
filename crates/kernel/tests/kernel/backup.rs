//! Backups with SQLite's online backup API: a backup taken while another connection writes is
//! consistent and restores exactly; a backup is taken before a migration and a deploy, daily,
//! and only the newest are kept; a failed migration leaves the file and its backup as they
//! were; a restore refuses a file from a newer version and changes nothing.

use crate::common;

use common::*;
use countersign_kernel::backup::{self, Reason};
use countersign_kernel::open;
use countersign_kernel::store::{APPLICATION_ID, MIGRATIONS};
use countersign_kernel::Code;
use rusqlite::Connection;
use serde_json::json;
use std::path::Path;

/// Every row of every table, in a stable order: two files with the same dump hold the same data.
fn dump(path: &Path) -> Vec<String> {
    let c = Connection::open(path).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out = vec![];
    for t in tables {
        let mut stmt = c.prepare(&format!("SELECT * FROM \"{t}\" ORDER BY 1")).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                Ok((0..n).map(|i| format!("{:?}", r.get_ref(i).unwrap())).collect::<Vec<_>>().join("|"))
            })
            .unwrap();
        out.extend(rows.map(|r| format!("{t}: {}", r.unwrap())));
    }
    out
}

fn scalar(path: &Path, sql: &str) -> i64 {
    Connection::open(path).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_backup_taken_while_another_connection_writes_is_consistent_and_restores_exactly() {
    let f = demo();
    let path = f.ws.path().to_path_buf();
    // A writer in another connection (and thread) saving one account over and over until told
    // to stop: each save bumps the record's version and adds its history entry in one
    // transaction.
    let writer_path = path.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let writer = std::thread::spawn(move || {
        let clock = std::sync::Arc::new(countersign_kernel::FixedClock::at(START));
        let ws = open::open(&writer_path, options(&clock)).unwrap();
        let ava = ws.session("ava").unwrap();
        let mut saves = 0;
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
            saves += 1;
            ava.update("account", "acc_0001", map(json!({"employees": 1000 + saves})), None).unwrap();
        }
        saves
    });
    let mut taken = vec![];
    while taken.len() < 6 {
        std::thread::sleep(std::time::Duration::from_millis(30));
        taken.push(backup::take(f.ws.raw_connection(), &path, Reason::Manual, chrono::Utc::now()).unwrap());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let saves = writer.join().unwrap();
    let mut versions = vec![];
    for b in &taken {
        let file = Path::new(&b.path);
        assert_eq!(
            scalar(file, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"),
            1
        );
        // Consistent: the record's version is the version its newest history entry wrote,
        // and every save before it left its entry.
        let version = scalar(file, "SELECT version FROM obj_account WHERE id = 'acc_0001'");
        let newest = scalar(
            file,
            "SELECT max(record_version) FROM data_history WHERE object = 'account' AND record_id = 'acc_0001'",
        );
        let updates = scalar(
            file,
            "SELECT count(*) FROM data_history WHERE object = 'account' AND record_id = 'acc_0001' AND op = 'update'",
        );
        assert_eq!((version, updates), (newest, version - 1), "{}", b.path);
        versions.push(version);
    }
    assert!(versions.windows(2).all(|w| w[0] <= w[1]));
    assert!(
        versions.iter().filter(|v| **v > 1 && **v < saves + 1).count() >= 2,
        "backups taken mid-writes: {versions:?}"
    );

    // Restore a backup from the middle of the writes: the file holds exactly what it holds.
    let middle = &taken[taken.len() / 2];
    let expected = dump(Path::new(&middle.path));
    drop(f.ws);
    let (ws, replaced) = open::restore(
        &path,
        Path::new(&middle.path),
        "ava",
        options(&std::sync::Arc::new(countersign_kernel::FixedClock::at(START))),
    )
    .unwrap();
    assert_eq!(replaced.reason, Reason::BeforeRestore);
    drop(ws);
    assert_eq!(dump(&path), expected);
    // What the restore replaced is itself a backup: the last version the writer saved.
    assert_eq!(
        scalar(Path::new(&replaced.path), "SELECT version FROM obj_account WHERE id = 'acc_0001'"),
        saves + 1
    );
}

#[test]
fn only_the_newest_backups_are_kept_with_the_newest_of_each_reason_and_a_daily_one_when_due() {
    let f = demo();
    // A workspace made today: no daily backup yet.
    assert!(f.ws.backups().unwrap().is_empty());
    let first = f.ws.back_up().unwrap();
    for _ in 0..(backup::KEEP + 3) {
        f.clock.advance(chrono::Duration::minutes(1));
        f.ws.back_up().unwrap();
    }
    let kept = f.ws.backups().unwrap();
    assert_eq!(kept.len(), backup::KEEP);
    assert!(!Path::new(&first.path).exists(), "the oldest went");
    // A day later, opening the workspace takes the daily backup; the older manual ones give
    // way to it, but it never pushes out the newest of another reason.
    f.clock.advance(chrono::Duration::hours(25));
    let path = f.ws.path().to_path_buf();
    let clock = f.clock.clone();
    drop(f.ws);
    let ws = open::open(&path, options(&clock)).unwrap();
    let after = ws.backups().unwrap();
    assert_eq!(after[0].reason, Reason::Daily);
    assert_eq!(after.len(), backup::KEEP);
    assert!(after.iter().any(|b| b.reason == Reason::Manual));
    // Not due again the same day.
    drop(ws);
    let ws = open::open(&path, options(&clock)).unwrap();
    assert_eq!(ws.backups().unwrap().iter().filter(|b| b.reason == Reason::Daily).count(), 1);
}

#[test]
fn a_deploy_is_backed_up_first() {
    let mut f = demo();
    let before = dump(f.ws.path());
    let def = countersign_kernel::records::demo::demo_definition();
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let backups = f.ws.backups().unwrap();
    assert_eq!(backups.len(), 1);
    assert_eq!(backups[0].reason, Reason::Deploy);
    assert_eq!(dump(Path::new(&backups[0].path)), before);
}

/// A workspace file at store version `version` (the first `version` migrations), with a row.
fn file_at_version(path: &Path, version: usize) {
    let c = Connection::open(path).unwrap();
    c.execute_batch("PRAGMA journal_mode = WAL; BEGIN").unwrap();
    for sql in &MIGRATIONS[..version] {
        c.execute_batch(sql).unwrap();
    }
    c.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {version};
         INSERT INTO kernel_state (key, value) VALUES ('marker', 'before');
         COMMIT;"
    ))
    .unwrap();
}

#[test]
fn a_migration_that_fails_midway_leaves_the_file_and_its_backup_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.countersign");
    let from = MIGRATIONS.len() - 3;
    file_at_version(&path, from);
    // Something in the way of the last of them that creates a table: its first table already
    // exists.
    let last = MIGRATIONS[from..].iter().rev().find(|m| m.contains("CREATE TABLE ")).unwrap();
    let table = last.split("CREATE TABLE ").nth(1).unwrap().split_whitespace().next().unwrap();
    Connection::open(&path).unwrap().execute_batch(&format!("CREATE TABLE {table} (x)")).unwrap();
    let before = dump(&path);

    let e = open::open(&path, options(&std::sync::Arc::new(countersign_kernel::FixedClock::at(START))))
        .unwrap_err();
    assert_eq!(e.code, Code::Storage);
    assert!(e.message.contains("was not changed"), "{}", e.message);
    // The earlier steps that did run were rolled back with the failing one.
    assert_eq!(scalar(&path, "PRAGMA user_version"), from as i64);
    assert_eq!(dump(&path), before);
    // And the backup taken before migrating holds the same.
    let backups = backup::list(&path).unwrap();
    assert_eq!(backups.len(), 1);
    assert_eq!((backups[0].reason, backups[0].store_version), (Reason::Migration, from as i64));
    assert_eq!(dump(Path::new(&backups[0].path)), before);

    // Without the obstacle the migration goes through (after a second backup).
    Connection::open(&path).unwrap().execute_batch(&format!("DROP TABLE {table}")).unwrap();
    open::open(&path, options(&std::sync::Arc::new(countersign_kernel::FixedClock::at(START)))).unwrap();
    assert_eq!(scalar(&path, "PRAGMA user_version"), MIGRATIONS.len() as i64);
    assert_eq!(scalar(&path, "SELECT count(*) FROM kernel_state WHERE key = 'marker'"), 1);
}

/// Migration 11 rebuilds the providers and pins (a provider kind for the built-in runtime):
/// what they held before is there after, the pins still point at their providers, and the
/// new kind is accepted.
#[test]
fn the_providers_and_pins_survive_their_rebuild_for_the_built_in_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v10.countersign");
    file_at_version(&path, 10);
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "INSERT INTO ai_provider VALUES ('llama', 'openai_compatible', 'http://127.0.0.1:8080/v1', 'secret://countersign/llama', 'json_schema', 'this machine', 'none', '2026-11-01T00:00:00Z', 'ava');
             INSERT INTO ai_model_pin VALUES ('m05', 'llama', 'local-model', 'sha256:ab', 'meta-sha256:cd', '{}', 0, 1024, 0.5, 1.5, 'USD', '2026-11-01T00:00:00Z', 'ava', NULL);",
        )
        .unwrap();
    open::open(&path, options(&std::sync::Arc::new(countersign_kernel::FixedClock::at(START)))).unwrap();
    assert_eq!(scalar(&path, "PRAGMA user_version"), MIGRATIONS.len() as i64);
    let c = Connection::open(&path).unwrap();
    let row: (String, String, String) = c
        .query_row("SELECT p.key, p.credential_ref, m.digest FROM ai_model_pin m JOIN ai_provider p ON p.key = m.provider", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(row, ("llama".into(), "secret://countersign/llama".into(), "sha256:ab".into()));
    assert_eq!(scalar(&path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    c.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    c.execute(
        "INSERT INTO ai_provider VALUES ('builtin', 'built_in', 'built-in', NULL, 'json_schema', 'this machine', 'none', '2026-12-01T00:00:00Z', 'ava')",
        [],
    )
    .unwrap();
    // The pins reference the providers table by its final name: a pin of the new provider is
    // accepted, a pin of an unknown one refused.
    c.execute(
        "INSERT INTO ai_model_pin VALUES ('builtin', 'builtin', 'builtin', 'sha256:ef', 's', '{}', 0, 1, 0, 0, 'USD', 't', 'ava', NULL)",
        [],
    )
    .unwrap();
    let e = c.execute(
        "INSERT INTO ai_model_pin VALUES ('x', 'nobody', 'm', 'd', 's', '{}', 0, 1, 0, 0, 'USD', 't', 'ava', NULL)",
        [],
    );
    assert!(e.is_err(), "a pin of an unknown provider is refused");
}

#[test]
fn a_restore_refuses_a_newer_file_another_file_and_a_user_without_deploy_and_changes_nothing() {
    let f = demo();
    let path = f.ws.path().to_path_buf();
    let b = f.ws.back_up().unwrap();
    let newer = f.dir.path().join("newer.countersign");
    std::fs::copy(&b.path, &newer).unwrap();
    Connection::open(&newer).unwrap().execute_batch("PRAGMA user_version = 999").unwrap();
    let not_ours = f.dir.path().join("notes.txt");
    std::fs::write(&not_ours, "not a database").unwrap();
    let clock = f.clock.clone();
    drop(f.ws);
    let before = dump(&path);
    let e = open::restore(&path, &newer, "ava", options(&clock)).unwrap_err();
    assert_eq!(e.code, Code::StoreTooNew);
    assert!(e.message.contains("nothing was restored"), "{}", e.message);
    assert_eq!(
        open::restore(&path, &not_ours, "ava", options(&clock)).unwrap_err().code,
        Code::NotAWorkspace
    );
    assert_eq!(
        open::restore(&path, Path::new(&b.path), "ben", options(&clock)).unwrap_err().code,
        Code::Permission
    );
    assert_eq!(dump(&path), before);
    assert_eq!(backup::list(&path).unwrap().len(), 1, "no backup taken for a refused restore");
}
