//! Deploying a definition: one IMMEDIATE transaction that brings the record tables in line
//! with the new definition and appends a metadata generation — or, for a preview, the same
//! transaction rolled back, reporting what it would change and every problem in the data.
//!
//! Every problem is found by looking at the data itself ([`plan`]):
//! - a loss: removing an object or field that holds values, a type change or narrowing
//!   (shorter `maxLength`, smaller precision or scale, a removed picklist value, a new lookup
//!   target) that existing values do not survive, removing a user who owns records. Refused
//!   with every loss listed, unless forced; forced, the values that do not survive are
//!   cleared (and listed). Retiring instead keeps everything;
//! - a unique field whose values repeat, a required field with blanks (and no default to fill
//!   them), a definition that leaves no active user able to deploy: refused, force or not.
//!
//! Each problem names its rows (the first [`ROWS_NAMED`], and how many in all).

mod plan;

pub use crate::metadata::diff::{diff, ChangeAction, MetadataChange};

use crate::clock::timestamp;
use crate::error::{Code, Detail, Error, Result};
use crate::metadata::catalog::Catalog;
use crate::metadata::definition::WorkspaceDefinition;
use crate::store;
use chrono::{DateTime, Utc};
use plan::Plan;
use rusqlite::{params, Connection};
use serde::Serialize;
use ts_rs::TS;

#[derive(Debug, Clone, Default)]
pub struct DeployOptions {
    /// Apply even if data would be lost.
    pub force: bool,
    /// Who deploys: a user key of the current generation with the `metadata.deploy`
    /// permission (recorded with the generation). The first deploy into an empty workspace
    /// (the bootstrap `init`) needs none and is recorded as `system`.
    pub user: Option<String>,
}

impl DeployOptions {
    /// Deploy as `user` (not forced).
    pub fn by(user: &str) -> DeployOptions {
        DeployOptions { force: false, user: Some(user.to_string()) }
    }
}

/// The system permission a user needs to deploy a new definition to an initialized workspace.
pub use crate::metadata::permissions::METADATA_DEPLOY as DEPLOY_PERMISSION;

/// How many rows a problem names; `count` says how many there are in all.
pub const ROWS_NAMED: usize = 20;

#[derive(Debug, Clone, Serialize)]
pub struct DeployReport {
    pub generation: i64,
    /// One line per change applied.
    pub changes: Vec<String>,
    /// Values cleared by a forced deploy.
    pub lost: Vec<Detail>,
}

/// Where a deploy is: its step, and how many of the deploy's steps are done. A deploy over a
/// million rows takes seconds (most in the backup); the app shows this while it runs.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeployProgress {
    pub step: DeployStep,
    /// Steps done before this one, of `steps`.
    pub done: u32,
    pub steps: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DeployStep {
    /// Copying the workspace to a backup, and checking the copy.
    Backup,
    /// Changing the record tables and checking the data against the new definition.
    Data,
    /// Bringing the indexes (value index, counts, name search, indexes that follow use) in line.
    Indexes,
    /// Writing the new generation.
    Commit,
}

impl DeployStep {
    pub const ALL: [DeployStep; 4] =
        [DeployStep::Backup, DeployStep::Data, DeployStep::Indexes, DeployStep::Commit];

    /// Tell `watch` this step begins; a cancel asked for before it stops the deploy here.
    pub(crate) fn begin(self, watch: &mut crate::records::Watch<'_, DeployProgress>) -> Result<()> {
        if (watch.cancelled)() {
            return Err(Error::new(Code::Cancelled, "the deploy was cancelled; nothing was changed"));
        }
        let done = Self::ALL.iter().position(|s| *s == self).unwrap_or(0) as u32;
        tracing::info!(step = ?self, "deploy step began");
        (watch.progress)(&DeployProgress { step: self, done, steps: Self::ALL.len() as u32 });
        Ok(())
    }
}

/// What a deploy would do, found by running it and rolling it back.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeployPreview {
    /// The generation the deploy would make.
    #[ts(type = "number")]
    pub generation: i64,
    pub changes: Vec<MetadataChange>,
    pub problems: Vec<DeployProblem>,
    /// Deploy would apply it as it is (no problem at all).
    pub applies: bool,
    /// Deploy would apply it only when forced (every problem is a loss of values).
    pub applies_forced: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// Records, values or owners a removal or narrowing would lose (force clears them).
    Loss,
    /// A unique field whose values repeat.
    Duplicates,
    /// A required field that some rows leave blank.
    RequiredBlanks,
    /// No active user would be left with the deploy permission.
    NoDeployer,
}

/// One problem a deploy finds in the data.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeployProblem {
    pub kind: ProblemKind,
    /// `/objects/{object}[/fields/{field}]` or `/users[/{user}]`.
    pub path: String,
    pub message: String,
    /// Ids of the rows concerned (the first [`ROWS_NAMED`]).
    pub rows: Vec<String>,
    #[ts(type = "number")]
    pub count: u64,
}

impl DeployProblem {
    /// Whether forcing the deploy accepts this problem (by clearing what does not survive).
    pub fn forceable(&self) -> bool {
        self.kind == ProblemKind::Loss
    }

    fn detail(&self) -> Detail {
        let rows = match self.rows.len() as u64 {
            0 => String::new(),
            n if n < self.count => format!(" (rows {} and {} more)", self.rows.join(", "), self.count - n),
            _ => format!(" (rows {})", self.rows.join(", ")),
        };
        Detail { path: self.path.clone(), message: format!("{}{rows}", self.message) }
    }
}

/// Run the deploy of `new` over `old` in a transaction left open: the caller commits it or
/// rolls it back, from the problems the plan found.
fn run<'c>(
    conn: &'c Connection,
    old: Option<&Catalog>,
    new: &WorkspaceDefinition,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<(Plan, Catalog, rusqlite::Transaction<'c>)> {
    let generation = old.map_or(0, |c| c.generation) + 1;
    let catalog = Catalog::compile(generation, new.clone())?;
    let tx = store::immediate(conn)?;
    let mut plan = Plan::new(actor, timestamp(now), generation);
    plan.apply(&tx, old.map(|c| &c.stored), new, &catalog)?;
    if old.is_some() && catalog.users_with(DEPLOY_PERMISSION).is_empty() {
        plan.problem(
            ProblemKind::NoDeployer,
            "/users".into(),
            format!(
                "no active user would keep the {DEPLOY_PERMISSION} permission, so nobody could change the workspace again"
            ),
            vec![],
            0,
        );
    }
    Ok((plan, catalog, tx))
}

/// What deploying `new` over `old` would change and every problem it would meet; nothing is
/// written.
pub(crate) fn preview(
    conn: &Connection,
    old: Option<&Catalog>,
    new: &WorkspaceDefinition,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<DeployPreview> {
    let (plan, catalog, tx) = run(conn, old, new, actor, now)?;
    tx.rollback()?;
    let problems = plan.problems;
    Ok(DeployPreview {
        generation: catalog.generation,
        changes: diff(old.map(|c| &c.stored), new),
        applies: problems.is_empty(),
        applies_forced: problems.iter().all(DeployProblem::forceable),
        problems,
    })
}

pub(crate) fn apply(
    conn: &Connection,
    old: Option<&Catalog>,
    new: &WorkspaceDefinition,
    opts: &DeployOptions,
    actor: &str,
    now: DateTime<Utc>,
    watch: &mut crate::records::Watch<'_, DeployProgress>,
) -> Result<(DeployReport, Catalog)> {
    DeployStep::Data.begin(watch)?;
    let (plan, catalog, tx) = run(conn, old, new, actor, now)?;
    let (losses, refusals): (Vec<_>, Vec<_>) = plan.problems.iter().partition(|p| p.forceable());
    if !refusals.is_empty() {
        return Err(Error::new(
            Code::InvalidDefinition,
            format!(
                "this deploy cannot apply to the data as it is ({} problem(s)); nothing was changed. First: {}",
                refusals.len(),
                refusals[0].detail().message
            ),
        )
        .with_details(refusals.iter().map(|p| p.detail()).collect()));
    }
    let lost: Vec<Detail> = losses.iter().map(|p| p.detail()).collect();
    if !lost.is_empty() && !opts.force {
        return Err(Error::new(
            Code::DestructiveChange,
            format!(
                "this deploy would lose data in {} place(s); nothing was changed. Retire instead of removing to keep it, or deploy with force to accept the loss.",
                lost.len()
            ),
        )
        .with_details(lost));
    }
    DeployStep::Indexes.begin(watch)?;
    crate::records::value_index::follow_deploy(&tx, old, &catalog)?;
    crate::records::counts::follow(&tx, &catalog)?;
    crate::records::text_index::follow(&tx, &catalog)?;
    crate::records::use_index::follow_deploy(&tx)?;
    DeployStep::Commit.begin(watch)?;
    let changes: Vec<String> =
        diff(old.map(|c| &c.stored), new).iter().map(MetadataChange::summary).collect();
    let definition = serde_json::to_string(new).map_err(|e| Error::internal(e.to_string()))?;
    tx.execute(
        "INSERT INTO metadata_generation (generation, definition, deployed_at, deployed_by, forced, summary)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            catalog.generation,
            definition,
            timestamp(now),
            actor,
            opts.force && !lost.is_empty(),
            serde_json::to_string(&changes).unwrap_or_default()
        ],
    )?;
    tx.commit()?;
    Ok((DeployReport { generation: catalog.generation, changes, lost }, catalog))
}

/// Load the newest generation, if any.
pub(crate) fn load_latest(conn: &Connection) -> Result<Option<Catalog>> {
    let row: Option<(i64, String)> = conn
        .query_row(
            "SELECT generation, definition FROM metadata_generation ORDER BY generation DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    match row {
        None => Ok(None),
        Some((generation, text)) => {
            let def: WorkspaceDefinition = serde_json::from_str(&text).map_err(|e| {
                Error::internal(format!("stored generation {generation} does not parse: {e}"))
            })?;
            Ok(Some(Catalog::compile(generation, def)?))
        }
    }
}
