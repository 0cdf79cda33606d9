//! Evals: the capabilities measured against cases with known answers. Each submodule is one
//! capability's eval — its case format, how one answer is judged, and the tally its report
//! sums up (a typed report, serialized as the JSON the evals print). A runner (the CLI) only
//! loops over the cases, runs the capability, times it and records each outcome.

pub mod ask;
pub mod extract;
pub mod judge;
pub mod suites;
pub mod summarize;

use serde::Serialize;

/// The `p`-th percentile (0–100) of `xs` (nearest rank).
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// The median and the 90th percentile of a measurement (0 for no measurements).
/// Cases, one JSON object a line (blank lines skipped); a broken line is an error naming it.
pub fn json_lines<T: serde::de::DeserializeOwned>(text: &str) -> crate::error::Result<Vec<T>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                crate::error::Error::new(
                    crate::error::Code::InvalidQuery,
                    format!("case on line {}: {e}", i + 1),
                )
            })
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub p50: f64,
    pub p90: f64,
}

impl Spread {
    /// The spread of `xs`, as measured.
    pub fn of(xs: &[f64]) -> Spread {
        Spread { p50: percentile(xs, 50.0), p90: percentile(xs, 90.0) }
    }

    /// Rounded to whole units (milliseconds in the reports, where a fraction is noise).
    pub fn rounded(self) -> Spread {
        Spread { p50: self.p50.round(), p90: self.p90.round() }
    }
}

/// The mean of `xs` (0 for none).
fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// `part / whole` (0 when there is no whole).
fn share(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_and_zero_for_nothing() {
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!((percentile(&xs, 50.0), percentile(&xs, 90.0), percentile(&xs, 0.0)), (3.0, 5.0, 1.0));
        assert_eq!(percentile(&[], 50.0), 0.0);
        assert_eq!(Spread::of(&[1.4, 2.6]).rounded(), Spread { p50: 1.0, p90: 3.0 });
    }

    #[test]
    fn means_and_shares_of_nothing_are_zero() {
        assert_eq!((mean(&[]), mean(&[1.0, 2.0])), (0.0, 1.5));
        assert_eq!((share(0, 0), share(1, 4)), (0.0, 0.25));
    }
}
