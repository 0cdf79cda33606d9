//! Countries by name, code and nationality (`keshvar`'s ISO 3166 data).

use super::*;

/// A country as the question may say it: its names (ISO short name and the usual others,
/// lower-cased) and its nationality ("German"); its ISO codes only as written in capitals.
pub(super) struct Place {
    pub(super) names: Vec<String>,
    /// Its names in German, French and Spanish ("Deutschland", "Allemagne", "Alemania").
    pub(super) foreign: Vec<String>,
    pub(super) nationality: Option<String>,
    pub(super) codes: Vec<String>,
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
                let foreign = ["de", "fr", "es"]
                    .iter()
                    .filter_map(|l| c.translations().get(l))
                    .map(|n| n.to_lowercase())
                    .filter(|n| !names.contains(n))
                    .collect();
                Place {
                    names,
                    foreign,
                    nationality: c.maybe_nationality().map(str::to_lowercase),
                    codes: vec![c.alpha2().to_string(), c.alpha3().to_string()],
                }
            })
            .collect()
    })
}

/// The countries the question says by nationality or code, with the words that say each.
pub(super) fn places_said(t: &[Token]) -> Vec<(&'static Place, Vec<usize>)> {
    let mut out = vec![];
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
            if place.codes.contains(&q.text) {
                said.push(vec![i]);
            }
        }
        // Its names, in English and other languages, as written (accents aside): a stored
        // "Germany" is found for "Deutschland".
        for name in place.names.iter().chain(&place.foreign).filter(|n| n.chars().count() >= 4) {
            let w = tokens(name);
            for at in runs_in(t, &w, crate::locale::Language::En) {
                if (0..w.len()).all(|i| fold(&t[at + i].lower) == fold(&w[i].lower)) {
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
