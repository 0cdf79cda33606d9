//! Quantities the question says: numbers with their units ("40k", "2.5 million"), the
//! comparison before them ("over", "at least", "between … and …"), and currency words.

use super::*;

/// A number the question says, with its unit applied ("40k" = 40,000; "2.5 million").
#[derive(Debug, Clone, Copy)]
pub(super) struct Said {
    pub(super) value: f64,
    /// Word indexes it covers.
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) money: bool,
    /// A currency word or symbol is written with it ("$40k", "40k euros"), not only a scale.
    pub(super) money_said: bool,
    pub(super) percent: bool,
    /// Written as a plain whole number with no unit (a possible count of rows).
    pub(super) plain: bool,
    /// The scale word or suffix it was said with (1 without one): "10 and 50 million" gives the
    /// first number the second's.
    pub(super) scale: f64,
}

pub(super) const NUMBER_WORDS: &[(&str, f64)] = &[
    ("one", 1.0),
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("eleven", 11.0),
    ("twelve", 12.0),
    ("fifteen", 15.0),
    ("twenty", 20.0),
    ("fifty", 50.0),
    ("hundred", 100.0),
];

pub(super) const SCALES: &[(&str, f64)] = &[
    ("k", 1e3),
    ("thousand", 1e3),
    ("grand", 1e3),
    ("m", 1e6),
    ("mm", 1e6),
    ("mn", 1e6),
    ("million", 1e6),
    ("millions", 1e6),
    ("b", 1e9),
    ("bn", 1e9),
    ("billion", 1e9),
    ("billions", 1e9),
    ("hundred", 100.0),
    ("hundreds", 100.0),
    ("tausend", 1e3),
    ("mille", 1e3),
    ("mil", 1e3),
    ("mio", 1e6),
    ("millionen", 1e6),
    ("millón", 1e6),
    ("millon", 1e6),
    ("millones", 1e6),
    ("mrd", 1e9),
    ("milliarde", 1e9),
    ("milliarden", 1e9),
    ("milliard", 1e9),
    ("milliards", 1e9),
    ("dozen", 12.0),
    ("dozens", 12.0),
    ("dutzend", 12.0),
    ("douzaine", 12.0),
    ("douzaines", 12.0),
    ("docena", 12.0),
    ("docenas", 12.0),
];

/// Articles a number word is not ("a", "ein", "une", "una" say one thing, not a count of one).
const ARTICLES: &[&str] =
    &["a", "an", "un", "une", "ein", "eine", "einen", "einem", "einer", "eines", "uno", "una"];

/// A question word as the number parser reads it.
struct Spelled<'a>(&'a Token);

impl text2num::Token for Spelled<'_> {
    fn text(&self) -> std::borrow::Cow<'_, str> {
        self.0.text.as_str().into()
    }
    fn text_lowercase(&self) -> std::borrow::Cow<'_, str> {
        self.0.lower.as_str().into()
    }
    fn nt_separated(&self, _previous: &Self) -> bool {
        false
    }
    fn not_a_number_part(&self) -> bool {
        false
    }
}

/// Numbers written in words ("forty thousand", "zweitausend", "vingt-cinq", "treinta y cinco"),
/// read by `text2num` in each of `languages`: (first word, last word, value). Ordinals ("third")
/// and a lone article are not numbers here.
pub(super) fn spelled(t: &[Token], languages: &[crate::locale::Language]) -> Vec<(usize, usize, f64)> {
    use crate::locale::Language;
    let mut out: Vec<(usize, usize, f64)> = vec![];
    for language in languages {
        let parser = match language {
            Language::En => text2num::Language::english(),
            Language::De => text2num::Language::german(),
            Language::Fr => text2num::Language::french(),
            Language::Es => text2num::Language::spanish(),
        };
        for o in text2num::find_numbers(t.iter().map(Spelled), &parser, 0.0) {
            let words = &t[o.start..o.end];
            let digits = words.iter().any(|w| w.lower.chars().any(|c| c.is_ascii_digit()));
            let article = words.len() == 1 && ARTICLES.contains(&words[0].lower.as_str());
            let overlaps = out.iter().any(|(s, e, _)| o.start <= *e && *s < o.end);
            if o.is_ordinal || digits || article || overlaps || !o.value.is_finite() {
                continue;
            }
            out.push((o.start, o.end - 1, o.value));
        }
    }
    out.sort_by_key(|x| x.0);
    out
}

pub(super) const MONEY_WORDS: &[&str] =
    &["$", "€", "£", "¥", "usd", "eur", "gbp", "dollar", "dollars", "euro", "euros", "pound", "pounds"];

/// Currency words and symbols, and the ISO code each stands for.
pub(super) const CURRENCY_WORDS: &[(&str, &str)] = &[
    ("dollar", "USD"),
    ("dollars", "USD"),
    ("usd", "USD"),
    ("euro", "EUR"),
    ("euros", "EUR"),
    ("eur", "EUR"),
    ("pound", "GBP"),
    ("pounds", "GBP"),
    ("sterling", "GBP"),
    ("gbp", "GBP"),
    ("yen", "JPY"),
    ("jpy", "JPY"),
    ("franc", "CHF"),
    ("francs", "CHF"),
    ("chf", "CHF"),
    ("cad", "CAD"),
    ("aud", "AUD"),
    ("yuan", "CNY"),
    ("renminbi", "CNY"),
    ("rupee", "INR"),
    ("rupees", "INR"),
    ("krona", "SEK"),
    ("kronor", "SEK"),
    ("zloty", "PLN"),
    // German, French and Spanish names of the same currencies.
    ("pfund", "GBP"),
    ("livre", "GBP"),
    ("livres", "GBP"),
    ("libra", "GBP"),
    ("libras", "GBP"),
    ("esterlina", "GBP"),
    ("esterlinas", "GBP"),
    ("dólar", "USD"),
    ("dólares", "USD"),
    ("dolar", "USD"),
    ("dolares", "USD"),
    ("franken", "CHF"),
    ("franco", "CHF"),
    ("francos", "CHF"),
];

/// The numbers the question says, with units: digits ("50,000", "2.5", "40k", "2.5M"), number
/// words, "half a million", "a quarter of a million".
/// Digits are read in the asker's locale first ("10.000" is ten thousand in German), then as
/// English writes them.
/// `asked_in`: the question's own language, when it is told (`language::of_question`).
pub(super) fn numbers(
    t: &[Token],
    taken: &[usize],
    locale: &crate::locale::Locale,
    asked_in: Option<crate::locale::Language>,
) -> Vec<Said> {
    let mut out: Vec<Said> = vec![];
    let mut languages = vec![locale.language()];
    if let Some(other) = asked_in.filter(|l| !languages.contains(l)) {
        languages.push(other);
    }
    if !languages.contains(&crate::locale::Language::En) {
        languages.push(crate::locale::Language::En);
    }
    let words = spelled(t, &languages);
    let asked_locale =
        asked_in.filter(|l| *l != locale.language()).and_then(|l| crate::locale::Locale::parse(l.code()));
    let mut i = 0;
    while i < t.len() {
        if taken.contains(&i) {
            i += 1;
            continue;
        }
        let w = t[i].lower.as_str();
        let (mut value, mut to, mut plain, mut start, mut scale) = (None, i, false, i, 1.0);
        // "40k", "2.5m", "10bn": digits with the scale stuck on.
        let digits_end = w.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(w.len());
        if digits_end > 0 && w.as_bytes()[0].is_ascii_digit() {
            let digits = &w[..digits_end];
            // Digits as the asker's locale writes them — unless that reads three digits after
            // a decimal point ("50.000") that the question's language groups: "über 50.000" is
            // fifty thousand in a German question, whoever asks ("$5,000" stays five thousand).
            let mine = locale.read_number(digits);
            let three_decimals = digits
                .rsplit_once(locale.separators().1)
                .is_some_and(|(_, f)| f.len() == 3 && f.chars().all(|c| c.is_ascii_digit()));
            let theirs = asked_locale.as_ref().and_then(|l| l.read_number(digits));
            let number: Option<f64> = match (mine, theirs) {
                (Some(m), Some(t)) if m != t && three_decimals && t.fract() == 0.0 => Some(t),
                (Some(m), _) => Some(m),
                (None, t) => t,
            }
            .or_else(|| digits.replace(',', "").parse().ok());
            let rest = &w[digits_end..];
            if let Some(n) = number {
                if rest.is_empty() {
                    value = Some(n);
                    plain = !w.contains('.');
                } else if let Some((_, s)) = SCALES.iter().find(|(k, _)| *k == rest) {
                    value = Some(n * s);
                    scale = *s;
                }
            }
        } else if let Some(&(_, last, n)) = words.iter().find(|(s, _, _)| *s == i) {
            value = Some(n);
            to = last;
            plain = n.fract() == 0.0;
            scale = t[i..=last]
                .iter()
                .filter_map(|x| SCALES.iter().find(|(k, _)| *k == x.lower).map(|(_, s)| *s))
                .fold(1.0, f64::max);
        } else if let Some((_, n)) = NUMBER_WORDS.iter().find(|(k, _)| *k == w) {
            value = Some(*n);
            plain = true;
        } else if SCALES.iter().any(|(k, s)| *k == w && *s == 12.0)
            && i > 0
            && ARTICLES.contains(&t[i - 1].lower.as_str())
        {
            // "a dozen"
            value = Some(12.0);
            plain = true;
            start = i - 1;
        } else if (w == "half" || w == "quarter") && i + 1 < t.len() {
            // "half a million", "a quarter of a million"
            let share = if w == "half" { 0.5 } else { 0.25 };
            let mut j = i + 1;
            while j < t.len() && matches!(t[j].lower.as_str(), "a" | "of") {
                j += 1;
            }
            if let Some((_, s)) = t.get(j).and_then(|x| SCALES.iter().find(|(k, _)| *k == x.lower)) {
                value = Some(share * s);
                scale = *s;
                to = j;
                // "a quarter of a million": the article belongs to the number.
                if i > 0 && t[i - 1].lower == "a" {
                    start = i - 1;
                }
            }
        }
        let Some(mut n) = value else {
            i += 1;
            continue;
        };
        // A scale word after the number ("2.5 million", "40 thousand", "two dozen").
        // Scale words multiply in a row ("2 hundred thousand").
        while let Some((_, s)) = t.get(to + 1).and_then(|x| SCALES.iter().find(|(k, _)| *k == x.lower)) {
            if t[to + 1].lower.len() <= 1 {
                break;
            }
            n *= s;
            scale *= s;
            to += 1;
            plain = *s == 12.0 && n.fract() == 0.0;
        }
        let before = start.checked_sub(1).map(|b| t[b].lower.as_str());
        let after = t.get(to + 1).map(|x| x.lower.as_str());
        let money_said = before.is_some_and(|b| MONEY_WORDS.contains(&b))
            || after.is_some_and(|a| MONEY_WORDS.contains(&a));
        let money = money_said || scale >= 1e3;
        let percent = after.is_some_and(|a| matches!(a, "%" | "percent" | "pct"));
        let from = if before.is_some_and(|b| MONEY_WORDS.contains(&b) && b.chars().count() == 1) {
            start - 1
        } else {
            start
        };
        let to = if percent || after.is_some_and(|a| MONEY_WORDS.contains(&a)) { to + 1 } else { to };
        out.push(Said { value: n, from, to, money, money_said, percent, plain: plain && !percent, scale });
        i = to + 1;
    }
    out
}

/// The noun a whole number counts, said right after it: "a dozen *units*", "10 *licences*",
/// "20 *Stück*", "plus de 10 *unités*". Things counted are no amount of money. A plural noun
/// (or the German "Stück"); not a word that only links ("in", "from"), nor a participle
/// ("issued"), nor the name of a date field ("due", "closing"), which say *which* amount.
pub(super) fn counted_noun(t: &[Token], n: &Said, names_a_date: impl Fn(&Token) -> bool) -> bool {
    let Some(w) = t.get(n.to + 1) else { return false };
    let word = w.lower.as_str();
    !n.money
        && !n.percent
        && n.plain
        && word.chars().count() >= 3
        && word.chars().all(char::is_alphabetic)
        && !super::FILLER.contains(&word)
        && !super::LIGHT_WORDS.contains(&word)
        && !word.ends_with("ed")
        && (word.ends_with('s') || word.ends_with("en") || word == "stück")
        && !names_a_date(w)
}

/// A comparison word before a number: its operator and how many words it takes.
pub(super) fn comparison_before(t: &[Token], at: usize) -> Option<(Op, usize)> {
    let w = |back: usize| at.checked_sub(back).map(|i| t[i].lower.as_str());
    // "no more than" / "no less than": three words.
    if let (Some(a), Some(b), Some("than")) = (w(3), w(2), w(1)) {
        match (a, b) {
            ("no" | "not", "more") => return Some((Op::Lte, 3)),
            ("no" | "not", "less") => return Some((Op::Gte, 3)),
            _ => {}
        }
    }
    let two = (w(2), w(1));
    let op = match two {
        (Some("more" | "greater" | "higher" | "larger" | "bigger"), Some("than")) => Some((Op::Gt, 2)),
        (Some("less" | "fewer" | "lower" | "smaller"), Some("than")) => Some((Op::Lt, 2)),
        (Some("at"), Some("least")) => Some((Op::Gte, 2)),
        (Some("at"), Some("most")) => Some((Op::Lte, 2)),
        (Some("up"), Some("to")) => Some((Op::Lte, 2)),
        (Some("no"), Some("more")) | (Some("not"), Some("over")) => Some((Op::Lte, 2)),
        (Some("no"), Some("less")) => Some((Op::Gte, 2)),
        // German, French and Spanish.
        (Some("mehr" | "plus" | "más" | "mas"), Some("als" | "de")) => Some((Op::Gt, 2)),
        (Some("weniger" | "moins" | "menos"), Some("als" | "de")) => Some((Op::Lt, 2)),
        (Some("supérieur" | "superieur" | "superior"), Some("à" | "a")) => Some((Op::Gt, 2)),
        (Some("inférieur" | "inferieur" | "inferior"), Some("à" | "a")) => Some((Op::Lt, 2)),
        (Some("au"), Some("moins")) | (Some("al"), Some("menos")) => Some((Op::Gte, 2)),
        (Some("au"), Some("plus")) | (Some("como"), Some("máximo" | "maximo")) => Some((Op::Lte, 2)),
        _ => None,
    };
    if op.is_some() {
        return op;
    }
    match w(1)? {
        "above" | "over" | "exceeding" | "exceeds" | "exceed" | ">" | "über" | "ueber" => Some((Op::Gt, 1)),
        "below" | "under" | "<" | "unter" => Some((Op::Lt, 1)),
        "minimum" | "min" | "mindestens" => Some((Op::Gte, 1)),
        "maximum" | "max" | "höchstens" | "maximal" => Some((Op::Lte, 1)),
        "exactly" | "precisely" | "genau" | "exakt" | "exactement" | "exactamente" | "justo" | "=" => {
            Some((Op::Eq, 1))
        }
        _ => None,
    }
}

/// A comparison said after a number (and the noun it counts): "20 units *or more*", "10,000
/// employees *or less*", "100k *and up*", "10 *oder mehr*", "10 *ou plus*", "10 *o más*".
/// Its operator and the words it takes, from `at` (the first word after the number).
pub(super) fn comparison_after(t: &[Token], at: usize) -> Option<(Op, usize)> {
    let w = |k: usize| t.get(at + k).map(|x| x.lower.as_str()).unwrap_or("");
    let joined = matches!(w(0), "or" | "and" | "oder" | "und" | "ou" | "et" | "o" | "y");
    if !joined {
        return (w(0) == "+").then_some((Op::Gte, 1));
    }
    match w(1) {
        "more" | "greater" | "higher" | "above" | "over" | "up" | "mehr" | "darüber" | "plus" | "más"
        | "mas" => Some((Op::Gte, 2)),
        "less" | "fewer" | "lower" | "below" | "under" | "weniger" | "darunter" | "moins" | "menos" => {
            Some((Op::Lte, 2))
        }
        _ => None,
    }
}

/// The number as the spec writes it (whole numbers without a fraction).
pub(super) fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map(Value::Number).unwrap_or(Value::Null)
    }
}

pub(super) fn shown_number(n: f64) -> String {
    let whole = n.trunc() as i64;
    let mut s = whole.abs().to_string();
    let mut grouped = String::new();
    while s.len() > 3 {
        let tail = s.split_off(s.len() - 3);
        grouped = format!(",{tail}{grouped}");
    }
    let frac = if n.fract() != 0.0 {
        format!("{}", n.fract()).trim_start_matches('0').to_string()
    } else {
        String::new()
    };
    format!("{}{s}{grouped}{frac}", if n < 0.0 { "-" } else { "" })
}

pub(super) fn op_words(op: Op) -> &'static str {
    match op {
        Op::Gt => "more than",
        Op::Gte => "at least",
        Op::Lt => "less than",
        Op::Lte => "at most",
        _ => "is",
    }
}

/// Whether a number fits the field's precision (a percentage field holds no 200,000).
pub(super) fn fits(f: &ProjectedField, v: f64) -> bool {
    match f.precision {
        Some(precision) => {
            let digits = i32::from(precision) - i32::from(f.scale.unwrap_or(0));
            v.abs() < 10f64.powi(digits.max(0))
        }
        None => true,
    }
}

pub(super) fn looks_like_currency_code(v: &str) -> bool {
    crate::metadata::catalog::is_currency_code(v)
}

/// The currency an amount is said in, by a symbol or a word among its words `span` ("under
/// 1000 €", "moins de mille euros"): its ISO code. Not "$" or "dollars": they are written for
/// "an amount" as often as for US dollars, and name a dozen currencies.
pub(super) fn currency_in(t: &[Token], span: &[usize]) -> Option<&'static str> {
    span.iter().find_map(|&i| match t[i].lower.as_str() {
        "€" => Some("EUR"),
        "£" => Some("GBP"),
        "¥" => Some("JPY"),
        "$" | "dollar" | "dollars" | "dólar" | "dólares" | "dolar" | "dolares" => None,
        w => CURRENCY_WORDS.iter().find(|(word, _)| *word == w).map(|(_, code)| *code),
    })
}

/// Where the question says the currency `code` in words ("euros", "pounds").
/// `places`: the countries the question says (`places_said`).
pub(super) fn currency_said(
    t: &[Token],
    code: &str,
    places: &[(&'static super::places::Place, Vec<usize>)],
) -> Option<Vec<usize>> {
    if !looks_like_currency_code(code) {
        return None;
    }
    (0..t.len()).find_map(|i| {
        let default = CURRENCY_WORDS.iter().find(|(w, _)| t[i].lower == *w).map(|(_, c)| *c)?;
        // "US dollars", "Canadian dollars", "Swiss francs", "dollars US": a country said
        // beside the currency's word says whose currency it is, and is part of its words.
        let beside = places.iter().find(|(_, span)| {
            span.last().is_some_and(|&e| e + 1 == i)
                || span.first().is_some_and(|&s| s == i + 1 && span.len() == 1)
        });
        match beside {
            Some((place, span)) => (place.currency == code).then(|| {
                let mut words = span.clone();
                words.push(i);
                words.sort_unstable();
                words
            }),
            // "pounds sterling", "livres sterling": the currency's words in a row are one.
            None => (default == code).then(|| {
                let code_at = |j: usize| CURRENCY_WORDS.iter().any(|(w, c)| *c == code && t[j].lower == *w);
                (i..t.len()).take_while(|&j| code_at(j)).collect()
            }),
        }
    })
}
