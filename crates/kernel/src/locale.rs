//! Locales: how a reader writes dates, numbers and amounts, and the calendar words a question
//! may use. A workspace names one (`locale` in its definition, like `timeZone`); a user may
//! choose their own. Four languages are known — English, German, French and Spanish — each
//! with any region (`de-AT`, `fr-CA`); an unknown language is refused when the definition is
//! deployed, so nothing renders in a locale the kernel cannot write.
//!
//! Values are rendered here, once, for every caller: a summary's slots, a rollup's amount, the
//! CLI's output. The UI formats with the same locale tag (the browser's `Intl`).

mod dictionary;

use chrono::{Datelike, NaiveDate};
use serde::Serialize;
use ts_rs::TS;

/// The months' names in English, lower-cased, January first.
pub const ENGLISH_MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A language the kernel can write and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    En,
    De,
    Fr,
    Es,
}

impl Language {
    /// The ISO 639-1 code (`de`).
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::De => "de",
            Language::Fr => "fr",
            Language::Es => "es",
        }
    }

    /// The language's own name for itself.
    pub fn name(self) -> &'static str {
        match self {
            Language::En => "English",
            Language::De => "Deutsch",
            Language::Fr => "Français",
            Language::Es => "Español",
        }
    }

    /// The language's name in English (for messages to a model, which reads English).
    pub fn english_name(self) -> &'static str {
        match self {
            Language::En => "English",
            Language::De => "German",
            Language::Fr => "French",
            Language::Es => "Spanish",
        }
    }

    pub const ALL: [Language; 4] = [Language::En, Language::De, Language::Fr, Language::Es];

    /// Whether `word` (any case) is a word of this language: in its word list, or in German a
    /// compound of listed words.
    pub fn knows(self, word: &str) -> bool {
        dictionary::knows(self, word)
    }

    /// The months' names, lower-cased, January first.
    pub fn months(self) -> &'static [&'static str; 12] {
        match self {
            Language::En => &ENGLISH_MONTHS,
            Language::De => &[
                "januar",
                "februar",
                "märz",
                "april",
                "mai",
                "juni",
                "juli",
                "august",
                "september",
                "oktober",
                "november",
                "dezember",
            ],
            Language::Fr => &[
                "janvier",
                "février",
                "mars",
                "avril",
                "mai",
                "juin",
                "juillet",
                "août",
                "septembre",
                "octobre",
                "novembre",
                "décembre",
            ],
            Language::Es => &[
                "enero",
                "febrero",
                "marzo",
                "abril",
                "mayo",
                "junio",
                "julio",
                "agosto",
                "septiembre",
                "octubre",
                "noviembre",
                "diciembre",
            ],
        }
    }

    /// The month a word names in this language: the whole name, a three-letter abbreviation
    /// ("mär", "sept"), or the name written without its accents ("maerz", "marz", "fevrier").
    pub fn month_of(self, word: &str) -> Option<u32> {
        let word = word.trim_end_matches('.').to_lowercase();
        let plain = unaccented(&word);
        self.months()
            .iter()
            .position(|m| {
                let m_plain = unaccented(m);
                *m == word
                    || m_plain == plain
                    || (word.chars().count() == 3 && m.starts_with(&word))
                    || (plain.len() == 3 && m_plain.starts_with(&plain))
                    || (word == "sept" && m.starts_with("sept"))
            })
            .map(|i| i as u32 + 1)
    }
}

/// A word with its accents and umlauts written plainly ("märz" → "marz", "maerz" → "marz").
fn unaccented(word: &str) -> String {
    without_accents(&word.replace("ae", "a").replace("oe", "o").replace("ue", "u"))
}

/// A word without its accents ("März" and "Marz", "élevé" and "eleve" are the same word typed).
pub fn without_accents(w: &str) -> String {
    w.chars()
        .map(|c| match c {
            'ä' | 'à' | 'â' | 'á' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'î' | 'ï' => 'i',
            'ö' | 'ô' | 'ó' => 'o',
            'ü' | 'û' | 'ú' | 'ù' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            'ß' => 's',
            c => c,
        })
        .collect()
}

/// A locale: a language and, optionally, a region (`de-DE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locale {
    tag: String,
    language: Language,
}

impl Default for Locale {
    /// English, as the kernel wrote before locales: "3 March 2026", "64,200.00 USD".
    fn default() -> Self {
        Locale { tag: "en".into(), language: Language::En }
    }
}

impl Locale {
    /// A BCP 47 tag of a known language (`de`, `de-DE`, `fr-CA`); `None` for any other.
    pub fn parse(tag: &str) -> Option<Locale> {
        let mut parts = tag.split(['-', '_']);
        let lang = parts.next()?.to_ascii_lowercase();
        let language = Language::ALL.into_iter().find(|l| l.code() == lang)?;
        let region = parts.next();
        if parts.next().is_some() {
            return None;
        }
        let tag = match region {
            None => lang,
            Some(r) if r.len() == 2 && r.chars().all(|c| c.is_ascii_alphabetic()) => {
                format!("{lang}-{}", r.to_ascii_uppercase())
            }
            Some(_) => return None,
        };
        Some(Locale { tag, language })
    }

    /// The tag as written canonically (`de-DE`).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    pub fn language(&self) -> Language {
        self.language
    }

    /// A day as a sentence writes it: "3 March 2026", "3. März 2026", "3 mars 2026",
    /// "3 de marzo de 2026".
    pub fn long_date(&self, d: NaiveDate) -> String {
        let month = self.language.months()[d.month0() as usize];
        let (day, year) = (d.day(), d.year());
        match self.language {
            Language::En => format!("{day} {} {year}", capitalized(month)),
            Language::De => format!("{day}. {} {year}", capitalized(month)),
            Language::Fr => format!("{day} {month} {year}"),
            Language::Es => format!("{day} de {month} de {year}"),
        }
    }

    /// The separators between thousands and before the decimals.
    pub fn separators(&self) -> (&'static str, char) {
        match (self.language, self.tag.as_str()) {
            (Language::De, "de-CH") => ("’", '.'),
            (Language::En, _) => (",", '.'),
            (Language::De | Language::Es, _) => (".", ','),
            // A narrow no-break space, as French typography groups thousands.
            (Language::Fr, _) => ("\u{202f}", ','),
        }
    }

    /// A number with thousands grouped and `decimals` decimals: "64,200.00", "64.200,00".
    /// Spanish does not group a four-digit number ("1000,50").
    pub fn number(&self, x: f64, decimals: usize) -> String {
        let (group, point) = self.separators();
        let s = format!("{:.*}", decimals, x.abs());
        let (int, frac) = s.split_once('.').map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
        let grouping = !(self.language == Language::Es && int.len() <= 4);
        let mut out = String::new();
        for (i, c) in int.chars().enumerate() {
            if grouping && i > 0 && (int.len() - i) % 3 == 0 {
                out.push_str(group);
            }
            out.push(c);
        }
        if let Some(f) = frac {
            out.push(point);
            out.push_str(f);
        }
        if x < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
            format!("-{out}")
        } else {
            out
        }
    }

    /// A number with as many decimals as it has (up to 6): "12.6", "12,6".
    pub fn decimal(&self, x: f64) -> String {
        let s = format!("{x:.6}");
        let decimals = s.split_once('.').map_or(0, |(_, f)| f.trim_end_matches('0').len());
        self.number(x, decimals)
    }

    /// An amount in its currency, two decimals, the code after it: "64,200.00 USD",
    /// "64.200,00 EUR".
    pub fn money(&self, x: f64, currency: &str) -> String {
        format!("{} {currency}", self.number(x, 2))
    }

    /// A percentage of a number already written in this locale: "25%" in English, "25 %" (a
    /// narrow no-break space) in German, French and Spanish.
    pub fn percent(&self, number: &str) -> String {
        match self.language {
            Language::En => format!("{number}%"),
            _ => format!("{number}\u{202f}%"),
        }
    }

    /// A number the reader typed in this locale ("1.250,50" in German, "1,250.50" in English),
    /// as a value; `None` when the text is no number in this locale.
    pub fn read_number(&self, text: &str) -> Option<f64> {
        let (group, point) = self.separators();
        let t: String = text.trim().chars().filter(|c| !c.is_whitespace() && *c != '\u{202f}').collect();
        let group = group.trim();
        // A group separator must be followed by exactly three digits.
        let (int, frac) = match t.rsplit_once(point) {
            Some((i, f)) if !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()) => (i, Some(f)),
            Some(_) => return None,
            None => (t.as_str(), None),
        };
        let int_digits: String = if group.is_empty() {
            int.to_string()
        } else {
            let mut parts = int.split(group);
            let first = parts.next()?;
            let rest: Vec<&str> = parts.collect();
            if rest.iter().any(|p| p.len() != 3)
                || (!rest.is_empty() && (first.is_empty() || first.len() > 3))
            {
                return None;
            }
            std::iter::once(first).chain(rest).collect()
        };
        let (sign, digits) = match int_digits.strip_prefix('-') {
            Some(d) => (-1.0, d.to_string()),
            None => (1.0, int_digits),
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let whole = match frac {
            Some(f) => format!("{digits}.{f}"),
            None => digits,
        };
        whole.parse::<f64>().ok().map(|v| sign * v)
    }
}

fn capitalized(word: &str) -> String {
    let mut c = word.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn tags_of_known_languages_parse_and_others_do_not() {
        assert_eq!(Locale::parse("de_de").unwrap().tag(), "de-DE");
        assert_eq!(Locale::parse("fr").unwrap().language(), Language::Fr);
        for bad in ["", "xx", "de-DEU-1", "pt-BR", "en-1"] {
            assert!(Locale::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn dates_numbers_and_amounts_are_written_as_each_language_writes_them() {
        let cases = [
            ("en", "3 March 2026", "64,200.00 USD", "1,000.5"),
            ("de-DE", "3. März 2026", "64.200,00 USD", "1.000,5"),
            ("de-CH", "3. März 2026", "64’200.00 USD", "1’000.5"),
            ("fr-FR", "3 mars 2026", "64\u{202f}200,00 USD", "1\u{202f}000,5"),
            ("es-ES", "3 de marzo de 2026", "64.200,00 USD", "1000,5"),
        ];
        for (tag, date, money, decimal) in cases {
            let l = Locale::parse(tag).unwrap();
            assert_eq!(l.long_date(d("2026-03-03")), date, "{tag}");
            assert_eq!(l.money(64_200.0, "USD"), money, "{tag}");
            assert_eq!(l.decimal(1000.5), decimal, "{tag}");
            assert_eq!(l.read_number(&l.decimal(1000.5)), Some(1000.5), "{tag}");
        }
        assert_eq!(Locale::default().money(-0.001, "EUR"), "0.00 EUR");
        assert_eq!(Locale::default().number(-1234.5, 1), "-1,234.5");
    }

    #[test]
    fn typed_numbers_are_read_in_the_locales_format_only() {
        let de = Locale::parse("de").unwrap();
        assert_eq!(de.read_number("1.250,50"), Some(1250.5));
        assert_eq!(de.read_number("75.000"), Some(75_000.0));
        assert_eq!(de.read_number("12,5"), Some(12.5));
        assert_eq!(de.read_number("1.25"), None);
        let en = Locale::default();
        assert_eq!(en.read_number("1,250.50"), Some(1250.5));
        assert_eq!(en.read_number("1,25"), None);
        assert_eq!(en.read_number("abc"), None);
    }

    #[test]
    fn month_names_are_read_whole_abbreviated_or_without_accents() {
        assert_eq!(Language::De.month_of("März"), Some(3));
        assert_eq!(Language::De.month_of("maerz"), Some(3));
        assert_eq!(Language::De.month_of("Okt."), Some(10));
        assert_eq!(Language::Fr.month_of("fevrier"), Some(2));
        assert_eq!(Language::Fr.month_of("août"), Some(8));
        assert_eq!(Language::Es.month_of("sept"), Some(9));
        assert_eq!(Language::En.month_of("märz"), None);
        assert_eq!(Language::De.month_of("maine"), None);
    }
}
