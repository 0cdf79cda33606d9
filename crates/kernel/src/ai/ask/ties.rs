//! A count cut through equal values: "the 4 accounts with the lowest credit limit" where the
//! 4th and the 5th have the same limit. Which of them is "the 4th" is no fact of the data, so
//! showing four would be an answer that chose for the person. The kernel widens the answer to
//! every record that ties at the cut — as SQL's `FETCH FIRST n ROWS WITH TIES` does — by a
//! condition the spec shows ("Credit limit at most 30,000") instead of the count, and says why.

use super::*;
use crate::locale::Language;
use crate::metadata::condition::{AllOf, Condition, Op};
use crate::records::query::Direction;

/// Most records a widened answer may hold: past this, the count stands as asked.
const MAX_WIDENED: u32 = 1_000;

impl Session<'_> {
    /// When `spec`'s count cuts through equal values of its one sort field: the spec widened to
    /// every record that ties with its last one, the records it finds, and the sentence that
    /// says so. `None` where the count stands.
    pub(super) fn with_ties(&self, spec: &QuerySpec) -> Result<Option<(QuerySpec, QueryResult, String)>> {
        let (Some(n), [key]) = (spec.limit, spec.sort.as_slice()) else { return Ok(None) };
        if n == 0 || spec.offset.is_some() || spec.after.is_some() {
            return Ok(None);
        }
        let probe = QuerySpec { fields: vec![key.field.clone()], limit: Some(n + 1), ..spec.clone() };
        let rows = self.query(&probe)?.records;
        let (Some(last), Some(next)) = (rows.get(n as usize - 1), rows.get(n as usize)) else {
            return Ok(None);
        };
        let value = last.get(&key.field).cloned().unwrap_or(Value::Null);
        if value.is_null() || next.get(&key.field) != Some(&value) {
            return Ok(None);
        }
        let op = match key.direction {
            Direction::Asc => Op::Lte,
            Direction::Desc => Op::Gte,
        };
        let cut = Condition::compare(&key.field, op, value.clone());
        let filters = match spec.filters.clone() {
            None => cut,
            Some(Condition::All(AllOf { mut all })) => {
                all.push(cut);
                Condition::All(AllOf { all })
            }
            Some(other) => Condition::All(AllOf { all: vec![other, cut] }),
        };
        let widened = QuerySpec { filters: Some(filters), limit: Some(MAX_WIDENED), ..spec.clone() };
        let found = self.query(&widened)?;
        if found.has_more {
            return Ok(None);
        }
        let shown = value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string());
        let message = said(self.locale().language(), n, &shown, found.records.len());
        Ok(Some((widened, found, message)))
    }
}

/// The sentence that says the count was widened, in the person's language.
fn said(language: Language, n: u32, value: &str, shown: usize) -> String {
    match language {
        Language::En => format!(
            "You asked for {n}, but the {n}th shares its value ({value}) with the next, so all {shown} records up to that value are shown."
        ),
        Language::De => format!(
            "Sie haben nach {n} gefragt, aber der {n}. teilt seinen Wert ({value}) mit dem nächsten; deshalb werden alle {shown} Datensätze bis zu diesem Wert gezeigt."
        ),
        Language::Fr => format!(
            "Vous en avez demandé {n}, mais le {n}e partage sa valeur ({value}) avec le suivant : les {shown} enregistrements jusqu’à cette valeur sont donc affichés."
        ),
        Language::Es => format!(
            "Pidió {n}, pero el {n}.º comparte su valor ({value}) con el siguiente, así que se muestran los {shown} registros hasta ese valor."
        ),
    }
}
