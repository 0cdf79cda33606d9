//! The pre-flight: budgets (per call, per user per day, per workspace per month, in the workspace
//! currency) and rate limits, checked against the trace before anything is spent.

use super::*;
use crate::clock::timestamp;
use crate::error::{Code, Error, Fault, Result};
use crate::records::access::Session;
use chrono::{DateTime, Datelike, Duration as Span, TimeZone, Utc};
use rusqlite::params;

pub(super) fn rate_error(message: String) -> Error {
    Error { retriable: true, ..Error::new(Code::RateLimit, message) }
}

pub(super) fn day_start(t: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(t.year(), t.month(), t.day(), 0, 0, 0).single().unwrap_or(t)
}

pub(super) fn month_start(t: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(t.year(), t.month(), 1, 0, 0, 0).single().unwrap_or(t)
}

impl Session<'_> {
    pub(super) fn preflight(&self, inv: &mut Invocation) -> Result<()> {
        let cap = &inv.capability;
        self.require(&cap.required_permission)?;
        let pin = &inv.model.pin;
        let priced = pin.input_price_per_mtok > 0.0 || pin.output_price_per_mtok > 0.0;
        let currency = &self.catalog().definition.currency;
        if priced && !pin.currency.eq_ignore_ascii_case(currency) {
            return Err(Error::new(
                Code::AiBudget,
                format!(
                    "model pin `{}` is priced in {} but budgets are in the workspace currency {currency}; repin it in {currency}",
                    pin.key, pin.currency
                ),
            )
            .with_fault(Fault::Admin));
        }
        let b = &cap.settings.budget;
        let est = inv.estimated_cost;
        let over = |what: &str, ceiling: f64, spent: f64| {
            Error::new(
                Code::AiBudget,
                format!(
                    "this {} call would cost up to {est:.4} {currency}; {what} budget is {ceiling:.4} {currency} and {spent:.4} is spent or reserved",
                    cap.key
                ),
            )
        };
        let now = self.ws.clock.now();
        let mut warnings = vec![];
        if let Some(ceiling) = b.per_invocation {
            if est > ceiling {
                return Err(over("the per-call", ceiling, 0.0));
            }
        }
        let checks = [
            (b.per_user_per_day, Some(self.user().key.as_str()), day_start(now), "your daily"),
            (b.workspace_per_month, None, month_start(now), "the workspace's monthly"),
        ];
        for (ceiling, actor, since, what) in checks {
            let Some(ceiling) = ceiling else { continue };
            let spent = self.spent_since(actor, since, &inv.trace_id)?;
            if spent + est > ceiling {
                return Err(over(what, ceiling, spent));
            }
            if ceiling > 0.0 && spent + est >= b.warn_at * ceiling {
                warnings.push(format!("{:.0}% of {what} AI budget is used", 100.0 * (spent + est) / ceiling));
            }
        }
        if !warnings.is_empty() {
            inv.warning = Some(warnings.join("; "));
        }
        self.check_rate(cap, &inv.trace_id)?;
        self.claim_slot(inv)
    }

    /// The capability's per-minute limit for this user, counting every call but `except` that
    /// is running or asked a model (a call refused by a limit, for permission or before its
    /// model call, or answered by the kernel alone, sent nothing to a model).
    pub(super) fn check_rate(&self, cap: &CapabilityBinding, except: &str) -> Result<()> {
        let minute_ago = timestamp(self.ws.clock.now() - Span::seconds(60));
        let recent: u32 = self.ws.conn().query_row(
            "SELECT count(*) FROM ai_trace WHERE actor = ?1 AND capability = ?2 AND started_at > ?3 AND id <> ?4
               AND (outcome = 'running' OR attempts > 0)",
            params![self.user().key, cap.key, minute_ago, except],
            |r| r.get(0),
        )?;
        if recent >= cap.settings.rate.per_minute {
            return Err(rate_error(format!(
                "{recent} {} calls in the last minute (limit {}); try again shortly",
                cap.key, cap.settings.rate.per_minute
            )));
        }
        Ok(())
    }

    /// Spend (actual cost of finished calls, estimate of running ones) since `since`.
    pub(super) fn spent_since(&self, actor: Option<&str>, since: DateTime<Utc>, except: &str) -> Result<f64> {
        Ok(self.ws.conn().query_row(
            "SELECT coalesce(sum(CASE WHEN outcome = 'running' THEN estimated_cost ELSE cost END), 0)
             FROM ai_trace WHERE started_at >= ?1 AND (?2 IS NULL OR actor = ?2) AND id <> ?3",
            params![timestamp(since), actor, except],
            |r| r.get(0),
        )?)
    }

    /// Check, before a repair call, that it still fits the per-call budget.
    pub fn preflight_repair(&self, inv: &Invocation, estimated_prompt_tokens: u64) -> Result<()> {
        let Some(ceiling) = inv.capability.settings.budget.per_invocation else { return Ok(()) };
        let max_out = inv.capability.settings.max_output_tokens.min(inv.model.pin.max_output_tokens);
        let total = inv.cost() + inv.model.cost(estimated_prompt_tokens, max_out as u64);
        if total > ceiling {
            return Err(Error::new(
                Code::AiBudget,
                format!(
                    "the repair attempt would bring this call to {total:.4}, over its budget of {ceiling:.4}"
                ),
            ));
        }
        Ok(())
    }
}
