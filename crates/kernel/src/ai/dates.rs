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
            ("montag", "monday"),
            ("dienstag", "tuesday"),
            ("mittwoch", "wednesday"),
            ("donnerstag", "thursday"),
            ("freitag", "friday"),
            ("samstag", "saturday"),
            ("sonntag", "sunday"),
            ("weihnachten", "christmas"),
            ("ostern", "easter"),
            ("silvester", "newyearseve"),
            ("neujahr", "newyear"),
            ("geschäftsjahr", "fy"),
            ("geschäftsjahres", "fy"),
            ("gj", "fy"),
            ("dritten", "third"),
            ("dritte", "third"),
            ("ersten", "first"),
            ("erste", "first"),
            ("zweiten", "second"),
            ("zweite", "second"),
            ("vierten", "fourth"),
            ("vierte", "fourth"),
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
            ("lundi", "monday"),
            ("mardi", "tuesday"),
            ("mercredi", "wednesday"),
            ("jeudi", "thursday"),
            ("vendredi", "friday"),
            ("samedi", "saturday"),
            ("dimanche", "sunday"),
            ("noël", "christmas"),
            ("pâques", "easter"),
            ("exercice", "fy"),
            ("troisième", "third"),
            ("deuxième", "second"),
            ("quatrième", "fourth"),
            ("premier", "first"),
            ("première", "first"),
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
            ("lunes", "monday"),
            ("martes", "tuesday"),
            ("miércoles", "wednesday"),
            ("jueves", "thursday"),
            ("viernes", "friday"),
            ("sábado", "saturday"),
            ("domingo", "sunday"),
            ("navidad", "christmas"),
            ("pascua", "easter"),
            ("ejercicio", "fy"),
            ("tercero", "third"),
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
const BEFORE_A_BARE_MONTH: &[&str] = &[
    "in", "of", "during", "before", "after", "since", "until", "till", "by", "from", "through", "and",
    "between", "to",
];

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

/// A year the words from `k` name: "2025", "of 2025", "last year", "of this year"; with how
/// many words it takes.
fn year_expr(ws: &[Word], k: usize, today: NaiveDate) -> Option<(i32, usize)> {
    let w = |j: usize| ws.get(k + j).map(|w| w.text.as_str()).unwrap_or("");
    if let Some(y) = year_of(w(0)) {
        return Some((y, 1));
    }
    if w(0) == "of" {
        return year_expr(ws, k + 1, today).map(|(y, n)| (y, n + 1));
    }
    // "the year 2025", "im Jahr 2025", "en el año 2025": the word only names what follows.
    if w(0) == "year" {
        return year_of(w(1)).map(|y| (y, 2));
    }
    if w(0) == "the" && w(1) == "year" {
        return Some(year_of(w(2)).map_or((today.year(), 2), |y| (y, 3)));
    }
    let shift = match w(0) {
        "this" | "current" => 0,
        "last" | "previous" => -1,
        "next" => 1,
        _ => return None,
    };
    (w(1) == "year").then_some((today.year() + shift, 2))
}

/// The fiscal year named `fy` (by the calendar year it ends in) when it starts in month
/// `start`: FY2025 starting in April is 2024-04-01 to 2025-03-31.
fn fiscal_year(fy: i32, start: u32) -> (NaiveDate, NaiveDate) {
    if start <= 1 {
        return (month_range(fy, 1).0, month_range(fy, 12).1);
    }
    (month_range(fy - 1, start).0, month_range(fy, start - 1).1)
}

/// The fiscal year today falls in.
fn fiscal_year_of(day: NaiveDate, start: u32) -> i32 {
    if start <= 1 || day.month() < start {
        day.year()
    } else {
        day.year() + 1
    }
}

/// Quarter `q` of a fiscal year.
fn fiscal_quarter(fy: i32, start: u32, q: u32) -> (NaiveDate, NaiveDate) {
    let first = fiscal_year(fy, start).0;
    let m0 = first.year() * 12 + first.month0() as i32 + 3 * (q as i32 - 1);
    let (y, m) = (m0.div_euclid(12), m0.rem_euclid(12) as u32 + 1);
    let m_end = m0 + 2;
    (month_range(y, m).0, month_range(m_end.div_euclid(12), m_end.rem_euclid(12) as u32 + 1).1)
}

/// A fiscal year the words from `k` name: "FY2025", "FY25", "FY 2025", "fiscal year 2025",
/// "fiscal 2025"; with how many words it takes.
fn fiscal_expr(ws: &[Word], k: usize) -> Option<(i32, usize)> {
    let w = |j: usize| ws.get(k + j).map(|w| w.text.as_str()).unwrap_or("");
    let short = |s: &str| -> Option<i32> {
        let n: i32 = s.parse().ok()?;
        match s.len() {
            2 => Some(2000 + n),
            4 => year_of(s),
            _ => None,
        }
    };
    if let Some(rest) = w(0).strip_prefix("fy").filter(|r| !r.is_empty()) {
        return short(rest).map(|y| (y, 1));
    }
    match (w(0), w(1)) {
        ("fy", next) => short(next).map(|y| (y, 2)),
        ("fiscal", "year") => short(w(2)).map(|y| (y, 3)),
        ("fiscal", next) => short(next).map(|y| (y, 2)),
        _ => None,
    }
}

/// The day of a holiday in `year`: Christmas, Christmas Eve, New Year's Day and Eve, Easter
/// Sunday (the Gregorian computus).
fn holiday(name: &str, year: i32) -> Option<NaiveDate> {
    match name {
        "christmas" | "xmas" => NaiveDate::from_ymd_opt(year, 12, 25),
        "newyearseve" => NaiveDate::from_ymd_opt(year, 12, 31),
        "newyear" => NaiveDate::from_ymd_opt(year, 1, 1),
        "easter" => {
            let (a, b, c) = (year % 19, year / 100, year % 100);
            let (d, e) = (b / 4, b % 4);
            let g = (8 * b + 13) / 25;
            let h = (19 * a + b - d - g + 15) % 30;
            let (i, k) = (c / 4, c % 4);
            let l = (32 + 2 * e + 2 * i - h - k) % 7;
            let m = (a + 11 * h + 19 * l) / 433;
            let month = (h + l - 7 * m + 90) / 25;
            let day = (h + l - 7 * m + 33 * month + 19) % 32;
            NaiveDate::from_ymd_opt(year, month as u32, day as u32)
        }
        _ => None,
    }
}

const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// A period the words from `i` name, with how many words it takes; the workspace's fiscal year
/// starts in month `fiscal_start`.
fn period_in(
    ws: &[Word],
    i: usize,
    today: NaiveDate,
    fiscal_start: u32,
) -> Option<((NaiveDate, NaiveDate), usize)> {
    let w = |k: usize| ws.get(i + k).map(|w| w.text.as_str()).unwrap_or("");
    // FY2025, fiscal year 2025; Q3 FY2025 is read at the quarter below.
    if let Some((fy, taken)) = fiscal_expr(ws, i) {
        return Some((fiscal_year(fy, fiscal_start), taken));
    }
    // Christmas, New Year's Day, Easter: this year's.
    let name = match (w(0), w(1), w(2)) {
        ("new", "year", "s") | ("new", "years", _) | ("new", "year", _) => {
            let eve = matches!(w(3), "eve") || matches!(w(2), "eve");
            let taken = if w(2) == "s" { 3 } else { 2 } + usize::from(eve);
            Some((if eve { "newyearseve" } else { "newyear" }, taken))
        }
        ("christmas", "eve", _) => Some(("christmaseve", 2)),
        (h, _, _) if holiday(h, today.year()).is_some() => Some((h, 1)),
        _ => None,
    };
    if let Some((h, taken)) = name {
        let day = match h {
            "christmaseve" => NaiveDate::from_ymd_opt(today.year(), 12, 24),
            other => holiday(other, today.year()),
        }?;
        return Some(((day, day), taken));
    }
    // Monday, last Friday, next Tuesday.
    let weekday = |word: &str| WEEKDAYS.iter().position(|d| *d == word);
    let prev = i.checked_sub(1).and_then(|j| ws.get(j)).map(|w| w.text.as_str()).unwrap_or("");
    if let Some(d) = weekday(w(0)).filter(|_| prev == "on" || BEFORE_A_BARE_MONTH.contains(&prev)) {
        // A bare weekday ("on Monday") is the latest one on or before today.
        let back = (today.weekday().num_days_from_monday() as i64 - d as i64).rem_euclid(7);
        let day = today - Duration::days(back);
        return Some(((day, day), 1));
    }
    // 2026-06-30
    if let Ok(d) = NaiveDate::parse_from_str(w(0), "%Y-%m-%d") {
        return Some(((d, d), 1));
    }
    // One day: "9 January 2025", "9. Januar 2026", "le 9 janvier 2026", "9 de enero de 2026",
    // "January 9, 2025"; without its year only after "on" ("on 9 January"), where a number
    // before a month is no count ("the 5 March invoices").
    let day_of = |s: &str| {
        let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &s[digits.len()..];
        let ordinal = matches!(suffix, "" | "st" | "nd" | "rd" | "th" | "er" | "e");
        digits.parse::<u32>().ok().filter(|d| (1..=31).contains(d) && digits.len() <= 2 && ordinal)
    };
    let prev = i.checked_sub(1).and_then(|j| ws.get(j)).map(|w| w.text.as_str()).unwrap_or("");
    let joins = |s: &str| matches!(s, "de" | "of");
    if let Some(d) = day_of(w(0)) {
        let m_at = if joins(w(1)) { 2 } else { 1 };
        if let Some(m) = month_of(w(m_at)) {
            let y_at = if joins(w(m_at + 1)) { m_at + 2 } else { m_at + 1 };
            let dated = match year_of(w(y_at)) {
                Some(y) => Some((y, y_at + 1)),
                None if matches!(prev, "on" | "am" | "le" | "el") => Some((today.year(), m_at + 1)),
                None => None,
            };
            if let Some((y, taken)) = dated {
                if let Some(day) = NaiveDate::from_ymd_opt(y, m, d) {
                    return Some(((day, day), taken));
                }
            }
        }
    }
    if let (Some(m), Some(d), Some(y)) = (month_of(w(0)), day_of(w(1)), year_of(w(2))) {
        if let Some(day) = NaiveDate::from_ymd_opt(y, m, d) {
            return Some(((day, day), 3));
        }
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
    // Q1 2026, H2 2025, Q1 last year, Q3 of 2025, Q2 FY2026, fiscal Q2
    let fiscal_before = w(0) == "fiscal" || w(0) == "fy";
    let at = usize::from(fiscal_before);
    if let (Some(kind), Some(n)) = (w(at).chars().next(), w(at).get(1..).and_then(|n| n.parse::<u32>().ok()))
    {
        if w(at).len() == 2 && matches!((kind, n), ('q', 1..=4) | ('h', 1..=2)) {
            if let Some((fy, taken)) = fiscal_expr(ws, i + at + 1)
                .or_else(|| fiscal_before.then(|| (fiscal_year_of(today, fiscal_start), 0)))
            {
                let range = match kind {
                    'q' => fiscal_quarter(fy, fiscal_start, n),
                    _ => (
                        fiscal_quarter(fy, fiscal_start, n * 2 - 1).0,
                        fiscal_quarter(fy, fiscal_start, n * 2).1,
                    ),
                };
                return Some((range, at + 1 + taken));
            }
            let (y, taken) =
                year_expr(ws, i + at + 1, today).map(|(y, t)| (y, t + 1)).unwrap_or((today.year(), 1));
            match (kind, n) {
                ('q', 1..=4) => return Some((quarter_range(y, n), at + taken)),
                ('h', 1..=2) => {
                    return Some(((month_range(y, n * 6 - 5).0, month_range(y, n * 6).1), at + taken))
                }
                _ => {}
            }
        }
    }
    // the first half of 2025, the second quarter of 2026, the third quarter of last year, the
    // last quarter of 2025 ("last" with a year: its last quarter, not the quarter before this one)
    let ordinal = ["first", "second", "third", "fourth"]
        .iter()
        .position(|o| *o == w(0))
        .map(|i| i as u32 + 1)
        .or_else(|| ["1st", "2nd", "3rd", "4th"].iter().position(|o| *o == w(0)).map(|i| i as u32 + 1))
        .or_else(|| {
            (w(0) == "last" && year_expr(ws, i + 2, today).is_some() && w(2) == "of")
                .then_some(if w(1) == "half" { 2 } else { 4 })
        });
    if let Some(n) = ordinal {
        let (part, after) = (w(1), 2);
        if let Some((fy, taken)) = fiscal_expr(ws, i + after).or_else(|| {
            (w(after) == "of").then(|| fiscal_expr(ws, i + after + 1).map(|(y, t)| (y, t + 1))).flatten()
        }) {
            let range = match (part, n) {
                ("quarter", 1..=4) => Some(fiscal_quarter(fy, fiscal_start, n)),
                ("half", 1..=2) => Some((
                    fiscal_quarter(fy, fiscal_start, n * 2 - 1).0,
                    fiscal_quarter(fy, fiscal_start, n * 2).1,
                )),
                _ => None,
            };
            if let Some(range) = range {
                return Some((range, after + taken));
            }
        }
        let (year, taken) = match year_expr(ws, i + after, today) {
            Some((y, t)) => (y, after + t),
            None => (today.year(), after),
        };
        match (part, n) {
            ("half", 1..=2) => {
                return Some(((month_range(year, n * 6 - 5).0, month_range(year, n * 6).1), taken))
            }
            ("quarter", 1..=4) => return Some((quarter_range(year, n), taken)),
            _ => {}
        }
    }
    // 2025, and "the year 2025", "im Jahr 2025", "en el año 2025" (the words only name it).
    let lead = match (w(0), w(1)) {
        ("the", "year") => 2,
        ("year", _) => 1,
        _ => 0,
    };
    if let Some(y) = year_of(w(lead)) {
        return Some(((NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y, 12, 31)?), lead + 1));
    }
    // "the month", "the year" (as in "the end of the month"): this one.
    if w(0) == "the" && matches!(w(1), "month" | "year" | "quarter" | "week") {
        let this = [Word { text: "this".into(), ..ws[i].clone() }, ws[i + 1].clone()];
        return period_in(&this, 0, today, fiscal_start).map(|(r, _)| (r, 2));
    }
    // year to date, YTD, month to date, quarter to date
    let to_date = match (w(0), w(1), w(2)) {
        ("ytd", _, _) => Some(("year", 1)),
        ("mtd", _, _) => Some(("month", 1)),
        ("qtd", _, _) => Some(("quarter", 1)),
        (unit @ ("year" | "month" | "quarter"), "to", "date") => Some((unit, 3)),
        _ => None,
    };
    if let Some((unit, taken)) = to_date {
        let start = match unit {
            "year" => NaiveDate::from_ymd_opt(today.year(), 1, 1)?,
            "month" => NaiveDate::from_ymd_opt(today.year(), today.month(), 1)?,
            _ => quarter_range(today.year(), today.month0() / 3 + 1).0,
        };
        return Some(((start, today), taken));
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
        // this fiscal year, last fiscal year, next FY
        if (w(1) == "fiscal" && w(2) == "year") || w(1) == "fy" {
            let fy = fiscal_year_of(today, fiscal_start) + shift;
            return Some((fiscal_year(fy, fiscal_start), if w(1) == "fy" { 2 } else { 3 }));
        }
        // last Friday, next Tuesday, this Monday
        if let Some(d) = weekday(w(1)) {
            let now = today.weekday().num_days_from_monday() as i64;
            let day = match shift {
                0 => today + Duration::days(d as i64 - now),
                s if s < 0 => today - Duration::days((now - d as i64 - 1).rem_euclid(7) + 1),
                _ => today + Duration::days((d as i64 - now - 1).rem_euclid(7) + 1),
            };
            return Some(((day, day), 2));
        }
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
            // Today and the N days before it (after it), as Salesforce's LAST_N_DAYS reads:
            // a note of 60 days ago is in "the last 60 days".
            let range = if shift < 0 {
                (today - Duration::days(days), today)
            } else {
                (today, today + Duration::days(days))
            };
            return Some((range, 3));
        }
    }
    None
}

/// Words after a duration that make it a gap between two dates ("30 days *late*").
pub const GAP_WORDS: &[&str] = &["late", "early", "after", "before", "later", "earlier"];

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
    // "paid more than 30 days late", "signed 2 weeks after": a gap between two dates of the
    // record, not an age counted from today.
    if GAP_WORDS.contains(&w(unit_at + 1)) {
        return None;
    }
    Some((days, unit_at + 1 + usize::from(w(unit_at + 1) == "ago")))
}

/// Every date range the request names, longest phrases first where several overlap.
pub fn read_dates(text: &str, today: NaiveDate, language: crate::locale::Language) -> Vec<DateRange> {
    read_dates_in(text, today, language, 1)
}

/// `read_dates` in a workspace whose fiscal year starts in month `fiscal_start` (1: January).
pub fn read_dates_in(
    text: &str,
    today: NaiveDate,
    language: crate::locale::Language,
    fiscal_start: u32,
) -> Vec<DateRange> {
    let period = |ws: &[Word], i: usize, today: NaiveDate| period_in(ws, i, today, fiscal_start);
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
        let mut last = i + skip + taken - 1;
        // "this year so far", "this quarter to date", "this month until now": up to today.
        let (start, end) = match (word(Some(last + 1)), word(Some(last + 2))) {
            (Some("so"), Some("far"))
            | (Some("to"), Some("date"))
            | (Some("until" | "till"), Some("now"))
                if start <= today =>
            {
                last += 2;
                (start, end.min(today))
            }
            _ => (start, end),
        };
        // The phrase takes its article: "the first half of 2026", "the end of June".
        let first = if word(i.checked_sub(1)) == Some("the") { i - 1 } else { i };
        out.push(DateRange { phrase: phrase(first, last), start: Some(start), end: Some(end) });
        // The relation before it: "before …", "since …", "by the end of …", "between … and …".
        let relation = match word(first.checked_sub(1)) {
            // "before the end of June" means by the end of June, the last day included.
            Some("before") if edge == Some(true) => Some((None, Some(end))),
            Some("before") => Some((None, Some(start - Duration::days(1)))),
            Some("after") => Some((Some(end + Duration::days(1)), None)),
            Some("since") => Some((Some(start), None)),
            // "from 2025" says which year, unless it goes on ("from 2025 on", "from March onwards").
            Some("from") if matches!(word(Some(last + 1)), Some("on" | "onwards" | "onward")) => {
                Some((Some(start), None))
            }
            Some("until" | "till" | "through" | "by") => Some((None, Some(end))),
            _ => None,
        };
        if let Some((s, e)) = relation {
            out.push(DateRange { phrase: phrase(first - 1, last), start: s, end: e });
        }
        // "between March and May", "from March to May", "from Q1 until Q3".
        let range_to = matches!(
            (word(first.checked_sub(1)), word(Some(last + 1))),
            (Some("between"), Some("and")) | (Some("from"), Some("to" | "until" | "till" | "through"))
        );
        if range_to {
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
    fn quarters_relative_years_fiscal_years_weekdays_and_holidays() {
        assert_eq!(read("in Q1 last year"), ["Q1 last year: 2025-01-01..2025-03-31"]);
        assert_eq!(read("in Q3 of 2025"), ["Q3 of 2025: 2025-07-01..2025-09-30"]);
        assert_eq!(read("in the year 2025"), ["the year 2025: 2025-01-01..2025-12-31"]);
        assert_eq!(read("in Q2 of the year 2025"), ["Q2 of the year 2025: 2025-04-01..2025-06-30"]);
        assert_eq!(
            read("the third quarter of last year"),
            ["the third quarter of last year: 2025-07-01..2025-09-30"]
        );
        assert_eq!(read("in the last quarter of 2025"), ["the last quarter of 2025: 2025-10-01..2025-12-31"]);
        assert_eq!(
            read("last quarter"),
            ["last quarter: 2026-07-01..2026-09-30"],
            "a relative quarter still"
        );
        assert!(read("between March and May")
            .contains(&"between March and May: 2026-03-01..2026-05-31".to_string()));
        assert!(read("from March to May").contains(&"from March to May: 2026-03-01..2026-05-31".to_string()));
        // 2026-11-29 is a Sunday.
        assert_eq!(read("last Friday"), ["last Friday: 2026-11-27..2026-11-27"]);
        assert_eq!(read("next Monday"), ["next Monday: 2026-11-30..2026-11-30"]);
        assert_eq!(read("on Tuesday"), ["Tuesday: 2026-11-24..2026-11-24"]);
        assert!(read("Friday Foods").is_empty(), "a weekday without a word of time is a name");
        assert_eq!(read("paid year to date"), ["year to date: 2026-01-01..2026-11-29"]);
        assert_eq!(read("QTD"), ["QTD: 2026-10-01..2026-11-29"]);
        assert!(read("due before the end of the month")
            .contains(&"before the end of the month: ..2026-11-30".to_string()));
        assert_eq!(
            read("in the first half of the year"),
            ["the first half of the year: 2026-01-01..2026-06-30"]
        );
        assert!(read("after Christmas").contains(&"after Christmas: 2026-12-26..".to_string()));
        assert!(read("before Easter").contains(&"before Easter: ..2026-04-04".to_string()));
        let fiscal = |text: &str, start: u32| -> Vec<String> {
            read_dates_in(text, d("2026-11-29"), crate::locale::Language::En, start)
                .into_iter()
                .map(|r| format!("{}: {:?}..{:?}", r.phrase, r.start.unwrap(), r.end.unwrap()))
                .collect()
        };
        assert_eq!(fiscal("in FY2025", 4), ["FY2025: 2024-04-01..2025-03-31"]);
        assert_eq!(fiscal("in FY25", 1), ["FY25: 2025-01-01..2025-12-31"]);
        assert_eq!(fiscal("fiscal year 2026", 7), ["fiscal year 2026: 2025-07-01..2026-06-30"]);
        assert_eq!(fiscal("in Q2 FY2026", 4), ["Q2 FY2026: 2025-07-01..2025-09-30"]);
        assert_eq!(fiscal("this fiscal year", 4), ["this fiscal year: 2026-04-01..2027-03-31"]);
        assert_eq!(fiscal("last fiscal year", 4), ["last fiscal year: 2025-04-01..2026-03-31"]);
        assert_eq!(fiscal("in fiscal Q1", 10), ["fiscal Q1: 2026-10-01..2026-12-31"]);
        let de = |text: &str| -> Vec<String> {
            read_dates(text, d("2026-11-29"), crate::locale::Language::De)
                .into_iter()
                .map(|r| r.phrase)
                .collect()
        };
        assert_eq!(de("im dritten Quartal 2025"), ["dritten Quartal 2025"]);
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
        // "from June" says which month; "from June on" where a range starts.
        assert_eq!(read("notes from June"), ["June: 2026-06-01..2026-06-30"]);
        assert_eq!(
            read("notes from June onwards"),
            ["from June: 2026-06-01..", "June: 2026-06-01..2026-06-30"]
        );
        assert_eq!(read("in Q3 2026"), ["Q3 2026: 2026-07-01..2026-09-30"]);
        assert_eq!(read("February 2028"), ["February 2028: 2028-02-01..2028-02-29"]);
    }

    #[test]
    fn relative_phrases_are_read_against_today() {
        assert_eq!(read("this quarter"), ["this quarter: 2026-10-01..2026-12-31"]);
        assert_eq!(read("last quarter"), ["last quarter: 2026-07-01..2026-09-30"]);
        assert_eq!(read("next month"), ["next month: 2026-12-01..2026-12-31"]);
        assert_eq!(read("last year"), ["last year: 2025-01-01..2025-12-31"]);
        assert_eq!(read("in the last 30 days"), ["the last 30 days: 2026-10-30..2026-11-29"]);
        assert_eq!(read("this week"), ["this week: 2026-11-23..2026-11-29"]);
        assert_eq!(read("invoices overdue by more than 60 days"), ["by more than 60 days: ..2026-09-29"]);
        assert_eq!(read("invoices issued this year so far"), ["this year so far: 2026-01-01..2026-11-29"]);
        assert_eq!(read("issued on 9 January 2025"), ["9 January 2025: 2025-01-09..2025-01-09"]);
        assert_eq!(read("issued January 9, 2025"), ["January 9, 2025: 2025-01-09..2025-01-09"]);
        assert_eq!(read("the 5 March invoices"), Vec::<String>::new());
        // The same day in German, Spanish and French.
        let day = |q: &str, l: crate::locale::Language| {
            let today = NaiveDate::from_ymd_opt(2026, 11, 29).unwrap();
            read_dates(q, today, l).iter().map(|r| (r.start, r.end)).collect::<Vec<_>>()
        };
        let ninth = NaiveDate::from_ymd_opt(2026, 1, 9);
        assert_eq!(day("Rechnungen vom 9. Januar 2026", crate::locale::Language::De), [(ninth, ninth)]);
        assert_eq!(day("facturas del 9 de enero de 2026", crate::locale::Language::Es), [(ninth, ninth)]);
        assert_eq!(day("factures du 9 janvier 2026", crate::locale::Language::Fr), [(ninth, ninth)]);
        assert_eq!(read("invoices paid more than 30 days late"), Vec::<String>::new());
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
        let y2025 = "Some(2025-01-01)..Some(2025-12-31)";
        assert!(read("Rechnungen aus dem Jahr 2025", Language::De).contains(&format!("Jahr 2025: {y2025}")));
        assert!(read("factures de l'année 2025", Language::Fr).contains(&format!("année 2025: {y2025}")));
        assert!(read("facturas del año 2025", Language::Es).contains(&format!("año 2025: {y2025}")));
        let last_month = "Some(2026-10-01)..Some(2026-10-31)";
        assert!(
            read("Rechnungen letzten Monat", Language::De).contains(&format!("letzten Monat: {last_month}"))
        );
        assert!(read("les factures du mois dernier", Language::Fr)
            .contains(&format!("mois dernier: {last_month}")));
        assert!(read("facturas del mes pasado", Language::Es).contains(&format!("mes pasado: {last_month}")));
        assert!(read("les 30 derniers jours", Language::Fr)
            .contains(&"30 derniers jours: Some(2026-10-30)..Some(2026-11-29)".to_string()));
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
