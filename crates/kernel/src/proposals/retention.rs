//! Retention: open proposals expire at 30 days, discarded ones are purged at 90 days, accepted
//! (and undone) ones at 13 months; trace rows stay.

use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RetentionReport {
    pub expired: u32,
    pub purged_discarded: u32,
    pub purged_accepted: u32,
}

impl Session<'_> {
    pub(super) fn expire_if_due(&self, id: &str) -> Result<()> {
        let cutoff = timestamp(self.ws.clock.now() - Duration::days(OPEN_DAYS));
        let tx = crate::store::immediate(self.ws.conn())?;
        tx.execute(
            "UPDATE proposal SET state = 'expired', state_reason = ?2 WHERE id = ?1 AND state = 'open' AND created_at <= ?3",
            params![id, format!("not reviewed within {OPEN_DAYS} days"), cutoff],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The retention job: open proposals expire at 30 days (with the reason), discarded ones
    /// are purged at 90 days, accepted and undone ones at 13 months. Trace rows stay.
    pub fn run_retention(&self) -> Result<RetentionReport> {
        let now = self.ws.clock.now();
        let before = |days: i64| timestamp(now - Duration::days(days));
        // Read first: every open runs the job, and most find nothing due and take no write lock.
        let due: bool = self.ws.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM proposal WHERE (state = 'open' AND created_at <= ?1)
                OR (state = 'discarded' AND decided_at <= ?2) OR (state IN ('accepted', 'undone') AND decided_at <= ?3))",
            params![before(OPEN_DAYS), before(DISCARDED_KEEP_DAYS), before(ACCEPTED_KEEP_DAYS)],
            |r| r.get(0),
        )?;
        if !due {
            return Ok(RetentionReport { expired: 0, purged_discarded: 0, purged_accepted: 0 });
        }
        let tx = crate::store::immediate(self.ws.conn())?;
        let expired = tx.execute(
            "UPDATE proposal SET state = 'expired', state_reason = ?1 WHERE state = 'open' AND created_at <= ?2",
            params![format!("not reviewed within {OPEN_DAYS} days"), before(OPEN_DAYS)],
        )?;
        let purged_discarded = tx.execute(
            "DELETE FROM proposal WHERE state = 'discarded' AND decided_at <= ?1",
            [before(DISCARDED_KEEP_DAYS)],
        )?;
        let purged_accepted = tx.execute(
            "DELETE FROM proposal WHERE state IN ('accepted', 'undone') AND decided_at <= ?1",
            [before(ACCEPTED_KEEP_DAYS)],
        )?;
        tx.commit()?;
        Ok(RetentionReport {
            expired: expired as u32,
            purged_discarded: purged_discarded as u32,
            purged_accepted: purged_accepted as u32,
        })
    }
}
