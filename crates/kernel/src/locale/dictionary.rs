//! The words of a language: a Hunspell dictionary per language (`data/dictionaries/`, compiled
//! in, checked by `spellbook`), read the first time a sentence in that language is checked.
//! Hunspell knows a word's inflections ("facturas", "vence"), elisions ("l'échéance") and, in
//! German, compounds of listed words ("Gesamtkapital"); a made-up word ("Geschäftspotentien")
//! it does not. English also takes SCOWL's word list, for British spellings ("totalling").

use super::Language;
use std::io::Read;
use std::sync::OnceLock;

/// The compressed `.aff` and `.dic` of a language.
fn compressed(language: Language) -> (&'static [u8], &'static [u8]) {
    match language {
        Language::En => (
            include_bytes!("../../data/dictionaries/en_US.aff.gz"),
            include_bytes!("../../data/dictionaries/en_US.dic.gz"),
        ),
        Language::De => (
            include_bytes!("../../data/dictionaries/de_DE.aff.gz"),
            include_bytes!("../../data/dictionaries/de_DE.dic.gz"),
        ),
        Language::Fr => (
            include_bytes!("../../data/dictionaries/fr.aff.gz"),
            include_bytes!("../../data/dictionaries/fr.dic.gz"),
        ),
        Language::Es => (
            include_bytes!("../../data/dictionaries/es_ES.aff.gz"),
            include_bytes!("../../data/dictionaries/es_ES.dic.gz"),
        ),
    }
}

fn unzipped(bytes: &[u8]) -> Option<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text).ok().map(|_| text)
}

/// The language's dictionary; `None` when it does not read (logged once: every word of the
/// language is then unknown, so its summaries are refused rather than waved through).
fn dictionary(language: Language) -> Option<&'static spellbook::Dictionary> {
    static DICTIONARIES: [OnceLock<Option<spellbook::Dictionary>>; 4] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let at = Language::ALL.iter().position(|l| *l == language).expect("a known language");
    DICTIONARIES[at]
        .get_or_init(|| {
            let started = std::time::Instant::now();
            let (aff, dic) = compressed(language);
            let read = unzipped(aff)
                .zip(unzipped(dic))
                .and_then(|(aff, dic)| spellbook::Dictionary::new(&aff, &dic).ok());
            match &read {
                Some(_) => tracing::info!(
                    language = language.code(),
                    ms = crate::logging::ms_since(started),
                    "dictionary read"
                ),
                None => tracing::error!(language = language.code(), "the dictionary does not read"),
            }
            read
        })
        .as_ref()
}

/// SCOWL's English words, lower-cased and sorted by code point.
fn english_words() -> &'static [Box<str>] {
    static WORDS: OnceLock<Vec<Box<str>>> = OnceLock::new();
    WORDS.get_or_init(|| {
        unzipped(include_bytes!("../../data/words/en.txt.gz"))
            .map(|t| t.lines().map(Box::from).collect())
            .unwrap_or_default()
    })
}

/// Whether `word` is a word of the language (as written, or lower-cased at a sentence's start).
pub fn knows(language: Language, word: &str) -> bool {
    let Some(d) = dictionary(language) else { return false };
    let lower = word.to_lowercase();
    d.check(word)
        || d.check(&lower)
        || (language == Language::En && english_words().binary_search_by(|w| w.as_ref().cmp(&lower)).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_each_language_and_their_forms_are_known_and_made_up_ones_are_not() {
        for (language, word) in [
            (Language::En, "Opportunities"),
            (Language::En, "overdue"),
            (Language::En, "totalling"),
            (Language::De, "überfällig"),
            (Language::De, "Rechnungen"),
            (Language::De, "Gesamtkapital"),
            (Language::De, "Rechnungsbetrag"),
            (Language::Fr, "l'échéance"),
            (Language::Fr, "ouvertes"),
            (Language::Es, "facturas"),
            (Language::Es, "vence"),
        ] {
            assert!(knows(language, word), "{word}");
        }
        for (language, word) in [
            (Language::En, "opportunitiesx"),
            (Language::De, "Geschäftspotentien"),
            (Language::De, "Gesamtxyzkapital"),
            (Language::En, "Rechnung"),
            (Language::Es, "invoices"),
        ] {
            assert!(!knows(language, word), "{word}");
        }
    }
}
