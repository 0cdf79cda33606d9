//! Countries by name, code and nationality (`keshvar`'s ISO 3166 data).

use super::*;

/// A country as the question may say it: its names (ISO short name and the usual others,
/// lower-cased) and its nationality ("German"); its ISO codes only as written in capitals.
pub(super) struct Place {
    pub(super) names: Vec<String>,
    pub(super) nationality: Option<String>,
    pub(super) codes: Vec<String>,
    /// Its currency's ISO 4217 code ("Canadian dollars" are CAD).
    pub(super) currency: String,
    /// Its names of four letters or more, in every language, as words without accents (made
    /// once: a question is read against every country).
    said_as: Vec<Vec<String>>,
}

/// Every country of ISO 3166-1, from the `keshvar` data set.
pub(super) fn places() -> &'static [Place] {
    static PLACES: std::sync::OnceLock<Vec<Place>> = std::sync::OnceLock::new();
    PLACES.get_or_init(|| {
        keshvar::CountryIterator::new()
            .map(|c| {
                let mut names = vec![c.iso_short_name().to_lowercase()];
                names.extend(c.unofficial_name_list().iter().map(|n| n.to_lowercase()));
                names.dedup();
                // Its names in German, French and Spanish ("Deutschland", "Allemagne", "Alemania").
                let foreign: Vec<String> = ["de", "fr", "es"]
                    .iter()
                    .filter_map(|l| c.translations().get(l))
                    .map(|n| n.to_lowercase())
                    .filter(|n| !names.contains(n))
                    .collect();
                let said_as = names
                    .iter()
                    .chain(&foreign)
                    .filter(|n| n.chars().count() >= 4)
                    .map(|n| tokens(n).iter().map(|w| fold(&w.lower)).collect::<Vec<String>>())
                    .filter(|w| !w.is_empty())
                    .collect();
                Place {
                    names,
                    said_as,
                    nationality: c.maybe_nationality().map(str::to_lowercase),
                    codes: vec![c.alpha2().to_string(), c.alpha3().to_string()],
                    currency: c.currency_code().to_string(),
                }
            })
            .collect()
    })
}

/// The countries the question says by nationality or code, with the words that say each.
pub(super) fn places_said(t: &[Token]) -> Vec<(&'static Place, Vec<usize>)> {
    let mut out = vec![];
    let folded: Vec<String> = t.iter().map(|w| fold(&w.lower)).collect();
    let shouted = t.len() > 1 && !t.iter().any(|w| w.text.chars().any(char::is_lowercase));
    for place in places() {
        let mut said = vec![];
        if let Some(n) = &place.nationality {
            let w = tokens(n);
            said.extend(
                runs(t, &w)
                    .into_iter()
                    .filter(|&at| {
                        // Exactly the word: "French", not a stem of something else.
                        (0..w.len()).all(|i| t[at + i].lower == w[i].lower)
                    })
                    .map(|at| (at..at + w.len()).collect::<Vec<_>>()),
            );
        }
        for (i, q) in t.iter().enumerate() {
            // A code is a code where the question writes other words in lower case: in
            // "OVERDUE INVOICES IN POUNDS", "IN" is a word, not India.
            if shouted {
                break;
            }
            if place.codes.contains(&q.text) {
                said.push(vec![i]);
            }
        }
        // Its names, in English and other languages, as written (accents aside): a stored
        // "Germany" is found for "Deutschland".
        for w in &place.said_as {
            for at in 0..t.len().saturating_sub(w.len() - 1) {
                if (0..w.len()).all(|i| folded[at + i] == w[i]) {
                    said.push((at..at + w.len()).collect());
                }
            }
        }
        for span in said {
            out.push((place, span));
        }
    }
    out
}
