//! Dates the kernel reads, so that a model never computes one: the calendar and relative
//! phrases of a request ("in March 2026", "the first half of 2025", "this quarter", "last 30
//! days", "before the end of June", "2026-06-30") become inclusive ranges of days, read against
//! the workspace's today. A capability can offer them to the model as closed choices and
//! expand the one it picks into filters.
//!
//! A phrase with a relation ("before", "after", "since", "until", "by the end of", "between … and
//! …") is read twice: as the relation's open range and as the bare period, so the model can pick
//! either. What is not read is not guessed: a date the reader does not know is simply absent.

use chrono::{Datelike, Duration, NaiveDate};

/// An inclusive range of days a phrase of the request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateRange {
    /// The words of the request, as written (trimmed).
    pub phrase: String,
    /// First day; `None` = open (no earliest day).
    pub start: Option<NaiveDate>,
    /// Last day; `None` = open (no latest day).
    pub end: Option<NaiveDate>,
}

/// The months' names in English, lower-cased, January first.
pub const MONTHS: [&str; 12] = crate::locale::ENGLISH_MONTHS;

/// A word of the request with its byte range in the original text.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    start: usize,
    end: usize,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = vec![];
    let mut start = None;
    for (i, c) in text.char_indices() {
        let part = c.is_alphanumeric() || c == '-';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Word { text: text[s..i].trim_matches('-').to_lowercase(), start: s, end: i });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Word { text: text[s..].trim_matches('-').to_lowercase(), start: s, end: text.len() });
    }
    out
}

/// The calendar words of a language as the reader's English words: a month's name, the
/// relations ("vor" → "before"), periods and their shifts ("letzten Monat" → "last month"),
/// units and days. Words a language puts after their noun ("le mois dernier", "el año pasado")
/// move before it; words that only join ("antes de", "jusqu'à") are dropped. Each word keeps
/// its place in the text, so a phrase is still quoted as written.
fn in_english(ws: Vec<Word>, language: crate::locale::Language) -> Vec<Word> {
    use crate::locale::Language;
    let table: &[(&str, &str)] = match language {
        Language::En => return ws,
        Language::De => &[
            ("im", "in"),
            ("in", "in"),
            ("vor", "before"),
            ("nach", "after"),
            ("seit", "since"),
            ("ab", "since"),
            ("bis", "until"),
            ("zwischen", "between"),
            ("und", "and"),
            ("von", "from"),
            ("dieses", "this"),
            ("diesen", "this"),
            ("diesem", "this"),
            ("diese", "this"),
            ("aktuellen", "this"),
            ("letzten", "last"),
            ("letztes", "last"),
            ("letzte", "last"),
            ("letzter", "last"),
            ("vorigen", "last"),
            ("voriges", "last"),
            ("vergangenen", "last"),
            ("vergangene", "last"),
            ("nächsten", "next"),
            ("nächstes", "next"),
            ("nächste", "next"),
            ("kommenden", "next"),
            ("jahr", "year"),
            ("jahres", "year"),
            ("quartal", "quarter"),
            ("quartals", "quarter"),
            ("monat", "month"),
            ("monats", "month"),
            ("woche", "week"),
            ("tag", "day"),
            ("tage", "days"),
            ("tagen", "days"),
            ("wochen", "weeks"),
            ("monate", "months"),
            ("monaten", "months"),
            ("heute", "today"),
            ("gestern", "yesterday"),
            ("morgen", "tomorrow"),
            ("ende", "end"),
            ("anfang", "start"),
            ("beginn", "start"),
            ("des", "of"),
            ("der", "of"),
            ("ersten", "first"),
            ("erste", "first"),
            ("zweiten", "second"),
            ("zweite", "second"),
            ("dritten", "third"),
            ("vierten", "fourth"),
            ("hälfte", "half"),
            ("halbjahr", "half"),
        ],
        Language::Fr => &[
            ("en", "in"),
            ("avant", "before"),
            ("après", "after"),
            ("depuis", "since"),
            ("dès", "since"),
            ("jusqu", "until"),
            ("entre", "between"),
            ("et", "and"),
            ("de", "of"),
            ("du", "of"),
            ("ce", "this"),
            ("cette", "this"),
            ("cet", "this"),
            ("mois-ci", "month"),
            ("année-ci", "year"),
            ("année", "year"),
            ("an", "year"),
            ("trimestre", "quarter"),
            ("mois", "month"),
            ("semaine", "week"),
            ("jour", "day"),
            ("jours", "days"),
            ("semaines", "weeks"),
            ("aujourd", "today"),
            ("hier", "yesterday"),
            ("demain", "tomorrow"),
            ("fin", "end"),
            ("début", "start"),
            ("premier", "first"),
            ("première", "first"),
            ("deuxième", "second"),
            ("second", "second"),
            ("seconde", "second"),
            ("troisième", "third"),
            ("quatrième", "fourth"),
            ("moitié", "half"),
            ("semestre", "half"),
        ],
        Language::Es => &[
            ("en", "in"),
            ("antes", "before"),
            ("después", "after"),
            ("desde", "since"),
            ("hasta", "until"),
            ("entre", "between"),
            ("y", "and"),
            ("de", "of"),
            ("del", "of"),
            ("este", "this"),
            ("esta", "this"),
            ("año", "year"),
            ("trimestre", "quarter"),
            ("mes", "month"),
            ("semana", "week"),
            ("día", "day"),
            ("días", "days"),
            ("semanas", "weeks"),
            ("meses", "months"),
            ("últimos", "last"),
            ("últimas", "last"),
            ("próximos", "next"),
            ("próximas", "next"),
            ("hoy", "today"),
            ("ayer", "yesterday"),
            ("mañana", "tomorrow"),
            ("final", "end"),
            ("fin", "end"),
            ("principio", "start"),
            ("inicio", "start"),
            ("primer", "first"),
            ("primera", "first"),
            ("segundo", "second"),
            ("segunda", "second"),
            ("tercer", "third"),
            ("cuarto", "fourth"),
            ("mitad", "half"),
            ("semestre", "half"),
        ],
    };
    // Shifts written after their noun, and the words that only join.
    let (after_noun, joining): (&[(&str, &str)], &[&str]) = match language {
        Language::Fr => (
            &[
                ("dernier", "last"),
                ("dernière", "last"),
                ("derniers", "last"),
                ("dernières", "last"),
                ("passé", "last"),
                ("passée", "last"),
                ("prochain", "next"),
                ("prochaine", "next"),
                ("prochains", "next"),
                ("prochaines", "next"),
            ],
            &["à", "le", "la", "les", "l", "hui"],
        ),
        Language::Es => (
            &[("pasado", "last"), ("pasada", "last"), ("próximo", "next"), ("próxima", "next"), ("que", "")],
            &["el", "la", "los", "las", "viene"],
        ),
        _ => (&[], &[]),
    };
    let mut out: Vec<Word> = vec![];
    for w in ws {
        if let Some(m) = language.month_of(&w.text) {
            out.push(Word { text: MONTHS[m as usize - 1].to_string(), ..w });
            continue;
        }
        if joining.contains(&w.text.as_str()) {
            continue;
        }
        if let Some((_, shift)) = after_noun.iter().find(|(k, _)| *k == w.text) {
            if shift.is_empty() {
                continue;
            }
            // "mois dernier" → "last month"; "30 derniers jours" → "last 30 days".
            if let Some(before) = out.pop() {
                let number = before.text.parse::<i64>().is_ok();
                out.push(Word { text: shift.to_string(), start: before.start, end: before.start });
                // The phrase runs to the shift's end ("mois dernier"), or on to the unit after
                // a number ("30 derniers jours").
                out.push(if number { before } else { Word { end: w.end, ..before } });
            }
            continue;
        }
        match table.iter().find(|(k, _)| *k == w.text) {
            // "antes de marzo": the relation's "of" joins only.
            Some((_, "of"))
                if out.last().is_some_and(|p| ["before", "after", "until"].contains(&p.text.as_str())) => {}
            Some((_, en)) => out.push(Word { text: en.to_string(), ..w }),
            None => out.push(w),
        }
    }
    out
}

fn month_of(word: &str) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| {
            *m == word || (word.len() == 3 && m.starts_with(word)) || (word == "sept" && *m == "september")
        })
        .map(|i| i as u32 + 1)
}

/// Words after which a month without a year names this year's month ("in June", "by the end
/// of June"); anywhere else a month name may be another word ("May I …").
const BEFORE_A_BARE_MONTH: &[&str] =
    &["in", "of", "during", "before", "after", "since", "until", "till", "by", "from", "through", "and"];

fn year_of(word: &str) -> Option<i32> {
    let y: i32 = word.parse().ok()?;
    (word.len() == 4 && (1900..=2199).contains(&y)).then_some(y)
}

fn last_day(year: i32, month: u32) -> NaiveDate {
    let (y, m) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
    NaiveDate::from_ymd_opt(y, m, 1).expect("valid first of month") - Duration::days(1)
}

fn month_range(year: i32, month: u32) -> (NaiveDate, NaiveDate) {
    (NaiveDate::from_ymd_opt(year, month, 1).expect("valid month"), last_day(year, month))
}

fn quarter_range(year: i32, q: u32) -> (NaiveDate, NaiveDate) {
    (month_range(year, q * 3 - 2).0, month_range(year, q * 3).1)
}

fn number_word(w: &str) -> Option<i64> {
    const SMALL: [&str; 13] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    w.parse().ok().or_else(|| SMALL.iter().position(|s| *s == w).map(|i| i as i64))
}

/// A period the words from `i` name, with how many words it takes.
fn period(ws: &[Word], i: usize, today: NaiveDate) -> Option<((NaiveDate, NaiveDate), usize)> {
    let w = |k: usize| ws.get(i + k).map(|w| w.text.as_str()).unwrap_or("");
    // 2026-06-30
    if let Ok(d) = NaiveDate::parse_from_str(w(0), "%Y-%m-%d") {
        return Some(((d, d), 1));
    }
    // March 2026, March (of this year)
    if let Some(m) = month_of(w(0)) {
        if let Some(y) = year_of(w(1)) {
            return Some((month_range(y, m), 2));
        }
        if w(1) == "of" {
            if let Some(y) = year_of(w(2)) {
                return Some((month_range(y, m), 3));
            }
        }
        let prev = i.checked_sub(1).and_then(|j| ws.get(j)).map(|w| w.text.as_str());
        return prev.filter(|p| BEFORE_A_BARE_MONTH.contains(p)).map(|_| (month_range(today.year(), m), 1));
    }
    // Q1 2026, H2 2025
    if let (Some(kind), Some(n)) = (w(0).chars().next(), w(0).get(1..).and_then(|n| n.parse::<u32>().ok())) {
        if w(0).len() == 2 {
            let year = year_of(w(1));
            let taken = if year.is_some() { 2 } else { 1 };
            let y = year.unwrap_or(today.year());
            match (kind, n) {
                ('q', 1..=4) => return Some((quarter_range(y, n), taken)),
                ('h', 1..=2) => return Some(((month_range(y, n * 6 - 5).0, month_range(y, n * 6).1), taken)),
                _ => {}
            }
        }
    }
    // the first half of 2025, the second quarter of 2026
    let ordinal =
        ["first", "second", "third", "fourth"].iter().position(|o| *o == w(0)).map(|i| i as u32 + 1);
    if let Some(n) = ordinal {
        let (part, after) = (w(1), 2);
        let (year, taken) = match (w(after), year_of(w(after + 1))) {
            ("of", Some(y)) => (y, after + 2),
            _ => match year_of(w(after)) {
                Some(y) => (y, after + 1),
                None => (today.year(), after),
            },
        };
        match (part, n) {
            ("half", 1..=2) => {
                return Some(((month_range(year, n * 6 - 5).0, month_range(year, n * 6).1), taken))
            }
            ("quarter", 1..=4) => return Some((quarter_range(year, n), taken)),
            _ => {}
        }
    }
    // 2025
    if let Some(y) = year_of(w(0)) {
        return Some(((NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y, 12, 31)?), 1));
    }
    // today, yesterday, tomorrow
    match w(0) {
        "today" => return Some(((today, today), 1)),
        "yesterday" => return Some(((today - Duration::days(1), today - Duration::days(1)), 1)),
        "tomorrow" => return Some(((today + Duration::days(1), today + Duration::days(1)), 1)),
        _ => {}
    }
    // this/last/next year, quarter, month, week
    let shift = match w(0) {
        "this" | "current" => Some(0),
        "last" | "previous" => Some(-1),
        "next" => Some(1),
        _ => None,
    };
    if let Some(shift) = shift {
        match w(1) {
            "year" => {
                let y = today.year() + shift;
                return Some(((NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y, 12, 31)?), 2));
            }
            "quarter" => {
                let q0 = (today.month0() / 3) as i32 + shift + today.year() * 4;
                return Some((quarter_range(q0.div_euclid(4), q0.rem_euclid(4) as u32 + 1), 2));
            }
            "month" => {
                let m0 = today.month0() as i32 + shift + today.year() * 12;
                return Some((month_range(m0.div_euclid(12), m0.rem_euclid(12) as u32 + 1), 2));
            }
            "week" => {
                let monday = today - Duration::days(today.weekday().num_days_from_monday() as i64)
                    + Duration::weeks(shift as i64);
                return Some(((monday, monday + Duration::days(6)), 2));
            }
            _ => {}
        }
        // last 30 days, next 2 weeks
        if let Some(n) = number_word(w(1)).filter(|n| (1..=3660).contains(n)) {
            let days = match w(2) {
                "day" | "days" => n,
                "week" | "weeks" => n * 7,
                "month" | "months" => n * 30,
                _ => return None,
            };
            let range = if shift < 0 {
                (today - Duration::days(days - 1), today)
            } else {
                (today, today + Duration::days(days - 1))
            };
            return Some((range, 3));
        }
    }
    None
}

/// "more than N days [ago]" (weeks and months too, a month as 30 days): N in days and the words
/// it takes.
fn more_than(ws: &[Word], i: usize) -> Option<(i64, usize)> {
    let w = |k: usize| ws.get(i + k).map(|w| w.text.as_str()).unwrap_or("");
    let (n_at, unit_at) = match (w(0), w(1)) {
        ("more" | "over", "than") => (2, 3),
        ("over", _) => (1, 2),
        _ => return None,
    };
    let n = number_word(w(n_at)).filter(|n| (1..=3660).contains(n))?;
    let days = match w(unit_at) {
        "day" | "days" => n,
        "week" | "weeks" => n * 7,
        "month" | "months" => n * 30,
        _ => return None,
    };
    Some((days, unit_at + 1 + usize::from(w(unit_at + 1) == "ago")))
}

/// Every date range the request names, longest phrases first where several overlap.
pub fn read_dates(text: &str, today: NaiveDate, language: crate::locale::Language) -> Vec<DateRange> {
    let ws = in_english(words(text), language);
    let word = |j: Option<usize>| j.and_then(|j| ws.get(j)).map(|w| w.text.as_str());
    let phrase = |from: usize, to: usize| text[ws[from].start..ws[to].end].trim().to_string();
    let mut out: Vec<DateRange> = vec![];
    let mut i = 0;
    while i < ws.len() {
        // "more than 60 days ago", "overdue by more than 60 days": days before today less that.
        if let Some((days, taken)) = more_than(&ws, i) {
            let last = i + taken - 1;
            let first = if word(i.checked_sub(1)) == Some("by") { i - 1 } else { i };
            out.push(DateRange {
                phrase: phrase(first, last),
                start: None,
                end: Some(today - Duration::days(days + 1)),
            });
            i = last + 1;
            continue;
        }
        // "the end of June", "the start of 2026": one day.
        let (edge, skip) = match (ws[i].text.as_str(), word(Some(i + 1))) {
            ("end", Some("of")) => (Some(true), 2),
            ("start" | "beginning", Some("of")) => (Some(false), 2),
            _ => (None, 0),
        };
        let Some(((start, end), taken)) = period(&ws, i + skip, today) else {
            i += 1;
            continue;
        };
        let (start, end) = match edge {
            Some(true) => (end, end),
            Some(false) => (start, start),
            None => (start, end),
        };
        let last = i + skip + taken - 1;
        // The phrase takes its article: "the first half of 2026", "the end of June".
        let first = if word(i.checked_sub(1)) == Some("the") { i - 1 } else { i };
        out.push(DateRange { phrase: phrase(first, last), start: Some(start), end: Some(end) });
        // The relation before it: "before …", "since …", "by the end of …", "between … and …".
        let relation = match word(first.checked_sub(1)) {
            // "before the end of June" means by the end of June, the last day included.
            Some("before") if edge == Some(true) => Some((None, Some(end))),
            Some("before") => Some((None, Some(start - Duration::days(1)))),
            Some("after") => Some((Some(end + Duration::days(1)), None)),
            Some("since" | "from") => Some((Some(start), None)),
            Some("until" | "till" | "through" | "by") => Some((None, Some(end))),
            _ => None,
        };
        if let Some((s, e)) = relation {
            out.push(DateRange { phrase: phrase(first - 1, last), start: s, end: e });
        }
        if word(first.checked_sub(1)) == Some("between") && word(Some(last + 1)) == Some("and") {
            if let Some(((_, to_end), taken_too)) = period(&ws, last + 2, today) {
                let to_last = last + 1 + taken_too;
                out.push(DateRange {
                    phrase: phrase(first - 1, to_last),
                    start: Some(start),
                    end: Some(to_end),
                });
            }
        }
        i = last + 1;
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.phrase.len()));
    out.dedup_by(|a, b| a.phrase == b.phrase);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// The ranges read from `text` on 2026-11-29 (a Sunday), as `phrase: start..end`.
    fn read(text: &str) -> Vec<String> {
        let show = |x: Option<NaiveDate>| x.map(|x| x.to_string()).unwrap_or_default();
        read_dates(text, d("2026-11-29"), crate::locale::Language::En)
            .into_iter()
            .map(|r| format!("{}: {}..{}", r.phrase, show(r.start), show(r.end)))
            .collect()
    }

    #[test]
    fn calendar_phrases_become_ranges_of_days() {
        assert_eq!(read("Invoices due in March 2026."), ["March 2026: 2026-03-01..2026-03-31"]);
        assert_eq!(read("Invoices issued in February 2025"), ["February 2025: 2025-02-01..2025-02-28"]);
        assert_eq!(read("closing in 2026"), ["2026: 2026-01-01..2026-12-31"]);
        assert_eq!(read("the first half of 2026"), ["the first half of 2026: 2026-01-01..2026-06-30"]);
        assert_eq!(
            read("issued in the second half of 2025"),
            ["the second half of 2025: 2025-07-01..2025-12-31"]
        );
        assert_eq!(read("notes from June"), ["from June: 2026-06-01..", "June: 2026-06-01..2026-06-30"]);
        assert_eq!(read("in Q3 2026"), ["Q3 2026: 2026-07-01..2026-09-30"]);
        assert_eq!(read("February 2028"), ["February 2028: 2028-02-01..2028-02-29"]);
    }

    #[test]
    fn relative_phrases_are_read_against_today() {
        assert_eq!(read("this quarter"), ["this quarter: 2026-10-01..2026-12-31"]);
        assert_eq!(read("last quarter"), ["last quarter: 2026-07-01..2026-09-30"]);
        assert_eq!(read("next month"), ["next month: 2026-12-01..2026-12-31"]);
        assert_eq!(read("last year"), ["last year: 2025-01-01..2025-12-31"]);
        assert_eq!(read("in the last 30 days"), ["the last 30 days: 2026-10-31..2026-11-29"]);
        assert_eq!(read("this week"), ["this week: 2026-11-23..2026-11-29"]);
        assert_eq!(read("invoices overdue by more than 60 days"), ["by more than 60 days: ..2026-09-29"]);
        assert_eq!(read("notes written more than 2 weeks ago"), ["more than 2 weeks ago: ..2026-11-14"]);
        assert_eq!(read("yesterday"), ["yesterday: 2026-11-28..2026-11-28"]);
    }

    #[test]
    fn a_relation_gives_an_open_range_and_the_bare_period_stays_offered() {
        assert_eq!(
            read("closing before 2026-06-30"),
            ["before 2026-06-30: ..2026-06-29", "2026-06-30: 2026-06-30..2026-06-30"]
        );
        assert_eq!(
            read("paid before the end of June 2025"),
            ["before the end of June 2025: ..2025-06-30", "the end of June 2025: 2025-06-30..2025-06-30"]
        );
        assert_eq!(
            read("by the end of June"),
            ["by the end of June: ..2026-06-30", "the end of June: 2026-06-30..2026-06-30"]
        );
        assert_eq!(
            read("since March 2026"),
            ["since March 2026: 2026-03-01..", "March 2026: 2026-03-01..2026-03-31"]
        );
        assert_eq!(read("after 2025"), ["after 2025: 2026-01-01..", "2025: 2025-01-01..2025-12-31"]);
        assert_eq!(
            read("between March 2026 and June 2026"),
            [
                "between March 2026 and June 2026: 2026-03-01..2026-06-30",
                "March 2026: 2026-03-01..2026-03-31",
                "June 2026: 2026-06-01..2026-06-30"
            ]
        );
    }

    #[test]
    fn german_french_and_spanish_calendar_words_are_read_as_written() {
        use crate::locale::Language;
        let read = |text: &str, l: Language| {
            read_dates(text, d("2026-11-29"), l)
                .into_iter()
                .map(|r| format!("{}: {:?}..{:?}", r.phrase, r.start, r.end))
                .collect::<Vec<_>>()
        };
        let march = "Some(2026-03-01)..Some(2026-03-31)";
        assert!(read("Rechnungen im März 2026", Language::De).contains(&format!("März 2026: {march}")));
        assert!(read("Rechnungen im Maerz 2026", Language::De).contains(&format!("Maerz 2026: {march}")));
        assert!(read("factures de mars 2026", Language::Fr).contains(&format!("mars 2026: {march}")));
        assert!(read("facturas de marzo de 2026", Language::Es).contains(&format!("marzo de 2026: {march}")));
        assert!(read("Rechnungen vor März 2026", Language::De)
            .contains(&"vor März 2026: None..Some(2026-02-28)".to_string()));
        assert!(read("facturas antes de marzo de 2026", Language::Es)
            .contains(&"antes de marzo de 2026: None..Some(2026-02-28)".to_string()));
        let last_month = "Some(2026-10-01)..Some(2026-10-31)";
        assert!(
            read("Rechnungen letzten Monat", Language::De).contains(&format!("letzten Monat: {last_month}"))
        );
        assert!(read("les factures du mois dernier", Language::Fr)
            .contains(&format!("mois dernier: {last_month}")));
        assert!(read("facturas del mes pasado", Language::Es).contains(&format!("mes pasado: {last_month}")));
        assert!(read("les 30 derniers jours", Language::Fr)
            .contains(&"30 derniers jours: Some(2026-10-31)..Some(2026-11-29)".to_string()));
        assert!(
            read("seit Q1 2026", Language::De).contains(&"seit Q1 2026: Some(2026-01-01)..None".to_string())
        );
        // English words still read in another locale; German words do not read in English.
        assert!(read("invoices in March 2026", Language::De).contains(&format!("March 2026: {march}")));
        assert!(read("Rechnungen im März", Language::En).is_empty());
    }

    #[test]
    fn what_is_not_a_date_is_not_read() {
        assert!(read("Show all accounts.").is_empty());
        assert!(read("Open opportunities over 200000").is_empty());
        assert!(read("the five largest opportunities").is_empty());
        assert!(read("May I see the contacts at Bluth Partners?").is_empty());
        assert!(read("Invoices of Summit Systems").is_empty());
    }
}
