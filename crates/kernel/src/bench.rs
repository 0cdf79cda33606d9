//! `countersign-cli bench`: the kernel against hand-written SQL doing the same work, in the
//! same run, on the same file.
//!
//! Setup (not timed): the demo workspace, plus 10,000 accounts and `rows` invoices inserted
//! with raw SQL. Then:
//! - **query**: a filtered, sorted, limited query with a one-hop parent filter, run through
//!   [`Session::query`](crate::Session::query) (spec compile, access, SQL, JSON rows) and as a
//!   hand-written prepared statement; the two must return the same ids.
//! - **save**: single-field updates, each its own transaction, through the save path (access,
//!   coercion, validation rules, version guard, history) versus raw `UPDATE`, and versus raw
//!   `UPDATE` plus a raw history `INSERT`.
//! - **ops**: what a list does at scale, as a sales rep, each beside the raw SQL a person
//!   would write for the same rows on the same file (after the kernel's first uses and one
//!   `tune_indexes`, which the app runs in the background, so both read the same indexes): the
//!   first page, a page half-way down by keyset, sorts by three columns, a filter with a sort
//!   on another field, the count, a capped filtered count, a name search, a search over every
//!   text field (the spec's `search`), a related list and an Ask answer's query. p95 of each, and one JSON line per operation on stdout:
//!   `{"op", "p95_ms", "raw_p95_ms"}`.
//! - **import**: a CSV of `import_rows` accounts, 10 columns, imported all-or-nothing through
//!   the import (mapping, the checks and one save per row, its history entry, the value
//!   index, the kept counts and the text index) versus the same rows as raw `INSERT`s in one
//!   transaction into a twin of the table (same columns and indexes, none of the kernel's
//!   triggers), and raw `INSERT`s plus their history entry.

use crate::clock::timestamp;
use crate::error::{Error, Result};
use crate::records::query::QuerySpec;
use crate::records::save::table_of;
use crate::records::workspace::{Workspace, WorkspaceOptions};
use rusqlite::params;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct BenchOptions {
    pub rows: usize,
    /// Accounts in the import benchmark's CSV (0: no import benchmark).
    pub import_rows: usize,
    pub updates: usize,
    pub queries: usize,
    pub dir: Option<PathBuf>,
    /// Only make the benchmark's workspace (the demo, 10,000 accounts and `rows` invoices) at
    /// this path and keep it: the data set of the end-to-end test at scale.
    pub generate_only: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
pub struct BenchReport {
    pub invoices: usize,
    pub accounts: usize,
    pub query: QueryBench,
    pub save: SaveBench,
    /// The list at scale: pages, sorts, filters, counts, search, a related list, an Ask
    /// answer's query — each beside raw SQL (also printed as one JSON line per operation).
    pub ops: Vec<OpFigure>,
    pub tuned: Vec<TunedFigure>,
    pub ask: AskBench,
    /// The question reader alone, on the demo before the rows are generated and after.
    pub reader_demo: ReaderBench,
    pub reader: ReaderBench,
    pub import: Option<ImportBench>,
}

/// Rows per second importing a CSV, against raw inserts of the same rows.
#[derive(Debug, Serialize)]
pub struct ImportBench {
    pub rows: usize,
    pub columns: usize,
    pub kernel_rows_per_sec: f64,
    pub raw_insert_rows_per_sec: f64,
    pub raw_insert_and_history_rows_per_sec: f64,
    pub ratio_vs_raw_insert: f64,
    pub ratio_vs_raw_insert_and_history: f64,
    /// The process's peak resident memory after the import (the benchmark's own CSV text,
    /// held in memory, included).
    pub peak_rss_mib: f64,
}

/// Ask's question reader (prompt versions 4 and 5) alone: the candidate conditions of a few
/// questions, against the hand-written SQL that reads the same value index (each question
/// word's probe looked up for every short text field). The scan is what the reader would cost
/// without the index: every short text field's values containing a question word.
#[derive(Debug, Serialize)]
pub struct ReaderBench {
    pub questions: usize,
    pub reader_p50_ms: f64,
    pub raw_p50_ms: f64,
    pub ratio: f64,
    pub scan_p50_ms: f64,
}

/// Ask without the model: the kernel's part of one Ask call (authorize, budget, grounding,
/// trace row, constrain, name resolution, the query, trace completion) against the same query
/// spec run directly — the model's answer is fixed, no network.
#[derive(Debug, Serialize)]
pub struct AskBench {
    pub runs: usize,
    pub question: String,
    pub ask_kernel_median_ms: f64,
    pub query_median_ms: f64,
    /// Everything Ask adds to the query, per call.
    pub overhead_ms: f64,
    pub ratio: f64,
}

/// One operation of a list at scale, through the kernel as a sales rep and as the raw SQL a
/// person would write for the same rows, each timed `runs` times; the rows must be the same.
#[derive(Debug, Serialize)]
pub struct OpFigure {
    pub op: String,
    pub p95_ms: f64,
    pub raw_p95_ms: f64,
    /// kernel p95 / raw p95.
    pub ratio: f64,
    pub rows: usize,
    pub same_rows: bool,
}

/// Indexes the scale benchmark's first uses made (`tune_indexes`, as the app runs it in the
/// background), with what each cost.
#[derive(Debug, Serialize)]
pub struct TunedFigure {
    pub shape: String,
    pub build_ms: u64,
}

#[derive(Debug, Serialize)]
pub struct QueryBench {
    pub spec: Value,
    pub raw_sql: String,
    pub kernel_sql: String,
    pub runs: usize,
    pub rows_returned: usize,
    pub kernel_median_ms: f64,
    pub raw_median_ms: f64,
    /// kernel / raw (goal ≤ 1.5).
    pub ratio: f64,
    pub same_ids: bool,
}

#[derive(Debug, Serialize)]
pub struct SaveBench {
    pub updates: usize,
    pub kernel_per_sec: f64,
    pub raw_update_per_sec: f64,
    pub raw_update_and_history_per_sec: f64,
    /// kernel / raw UPDATE (goal ≥ 0.25).
    pub ratio_vs_raw_update: f64,
    pub ratio_vs_raw_update_and_history: f64,
}

/// A small deterministic generator (xorshift64*), so every run builds the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const ACCOUNTS: usize = 10_000;
const INDUSTRIES: [&str; 7] =
    ["software", "manufacturing", "retail", "healthcare", "finance", "education", "logistics"];
const STATUSES: [&str; 5] = ["draft", "sent", "paid", "overdue", "void"];

/// Run the benchmarks; progress and a summary go to stderr, the figures are returned (none
/// with `generate_only`).
pub fn run(opts: &BenchOptions) -> Result<Option<BenchReport>> {
    let BenchOptions { rows, import_rows, updates, queries, dir, generate_only } = opts;
    let (rows, updates, queries) = (*rows, *updates, (*queries).max(1));
    if let Some(path) = generate_only {
        let (ws, _) = crate::open::create(path, crate::open::Start::Demo, WorkspaceOptions::default())?;
        generate(&ws, rows)?;
        return Ok(None);
    }
    let dir = dir.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("countersign-bench-{}.countersign", std::process::id()));
    let _cleanup = Cleanup(path.clone());
    let (ws, _) = crate::open::create(&path, crate::open::Start::Demo, WorkspaceOptions::default())?;
    let say = |s: String| eprintln!("{s}");
    let reader_line = |what: &str, r: &ReaderBench| {
        format!(
            "reader  {what}: p50 {:.2} ms   raw SQL reading the same index {:.2} ms   ratio {:.2}x   a scan of the values instead {:.2} ms   ({} questions)",
            r.reader_p50_ms, r.raw_p50_ms, r.ratio, r.scan_p50_ms, r.questions
        )
    };
    let reader_demo = bench_reader(&ws, queries)?;
    say(reader_line("demo", &reader_demo));
    let import = match *import_rows {
        0 => None,
        n => {
            let i = bench_import(&ws, n)?;
            say(format!(
                "import  kernel {:>8.0} rows/s   raw INSERT {:>8.0} rows/s   raw INSERT+history {:>8.0} rows/s   ratio {:.2} (goal >= 0.5), {:.2} vs raw+history   ({} rows x {} columns, peak memory {:.0} MiB)",
                i.kernel_rows_per_sec,
                i.raw_insert_rows_per_sec,
                i.raw_insert_and_history_rows_per_sec,
                i.ratio_vs_raw_insert,
                i.ratio_vs_raw_insert_and_history,
                i.rows,
                i.columns,
                i.peak_rss_mib
            ));
            Some(i)
        }
    };
    say(format!("bench: generating {ACCOUNTS} accounts and {rows} invoices in {}", path.display()));
    let t = Instant::now();
    generate(&ws, rows)?;
    say(format!("bench: generated in {:.1}s", t.elapsed().as_secs_f64()));

    let query = bench_query(&ws, queries)?;
    say(format!(
        "query   kernel {:>8.2} ms   raw SQL {:>8.2} ms   ratio {:.2}x (goal <= 1.5x)   same ids: {}",
        query.kernel_median_ms, query.raw_median_ms, query.ratio, query.same_ids
    ));
    let save = bench_save(&ws, rows, updates)?;
    say(format!(
        "save    kernel {:>8.0}/s   raw UPDATE {:>8.0}/s   raw UPDATE+history {:>8.0}/s   ratio {:.2} (goal >= 0.25), {:.2} vs raw+history",
        save.kernel_per_sec,
        save.raw_update_per_sec,
        save.raw_update_and_history_per_sec,
        save.ratio_vs_raw_update,
        save.ratio_vs_raw_update_and_history
    ));
    let (ops, tuned) = bench_ops(&ws, rows, queries.max(20))?;
    for t in &tuned {
        say(format!("tuned   an index for `{}` made in {} ms", t.shape, t.build_ms));
    }
    for o in &ops {
        say(format!(
            "op      {:<22} p95 {:>8.2} ms   raw SQL {:>8.2} ms   ratio {:.2}x   {} rows{}",
            o.op,
            o.p95_ms,
            o.raw_p95_ms,
            o.ratio,
            o.rows,
            if o.same_rows { "" } else { "   ROWS DIFFER" }
        ));
        println!("{}", json!({"op": o.op, "p95_ms": o.p95_ms, "raw_p95_ms": o.raw_p95_ms}));
    }
    let ask = bench_ask(&ws, queries)?;
    say(format!(
        "ask     kernel part {:.2} ms   same spec as a query {:.2} ms   overhead {:.2} ms per call ({:.2}x)",
        ask.ask_kernel_median_ms, ask.query_median_ms, ask.overhead_ms, ask.ratio
    ));
    let reader = bench_reader(&ws, queries)?;
    say(reader_line(&format!("{rows} invoices"), &reader));
    Ok(Some(BenchReport {
        invoices: rows,
        accounts: ACCOUNTS,
        query,
        save,
        ops,
        tuned,
        ask,
        reader_demo,
        reader,
        import,
    }))
}

/// Questions of the kinds the reader reads (names, values, terms, quantities, dates, related).
const READER_QUESTIONS: &[(&str, &str)] = &[
    ("cara", "Show all paid invoices of Monarch Holdings."),
    ("ava", "German customers with revenue over 20 million"),
    ("cara", "Unpaid invoices in euros issued in 2025"),
    ("ava", "Accounts that have overdue invoices"),
    ("ava", "Contacts who are engineers at accounts in Toronto"),
    ("ava", "Accounts that are not in Lyon or Paris"),
    ("cara", "die größte Rechnung von Globex Holdings"),
    ("cara", "Invoice lines on invoices of Globex Holdings with a quantity over a dozen"),
    ("ava", "oportunidades sin próximo paso cerradas el trimestre pasado"),
];

fn bench_reader(ws: &Workspace, runs: usize) -> Result<ReaderBench> {
    let (mut reader_times, mut raw_times, mut scan_times) = (vec![], vec![], vec![]);
    let conn = ws.raw_connection();
    let catalog = ws.catalog()?.clone();
    let text_fields = crate::records::value_index::indexed_fields(&catalog);
    for (user, question) in READER_QUESTIONS {
        let session = ws.session(user)?;
        let p = session.whole_grounding().projection.clone();
        let objects: Vec<String> = p.objects.iter().map(|o| o.key.clone()).collect();
        let words: Vec<String> = crate::records::value_index::words(question)
            .into_iter()
            .filter(|w| w.chars().count() >= 3)
            .collect();
        let probes: Vec<String> =
            words.iter().filter_map(|w| crate::records::value_index::probe(w)).collect();
        for run in 0..runs.max(1) {
            let t = Instant::now();
            std::hint::black_box(session.read_question(question, &p, &objects)?);
            reader_times.push(t.elapsed());
            let t = Instant::now();
            let mut lookup = conn.prepare_cached(
                "SELECT value FROM value_probe WHERE probe = ?1 AND object = ?2 AND field = ?3 ORDER BY value LIMIT 500",
            )?;
            for (object, _, field) in &text_fields {
                for probe in &probes {
                    let n = lookup.query_map(params![probe, object, field], |_| Ok(()))?.count();
                    std::hint::black_box(n);
                }
            }
            raw_times.push(t.elapsed());
            // The scan is only the reference of what the index saves (seconds on a million
            // rows): three runs of it are enough.
            if run >= 3 {
                continue;
            }
            let t = Instant::now();
            for (_, table, field) in &text_fields {
                let col = crate::metadata::catalog::column(field);
                let any: Vec<String> =
                    words.iter().map(|_| format!("instr(lower({col}), lower(?)) > 0")).collect();
                if any.is_empty() {
                    continue;
                }
                let sql = format!("SELECT id, {col} FROM {table} WHERE {} LIMIT 5000", any.join(" OR "));
                let n = conn
                    .prepare_cached(&sql)?
                    .query_map(rusqlite::params_from_iter(words.iter()), |_| Ok(()))?
                    .count();
                std::hint::black_box(n);
            }
            scan_times.push(t.elapsed());
        }
    }
    let (r, q) = (median(reader_times), median(raw_times));
    Ok(ReaderBench {
        questions: READER_QUESTIONS.len(),
        reader_p50_ms: r,
        raw_p50_ms: q,
        ratio: r / q,
        scan_p50_ms: median(scan_times),
    })
}

struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.0.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
}

fn generate(ws: &Workspace, rows: usize) -> Result<()> {
    let conn = ws.raw_connection();
    let now = timestamp(chrono::Utc::now());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let tx = crate::store::immediate(conn)?;
    {
        let mut acc = tx.prepare(&format!(
            "INSERT INTO {} (id, owner, version, created_at, updated_at, \"f_name\", \"f_industry\", \"f_type\", \"f_annual_revenue\")
             VALUES (?1, 'ava', 1, ?2, ?2, ?3, ?4, 'customer', ?5)",
            table_of("account")
        ))?;
        for i in 0..ACCOUNTS {
            let industry = INDUSTRIES[rng.below(INDUSTRIES.len() as u64) as usize];
            acc.execute(params![
                format!("bacc_{i:05}"),
                now,
                format!("Bench Account {i}"),
                industry,
                (rng.below(50_000_000) * 100) as f64
            ])?;
        }
        let mut inv = tx.prepare(&format!(
            "INSERT INTO {} (id, owner, version, created_at, updated_at, \"f_number\", \"f_account\", \"f_status\",
                \"f_issue_date\", \"f_due_date\", \"f_paid_date\", \"f_total\", \"f_currency_code\", \"f_po_number\")
             VALUES (?1, ?2, 1, ?3, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'USD', ?11)",
            table_of("invoice")
        ))?;
        let owners = ["ava", "ben", "eve"];
        for i in 0..rows {
            let status = STATUSES[rng.below(STATUSES.len() as u64) as usize];
            let day = rng.below(700);
            let issue = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).expect("date") + chrono::Days::new(day);
            let due = issue + chrono::Days::new(30);
            let paid = (status == "paid").then(|| (issue + chrono::Days::new(20)).to_string());
            inv.execute(params![
                format!("binv_{i:07}"),
                owners[i % 3],
                now,
                format!("BINV-{i:07}"),
                format!("bacc_{:05}", rng.below(ACCOUNTS as u64)),
                status,
                issue.to_string(),
                due.to_string(),
                paid,
                (rng.below(10_000_000) as f64) / 100.0,
                format!("PO-{}", rng.below(100_000)),
            ])?;
        }
    }
    crate::records::value_index::rebuild(&tx, &ws.catalog()?.clone())?;
    tx.commit()?;
    conn.execute_batch("ANALYZE")?;
    Ok(())
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

/// The query an Ask answer runs in the benchmarks: three filters (one through the parent), a
/// sort, a limit.
fn ask_answer_spec() -> Value {
    json!({
        "object": "invoice",
        "fields": ["number", "status", "total", "account.name"],
        "filters": {"all": [
            {"field": "status", "op": "eq", "value": "overdue"},
            {"field": "account.industry", "op": "eq", "value": "software"},
            {"field": "issue_date", "op": "gte", "value": "2025-06-01"}
        ]},
        "sort": [{"field": "total", "direction": "desc"}],
        "limit": 50
    })
}

fn bench_query(ws: &Workspace, runs: usize) -> Result<QueryBench> {
    let spec_json = ask_answer_spec();
    let spec = QuerySpec::from_json(&spec_json)?;
    let session = ws.session("ben")?;
    let raw_sql = format!(
        "SELECT i.id, i.\"f_number\", i.\"f_status\", i.\"f_total\", a.\"f_name\"
         FROM {} i JOIN {} a ON a.id = i.\"f_account\"
         WHERE i.\"f_status\" = ?1 AND a.\"f_industry\" = ?2 AND i.\"f_issue_date\" >= ?3
         ORDER BY i.\"f_total\" DESC, i.id LIMIT 50",
        table_of("invoice"),
        table_of("account")
    );
    let conn = ws.raw_connection();
    let raw = || -> Result<Vec<String>> {
        let mut stmt = conn.prepare_cached(&raw_sql)?;
        let rows = stmt.query_map(params!["overdue", "software", "2025-06-01"], |r| {
            let id: String = r.get(0)?;
            let _number: String = r.get(1)?;
            let _status: String = r.get(2)?;
            let _total: f64 = r.get(3)?;
            let _name: String = r.get(4)?;
            Ok(id)
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    };
    // Warm both (page cache, statement cache).
    let raw_ids = raw()?;
    let kernel_ids: Vec<String> = session
        .query(&spec)?
        .records
        .iter()
        .map(|r| r["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let (mut k, mut r) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        let res = session.query(&spec)?;
        std::hint::black_box(&res);
        k.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(raw()?);
        r.push(t.elapsed());
    }
    let (km, rm) = (median(k), median(r));
    Ok(QueryBench {
        spec: spec_json,
        kernel_sql: session.explain(&spec)?,
        raw_sql,
        runs,
        rows_returned: raw_ids.len(),
        kernel_median_ms: km,
        raw_median_ms: rm,
        ratio: km / rm,
        same_ids: raw_ids == kernel_ids && !raw_ids.is_empty(),
    })
}

/// The process's peak resident set (Linux `VmHWM`), 0 where it cannot be read.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn p95(mut v: Vec<Duration>) -> f64 {
    v.sort();
    let i = ((v.len() as f64) * 0.95).ceil() as usize;
    v[i.saturating_sub(1).min(v.len() - 1)].as_secs_f64() * 1000.0
}

/// The kernel's side of one operation.
enum Kernel {
    Query(Value),
    Count(Value),
}

fn bench_ops(ws: &Workspace, rows: usize, runs: usize) -> Result<(Vec<OpFigure>, Vec<TunedFigure>)> {
    let session = ws.session("ben")?;
    let conn = ws.raw_connection();
    let (inv, acc) = (table_of("invoice"), table_of("account"));
    let fields = json!(["number", "account.name", "status", "issue_date", "total"]);
    let select = format!(
        "SELECT i.id, i.\"f_number\", a.\"f_name\", i.\"f_status\", i.\"f_issue_date\", i.\"f_total\" FROM {inv} i LEFT JOIN {acc} a ON a.id = i.\"f_account\""
    );
    let page = |sort: Value, extra: Value| {
        let mut spec = json!({"object": "invoice", "fields": fields, "sort": sort, "limit": 200});
        if let (Some(m), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        spec
    };
    // The row half-way down by number: where a page 500,000 rows down starts (found once).
    let half = (rows / 2).max(1) as i64;
    let (mid_number, mid_row): (String, i64) = conn.query_row(
        &format!("SELECT \"f_number\", rowid FROM {inv} ORDER BY \"f_number\", rowid LIMIT 1 OFFSET ?1"),
        [half - 1],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    // The related list of an account that has invoices: the first generated invoice's.
    let account: String =
        conn.query_row(&format!("SELECT \"f_account\" FROM {inv} WHERE id = 'binv_0000000'"), [], |r| {
            r.get(0)
        })?;
    type RawParams = Vec<Box<dyn rusqlite::ToSql>>;
    let ops: Vec<(&str, Kernel, String, RawParams)> = vec![
        (
            "first_page",
            Kernel::Query(page(json!([{"field": "number"}]), json!({}))),
            format!("{select} ORDER BY i.\"f_number\", i.rowid LIMIT 200"),
            vec![],
        ),
        (
            "page_500k_keyset",
            Kernel::Query(page(json!([{"field": "number"}]), json!({"after": {"values": [mid_number], "row": mid_row}}))),
            format!("{select} WHERE (i.\"f_number\", i.rowid) > (?1, ?2) ORDER BY i.\"f_number\", i.rowid LIMIT 200"),
            vec![Box::new(mid_number.clone()), Box::new(mid_row)],
        ),
        (
            "sort_total_desc",
            Kernel::Query(page(json!([{"field": "total", "direction": "desc"}]), json!({}))),
            format!("{select} ORDER BY i.\"f_total\" DESC, i.rowid LIMIT 200"),
            vec![],
        ),
        (
            "sort_status",
            Kernel::Query(page(json!([{"field": "status"}]), json!({}))),
            format!("{select} ORDER BY i.\"f_status\", i.rowid LIMIT 200"),
            vec![],
        ),
        (
            "sort_due_date_desc",
            Kernel::Query(page(json!([{"field": "due_date", "direction": "desc"}]), json!({}))),
            format!("{select} ORDER BY i.\"f_due_date\" DESC, i.rowid LIMIT 200"),
            vec![],
        ),
        (
            "filter_sort_two_fields",
            Kernel::Query(page(
                json!([{"field": "issue_date", "direction": "desc"}]),
                json!({"filters": {"field": "status", "op": "eq", "value": "overdue"}}),
            )),
            format!("{select} WHERE i.\"f_status\" = ?1 ORDER BY i.\"f_issue_date\" DESC, i.rowid LIMIT 200"),
            vec![Box::new("overdue")],
        ),
        ("count", Kernel::Count(json!({"object": "invoice"})), format!("SELECT count(*) FROM {inv}"), vec![]),
        (
            "count_filtered_capped",
            Kernel::Count(json!({"object": "invoice", "filters": {"field": "status", "op": "eq", "value": "overdue"}})),
            format!("SELECT count(*) FROM (SELECT 1 FROM {inv} WHERE \"f_status\" = ?1 LIMIT 10001)"),
            vec![Box::new("overdue")],
        ),
        (
            "search_name_contains",
            Kernel::Query(page(
                json!([{"field": "number"}]),
                json!({"filters": {"field": "number", "op": "contains", "value": "00042"}}),
            )),
            format!("{select} WHERE i.\"f_number\" LIKE '%00042%' ORDER BY i.\"f_number\", i.rowid LIMIT 200"),
            vec![],
        ),
        (
            "search_all_text",
            Kernel::Query(page(json!([{"field": "number"}]), json!({"search": "4211"}))),
            format!(
                "{select} WHERE (i.\"f_number\" LIKE '%4211%' OR i.\"f_po_number\" LIKE '%4211%'
                   OR i.\"f_account\" IN (SELECT a.id FROM {acc} a WHERE a.\"f_name\" LIKE '%4211%')
                   OR i.id IN (SELECT record_id FROM corpus WHERE corpus MATCH '\"4211\"*' AND object = 'invoice' AND field = 'notes'))
                 ORDER BY i.\"f_number\", i.rowid LIMIT 200"
            ),
            vec![],
        ),
        (
            "related_list",
            Kernel::Query(json!({"object": "invoice", "fields": ["number", "status", "issue_date", "total"],
                "filters": {"field": "account", "op": "eq", "value": account.clone()},
                "sort": [{"field": "issue_date", "direction": "desc"}], "limit": 50})),
            format!(
                "SELECT i.id, i.\"f_number\", i.\"f_status\", i.\"f_issue_date\", i.\"f_total\" FROM {inv} i
                 WHERE i.\"f_account\" = ?1 ORDER BY i.\"f_issue_date\" DESC, i.rowid LIMIT 50"
            ),
            vec![Box::new(account.clone())],
        ),
        (
            "ask_answer_query",
            Kernel::Query(ask_answer_spec()),
            format!(
                "SELECT i.id, i.\"f_number\", i.\"f_status\", i.\"f_total\", a.\"f_name\" FROM {inv} i JOIN {acc} a ON a.id = i.\"f_account\"
                 WHERE i.\"f_status\" = ?1 AND a.\"f_industry\" = ?2 AND i.\"f_issue_date\" >= ?3
                 ORDER BY i.\"f_total\" DESC, i.rowid LIMIT 50"
            ),
            vec![Box::new("overdue"), Box::new("software"), Box::new("2025-06-01")],
        ),
    ];
    let kernel = |k: &Kernel| -> Result<Vec<String>> {
        Ok(match k {
            Kernel::Query(spec) => session
                .query(&QuerySpec::from_json(spec)?)?
                .records
                .iter()
                .map(|r| r["id"].as_str().unwrap_or_default().to_string())
                .collect(),
            Kernel::Count(spec) => {
                let c = session.count_records(&QuerySpec::from_json(spec)?, false)?;
                vec![c.n.to_string()]
            }
        })
    };
    let raw = |sql: &str, params: &RawParams| -> Result<Vec<String>> {
        let mut stmt = conn.prepare_cached(sql)?;
        let p: Vec<&dyn rusqlite::ToSql> = params.iter().map(|b| b.as_ref()).collect();
        let out = if sql.starts_with("SELECT count(*)") {
            // The capped count reads up to one past the cap, and says the cap ("10,000+").
            let n = stmt.query_row(p.as_slice(), |r| r.get::<_, i64>(0))?;
            let capped = sql.contains("LIMIT 10001");
            vec![if capped { n.min(crate::records::counts::COUNT_CAP as i64) } else { n }.to_string()]
        } else {
            stmt.query_map(p.as_slice(), |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<_>>()?
        };
        Ok(out)
    };
    // First uses, as a person's would be; then the background tuning the app runs.
    for (_, k, _, _) in &ops {
        for _ in 0..3 {
            kernel(k)?;
        }
    }
    let tuned = ws
        .tune_indexes(&Default::default())?
        .created
        .into_iter()
        .map(|i| TunedFigure { shape: format!("{}: {}", i.object, i.shape), build_ms: i.build_ms })
        .collect();
    conn.execute_batch("ANALYZE")?;
    let mut figures = Vec::new();
    for (op, k, sql, params) in &ops {
        let (kernel_rows, raw_rows) = (kernel(k)?, raw(sql, params)?);
        let (mut kt, mut rt) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            std::hint::black_box(kernel(k)?);
            kt.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(raw(sql, params)?);
            rt.push(t.elapsed());
        }
        let (p, r) = (p95(kt), p95(rt));
        figures.push(OpFigure {
            op: op.to_string(),
            p95_ms: p,
            raw_p95_ms: r,
            ratio: p / r,
            rows: if matches!(k, Kernel::Count(_)) { 1 } else { kernel_rows.len() },
            same_rows: kernel_rows == raw_rows,
        });
    }
    Ok((figures, tuned))
}

/// The import benchmark's columns: ten account fields of every kind the CSV holds.
const IMPORT_COLUMNS: [&str; 10] = [
    "name",
    "industry",
    "type",
    "rating",
    "annual_revenue",
    "employees",
    "website",
    "phone",
    "billing_city",
    "billing_country",
];

fn import_row(i: usize, rng: &mut Rng) -> [String; 10] {
    const INDUSTRIES: [&str; 5] = ["software", "retail", "finance", "healthcare", "logistics"];
    const CITIES: [&str; 4] = ["Berlin", "Lyon", "Toronto", "Austin"];
    [
        format!("Imported {i}"),
        INDUSTRIES[rng.below(5) as usize].to_string(),
        "customer".to_string(),
        "warm".to_string(),
        format!("{}.00", 10_000 + rng.below(9_000_000)),
        rng.below(5000).to_string(),
        format!("https://imported{i}.example"),
        format!("+1 555 {:04}", rng.below(10_000)),
        CITIES[rng.below(4) as usize].to_string(),
        "Germany".to_string(),
    ]
}

fn bench_import(ws: &Workspace, rows: usize) -> Result<ImportBench> {
    let mut rng = Rng(7);
    let mut csv = IMPORT_COLUMNS.join(",");
    csv.push('\n');
    for i in 0..rows {
        csv.push_str(&import_row(i, &mut rng).join(","));
        csv.push('\n');
    }
    let session = ws.session("ava")?;
    let t = Instant::now();
    let report =
        crate::records::import::import_csv(&session, "account", csv.as_bytes(), &Default::default())?;
    let kernel = rows as f64 / t.elapsed().as_secs_f64();
    let peak_rss_mib = peak_rss_mib();
    if !report.committed || report.imported as usize != rows {
        return Err(Error::internal(format!(
            "the import benchmark's CSV did not import: {:?}",
            report.errors.first()
        )));
    }
    let conn = ws.raw_connection();
    let cols: Vec<String> = IMPORT_COLUMNS.iter().map(|c| crate::metadata::catalog::column(c)).collect();
    // The raw rows go into a twin of the account table: the same columns and indexes, without
    // the kernel's triggers (its counts and name index are the kernel's work, not SQLite's).
    let twin = "\"bench_raw_account\"";
    let make_twin = || -> Result<()> {
        let mut ddl: Vec<String> = conn
            .prepare("SELECT sql FROM sqlite_master WHERE tbl_name = ?1 AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type DESC")?
            .query_map([table_of("account").trim_matches('"')], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for d in &mut ddl {
            *d = d
                .replace(&table_of("account"), twin)
                .replace("CREATE INDEX \"", "CREATE INDEX \"raw_")
                .replace("CREATE UNIQUE INDEX \"", "CREATE UNIQUE INDEX \"raw_");
        }
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {twin}; {};", ddl.join(";\n")))?;
        Ok(())
    };
    let insert = format!(
        "INSERT INTO {twin} (id, owner, version, created_at, updated_at, {}) VALUES (?1, 'ava', 1, ?2, ?2, {})",
        cols.join(", "),
        (3..13).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
    );
    let history = "INSERT INTO data_history (object, record_id, op, field, old_value, new_value, actor, proposed_by, correlation_id, at, record_version)
         VALUES ('account', ?1, 'create', '*', NULL, ?2, 'ava', NULL, 'raw-import', ?3, 1)";
    let raw = |prefix: &str, with_history: bool| -> Result<f64> {
        make_twin()?;
        let mut rng = Rng(7);
        let at = timestamp(chrono::Utc::now());
        let t = Instant::now();
        let tx = crate::store::immediate(conn)?;
        {
            let mut ins = tx.prepare_cached(&insert)?;
            let mut hist = tx.prepare_cached(history)?;
            for i in 0..rows {
                let id = format!("{prefix}{i:07}");
                let row = import_row(i, &mut rng);
                let mut values: Vec<&dyn rusqlite::ToSql> = vec![&id, &at];
                values.extend(row.iter().map(|v| v as &dyn rusqlite::ToSql));
                ins.execute(values.as_slice())?;
                if with_history {
                    let whole: Map<String, Value> = IMPORT_COLUMNS
                        .iter()
                        .zip(&row)
                        .map(|(c, v)| (c.to_string(), Value::String(v.clone())))
                        .collect();
                    hist.execute(params![id, Value::Object(whole).to_string(), at])?;
                }
            }
        }
        tx.commit()?;
        Ok(rows as f64 / t.elapsed().as_secs_f64())
    };
    let raw_insert = raw("rawimp_", false)?;
    let raw_history = raw("rawhist_", true)?;
    conn.execute_batch(&format!("DROP TABLE {twin}"))?;
    Ok(ImportBench {
        rows,
        columns: IMPORT_COLUMNS.len(),
        kernel_rows_per_sec: kernel,
        raw_insert_rows_per_sec: raw_insert,
        raw_insert_and_history_rows_per_sec: raw_history,
        ratio_vs_raw_insert: kernel / raw_insert,
        ratio_vs_raw_insert_and_history: kernel / raw_history,
        peak_rss_mib,
    })
}

fn bench_save(ws: &Workspace, rows: usize, updates: usize) -> Result<SaveBench> {
    if rows == 0 || updates == 0 {
        return Err(Error::new(crate::Code::InvalidQuery, "bench needs rows and updates"));
    }
    let session = ws.session("cara")?;
    let conn = ws.raw_connection();
    let mut rng = Rng(42);
    let mut pick = move || format!("binv_{:07}", rng.below(rows as u64));

    let t = Instant::now();
    for i in 0..updates {
        let mut changes = Map::new();
        changes.insert("po_number".into(), Value::String(format!("K-{i}")));
        session.update("invoice", &pick(), changes, None)?;
    }
    let kernel = updates as f64 / t.elapsed().as_secs_f64();

    let update_sql = format!(
        "UPDATE {} SET \"f_po_number\" = ?1, version = version + 1, updated_at = ?2 WHERE id = ?3",
        table_of("invoice")
    );
    let t = Instant::now();
    for i in 0..updates {
        let tx = crate::store::immediate(conn)?;
        tx.prepare_cached(&update_sql)?.execute(params![
            format!("R-{i}"),
            timestamp(chrono::Utc::now()),
            pick()
        ])?;
        tx.commit()?;
    }
    let raw_update = updates as f64 / t.elapsed().as_secs_f64();

    let t = Instant::now();
    for i in 0..updates {
        let tx = crate::store::immediate(conn)?;
        let id = pick();
        let at = timestamp(chrono::Utc::now());
        tx.prepare_cached(&update_sql)?.execute(params![format!("H-{i}"), at, id])?;
        tx.prepare_cached(
            "INSERT INTO data_history (object, record_id, op, field, old_value, new_value, actor, proposed_by, correlation_id, at, record_version)
             VALUES ('invoice', ?1, 'update', 'po_number', NULL, ?2, 'cara', NULL, ?3, ?4, 2)",
        )?
        .execute(params![id, format!("\"H-{i}\""), format!("raw-{i}"), at])?;
        tx.commit()?;
    }
    let raw_history = updates as f64 / t.elapsed().as_secs_f64();
    Ok(SaveBench {
        updates,
        kernel_per_sec: kernel,
        raw_update_per_sec: raw_update,
        raw_update_and_history_per_sec: raw_history,
        ratio_vs_raw_update: kernel / raw_update,
        ratio_vs_raw_update_and_history: kernel / raw_history,
    })
}

fn bench_ask(ws: &Workspace, runs: usize) -> Result<AskBench> {
    use crate::ai::ask::Ask;
    use crate::ai::pipeline::drive::{step, Step};
    use crate::ai::provider::{ChatResponse, Usage};
    let admin = ws.session("ava")?;
    let mut binding = admin.capability(crate::ai::ask::CAPABILITY)?;
    binding.settings.rate.per_minute = u32::MAX;
    admin.bind_capability(&binding)?;
    let session = ws.session("cara")?;
    let question = "Show all paid invoices of Monarch Holdings.";
    // The kernel reads "paid invoices" (c1) and "Monarch Holdings" (c2); the model chooses.
    let plan =
        serde_json::json!({"object": "invoice", "conditions": ["c1", "c2"], "sort": [], "limit": null})
            .to_string();
    let model = crate::ai::pipeline::ModelChoice::unstored(
        "http://127.0.0.1:9/v1",
        "fixed-answer",
        "none".into(),
        "none".into(),
        Value::Null,
    );
    let response = ChatResponse {
        content: plan,
        usage: Usage { prompt_tokens: 1700, completion_tokens: 40 },
        finish_reason: Some("stop".into()),
        timings: None,
        first_token_ms: None,
        total_ms: 0.0,
    };
    let mut ask_times = vec![];
    let mut spec = None;
    for _ in 0..runs {
        let t = Instant::now();
        // The steps `drive` takes, with the fixed answer in place of the model's.
        let mut ask = Ask { question: question.to_string() };
        let mut run = session.ask_begin(question, model.clone())?;
        match step(&session, &mut ask, &mut run, Ok(response.clone()))? {
            Step::Done(a) => spec = Some(a.spec),
            Step::Call => return Err(crate::Error::internal("the fixed answer needed a repair")),
        }
        ask_times.push(t.elapsed());
    }
    let spec = spec.ok_or_else(|| crate::Error::internal("no ask ran"))?;
    let query_times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            session.query(&spec).map(|_| t.elapsed())
        })
        .collect::<Result<_>>()?;
    let (a, q) = (median(ask_times), median(query_times));
    Ok(AskBench {
        runs,
        question: question.into(),
        ask_kernel_median_ms: a,
        query_median_ms: q,
        overhead_ms: a - q,
        ratio: a / q,
    })
}
