//! The question's language, when it is not the asker's: teams in Europe mix languages, so a
//! German question from a user whose locale is English is read with German number and date
//! words too. `whatlang` decides among the four languages the reader knows; a question too short
//! or too mixed to tell is read in the user's language alone.

use super::Token;
use crate::locale::Language;

/// How sure `whatlang` must be before its language is used beside the user's.
const CONFIDENCE: f64 = 0.25;

/// The question's language, if `whatlang` can tell it among English, German, French and Spanish.
pub(super) fn of_question(t: &[Token]) -> Option<Language> {
    let text: Vec<&str> =
        t.iter().filter(|w| w.lower.chars().all(char::is_alphabetic)).map(|w| w.lower.as_str()).collect();
    if text.len() < 2 {
        return None;
    }
    let detector = whatlang::Detector::with_allowlist(vec![
        whatlang::Lang::Eng,
        whatlang::Lang::Deu,
        whatlang::Lang::Fra,
        whatlang::Lang::Spa,
    ]);
    let detected = detector.detect(&text.join(" ")).map(|info| {
        let language = match info.lang() {
            whatlang::Lang::Deu => Language::De,
            whatlang::Lang::Fra => Language::Fr,
            whatlang::Lang::Spa => Language::Es,
            _ => Language::En,
        };
        (language, info.confidence())
    });
    if let Some((language, _)) = detected.filter(|(_, c)| *c >= SURE) {
        return Some(language);
    }
    // Too short for trigrams to tell: the words each language's dictionary knows and English's
    // does not ("factures", "émises", "mars") decide.
    let long: Vec<&str> = text.iter().copied().filter(|w| w.chars().count() >= 3).collect();
    let only = |l: Language| long.iter().filter(|w| l.knows(w) && !Language::En.knows(w)).count();
    let english = long
        .iter()
        .filter(|w| Language::En.knows(w) && !Language::ALL[1..].iter().any(|l| l.knows(w)))
        .count();
    let best = Language::ALL[1..].iter().map(|l| (*l, only(*l))).max_by_key(|(_, n)| *n);
    match best {
        Some((l, n)) if n >= 1 && n > english => Some(l),
        _ => detected.filter(|(_, c)| *c >= CONFIDENCE).map(|(l, _)| l),
    }
}

/// How sure `whatlang` must be to decide alone.
const SURE: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::ask::reader::tokens;

    #[test]
    fn a_question_in_another_language_is_told() {
        let of = |q: &str| of_question(&tokens(q));
        assert_eq!(of("Rechnungen von Kunden, die nicht in Lyon sind"), Some(Language::De));
        assert_eq!(of("les factures des clients qui ne sont pas à Lyon"), Some(Language::Fr));
        assert_eq!(of("las facturas de los clientes que no están en Lyon"), Some(Language::Es));
        assert_eq!(of("invoices of customers that are not in Lyon"), Some(Language::En));
        assert_eq!(of("factures émises en mars 2026"), Some(Language::Fr));
        assert_eq!(of("facturas emitidas en marzo de 2026"), Some(Language::Es));
        assert_eq!(of("die größte Rechnung"), Some(Language::De));
    }
}
