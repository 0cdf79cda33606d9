//! The evidence behind each extracted value and the confidence band it earns.

/// The evidence behind one value, and the confidence it earns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    /// The words before the value (or its column) name the field.
    pub labelled: bool,
    /// They name another field instead.
    pub labelled_other: bool,
    /// Other candidates of its kind that no other field took.
    pub rivals: usize,
    /// A second reading agrees (`Some(true)`) or disagrees: lines summing to the total, the
    /// total's currency, quantity × price = amount.
    pub agrees: Option<bool>,
    /// The value reads two ways (a date 03/04/2026, a name of several records).
    pub ambiguous: bool,
}

/// Confidence by evidence score (index = score + 3, clamped), ordered so that more evidence
/// never states less. Measured with `eval extract`'s reliability table on the dev and
/// held-out invoices, every band was right at least as often as it states; those sets hold too
/// few wrong values to fit the bands more tightly.
pub(super) const BANDS: [f64; 9] = [0.1, 0.2, 0.35, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98];

impl Evidence {
    pub fn score(&self) -> i32 {
        let mut s = 0;
        if self.labelled {
            s += 2;
        }
        if self.labelled_other && !self.labelled {
            s -= 3;
        }
        if self.rivals == 0 {
            s += 1;
        }
        match self.agrees {
            Some(true) => s += 2,
            Some(false) => s -= 2,
            None => {}
        }
        if self.ambiguous {
            s -= 2;
        }
        s
    }

    pub fn confidence(&self) -> f64 {
        BANDS[(self.score() + 3).clamp(0, BANDS.len() as i32 - 1) as usize]
    }
}
