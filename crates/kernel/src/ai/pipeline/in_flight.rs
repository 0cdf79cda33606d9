//! In-flight slots: the running trace row is a call's claim on its capability's concurrency, in
//! every process that opens the workspace, held by a lease that the call renews whenever it
//! comes back to the kernel; a claim whose process is gone or whose lease ran out is closed as
//! `abandoned`.

use super::budget::rate_error;
use super::*;
use crate::clock::{timestamp, Clock};
use crate::error::Result;
use crate::records::access::Session;
use chrono::{DateTime, Duration as Span, Utc};
use rusqlite::params;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How long a claim on an in-flight slot lasts unless renewed: the longest one model call
/// may take under the capability's settings (every try of `chat_with_retry` at its full
/// timeouts, with its backoffs) plus [`LEASE_MARGIN`] for the kernel's own steps. The claim
/// is renewed each time the call comes back to the kernel (`renew_invocation`), so a call of
/// several model requests (a repair, tool calls) keeps its slot; a process killed outright
/// frees it when the lease runs out.
pub fn lease_span(settings: &CapabilitySettings) -> Span {
    let policy = crate::ai::provider::RetryPolicy::default();
    let per_try = settings.timeout_ms.saturating_add(settings.connect_timeout_ms as u64);
    let tries = policy.attempts.max(1) as u64;
    let backoffs = (policy.first_backoff.as_millis() as u64).saturating_mul(1 << tries.min(16));
    let ms = per_try.saturating_mul(tries).saturating_add(backoffs).min(MAX_LEASE_MS);
    Span::milliseconds(ms as i64) + LEASE_MARGIN
}

/// No claim outlasts a day, whatever the timeouts a binding sets (a huge one would overflow the
/// clock's arithmetic, or run the lease past year 9999 where it no longer compares as text).
pub(super) const MAX_LEASE_MS: u64 = 24 * 60 * 60 * 1000;

/// Time for the kernel's steps around a model call, on top of the call's own timeouts.
pub const LEASE_MARGIN: Span = Span::seconds(60);

/// The process holding a claim, as recorded in its trace row.
pub(super) fn holder() -> String {
    format!("pid {}", std::process::id())
}

/// Whether the process named by a trace row's `holder` is gone. A workspace in WAL mode is
/// only ever opened by processes of one machine, so a pid that no longer exists here means
/// the call's process died (killed, crashed) and its claim holds no slot, lease or not. A
/// reused pid only makes a dead claim look alive until its lease runs out.
pub(super) fn holder_gone(holder: Option<&str>) -> bool {
    let Some(pid) = holder.and_then(|h| h.strip_prefix("pid ")).and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    if pid == std::process::id() {
        return false;
    }
    process_gone(pid)
}

#[cfg(unix)]
pub(super) fn process_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 checks that the process exists and sends nothing.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

#[cfg(not(unix))]
pub(super) fn process_gone(_pid: u32) -> bool {
    false
}

/// An invocation's hold on its trace row. While the row is `running` with an unexpired lease
/// it takes one of the capability's concurrency slots for the user, in every process that
/// opens the workspace. Completing the row releases it; an invocation dropped without being
/// completed (its caller gave up) closes the row as `abandoned` itself, through a connection of
/// its own since no session is at hand; a process killed outright leaves the lease to run out,
/// and the next open of the workspace closes the row.
pub(super) struct Claim {
    pub(super) path: PathBuf,
    pub(super) trace_id: String,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) done: AtomicBool,
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim").field("trace_id", &self.trace_id).field("done", &self.done).finish()
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.done.load(Ordering::SeqCst) {
            return;
        }
        // Best effort: when the file cannot be written now, the lease runs out and the next
        // open closes the row.
        let _ = (|| -> Result<()> {
            let conn = rusqlite::Connection::open_with_flags(
                &self.path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | rusqlite::OpenFlags::SQLITE_OPEN_URI,
            )?;
            conn.busy_timeout(std::time::Duration::from_secs(2))?;
            let why = format!("the call was given up before it finished ({})", holder());
            abandon(&conn, &self.trace_id, None, &timestamp(self.clock.now()), &why)?;
            Ok(())
        })();
    }
}

/// Close a running trace row as `abandoned`, charged at its estimate (what it really cost is
/// unknown; the estimate is its ceiling). A row that is no longer running — or, given
/// `lease`, whose lease is no longer that one (its call renewed it meanwhile) — is left alone.
pub(super) fn abandon(
    conn: &rusqlite::Connection,
    id: &str,
    lease: Option<Option<&str>>,
    now: &str,
    why: &str,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE ai_trace SET outcome = ?2, finished_at = ?3, cost = estimated_cost, fault = 'platform',
            message = ?4
         WHERE id = ?1 AND outcome = ?5 AND (?6 OR lease_until IS ?7)",
        params![
            id,
            TraceOutcome::Abandoned.as_str(),
            now,
            format!("{why}; charged at its estimate"),
            TraceOutcome::Running.as_str(),
            lease.is_none(),
            lease.flatten()
        ],
    )?;
    Ok(n > 0)
}

/// On opening a workspace: close as `abandoned` every running trace row whose claim ran out —
/// its process stopped without completing it (killed, crashed, the machine went down). A row
/// without a lease (written by an older Countersign, or killed between its two first steps)
/// runs out a lease span after it started. A row whose lease still holds belongs to a call
/// that may be running in another process and is left alone. Returns how many were closed.
pub(crate) fn close_abandoned(conn: &rusqlite::Connection, now: DateTime<Utc>) -> Result<usize> {
    struct Running {
        id: String,
        started_at: String,
        lease_until: Option<String>,
        holder: Option<String>,
        settings: Option<String>,
    }
    let now_text = timestamp(now);
    // Read first: most opens find nothing to close and take no write lock.
    let rows: Vec<Running> = {
        let mut stmt = conn.prepare(
            "SELECT t.id, t.started_at, t.lease_until, t.holder, c.settings
             FROM ai_trace t LEFT JOIN ai_capability c ON c.key = t.capability WHERE t.outcome = ?1",
        )?;
        let rows = stmt.query_map([TraceOutcome::Running.as_str()], |r| {
            Ok(Running {
                id: r.get(0)?,
                started_at: r.get(1)?,
                lease_until: r.get(2)?,
                holder: r.get(3)?,
                settings: r.get(4)?,
            })
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut stale = vec![];
    for row in rows {
        let until = match &row.lease_until {
            Some(t) => t.clone(),
            None => {
                let span = row
                    .settings
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<CapabilitySettings>(s).ok())
                    .map_or(Span::hours(1), |s| lease_span(&s));
                match DateTime::parse_from_rfc3339(&row.started_at) {
                    Ok(t) => timestamp(t.with_timezone(&Utc) + span),
                    Err(_) => now_text.clone(),
                }
            }
        };
        let gone = holder_gone(row.holder.as_deref());
        if gone || until <= now_text {
            stale.push((row, until, gone));
        }
    }
    if stale.is_empty() {
        return Ok(0);
    }
    // Each row is closed only if its lease is still the one read: a call that renewed its
    // claim meanwhile is alive.
    let tx = crate::store::immediate(conn)?;
    let mut closed = 0;
    for (row, until, gone) in &stale {
        let by = row.holder.as_ref().map_or(String::new(), |h| format!(" ({h})"));
        let why = if *gone {
            format!("the process running this call{by} stopped before it finished")
        } else {
            format!(
                "the process running this call{by} stopped before it finished; its claim ran out at {until}"
            )
        };
        if abandon(&tx, &row.id, Some(row.lease_until.as_deref()), &now_text, &why)? {
            closed += 1;
        }
    }
    tx.commit()?;
    Ok(closed)
}

impl Session<'_> {
    /// Take one of the capability's concurrency slots for this user: in one IMMEDIATE
    /// transaction, count the user's running calls of the capability whose claim holds (in any
    /// process), and put a lease on this invocation's row if there is room.
    pub(super) fn claim_slot(&self, inv: &Invocation) -> Result<()> {
        let tx = crate::store::immediate(self.ws.conn())?;
        self.lease_if_room(&tx, &inv.capability, &inv.actor, &inv.trace_id)?;
        tx.commit()?;
        Ok(())
    }

    /// Inside `tx` (IMMEDIATE): count `actor`'s running calls of the capability whose claim
    /// holds, in any process, and lease the row `trace_id` if there is room. Invocations and
    /// served calls (the MCP server's tools) take their slots here alike.
    pub(super) fn lease_if_room(
        &self,
        tx: &rusqlite::Transaction<'_>,
        cap: &CapabilityBinding,
        actor: &str,
        trace_id: &str,
    ) -> Result<()> {
        let max = cap.settings.rate.concurrency;
        let now = self.ws.clock.now();
        let holders: Vec<Option<String>> = tx
            .prepare(
                "SELECT holder FROM ai_trace WHERE actor = ?1 AND capability = ?2 AND outcome = 'running'
                   AND lease_until > ?3 AND id <> ?4",
            )?
            .query_map(params![actor, cap.key, timestamp(now), trace_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        // A claim whose process died holds no slot (its row is closed on the next open).
        let running = holders.iter().filter(|h| !holder_gone(h.as_deref())).count() as u32;
        if running >= max {
            return Err(rate_error(format!(
                "{max} {} call(s) already running for you; wait for them or cancel one",
                cap.key
            )));
        }
        tx.execute(
            "UPDATE ai_trace SET lease_until = ?2 WHERE id = ?1",
            params![trace_id, timestamp(now + lease_span(&cap.settings))],
        )?;
        Ok(())
    }

    /// Renew the invocation's claim: called each time the call comes back to the kernel between
    /// model requests, so that a call of several requests keeps its slot. A row another process
    /// already closed as `abandoned` (this one was away longer than its lease) stays closed until
    /// the call completes it.
    pub fn renew_invocation(&self, inv: &Invocation) -> Result<()> {
        let until = self.ws.clock.now() + lease_span(&inv.capability.settings);
        self.ws.conn().execute(
            "UPDATE ai_trace SET lease_until = ?2 WHERE id = ?1 AND outcome = 'running'",
            params![inv.trace_id, timestamp(until)],
        )?;
        Ok(())
    }
}
