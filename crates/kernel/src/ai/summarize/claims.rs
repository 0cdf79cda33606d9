//! Claim checking: what a summary's sentence states (numbers, amounts, dates, times, listed
//! values, names) matched against the facts it cites. The kernel attaches the one fact that
//! states an uncited value (never a guess between several), keeps a marker only where the
//! sentence states that fact, and names every problem the one repair must fix.

use super::*;
use crate::ai::dates::MONTHS;

/// A checked answer: sentences with their citations, or the model's "not enough".
pub(super) enum Checked {
    Sentences(Vec<Sentence>),
    Insufficient(String),
}

/// Parse and check an answer: the schema, then every sentence's citations are resolved
/// (`resolve`) and checked against what it states (`sentence_problems`). The problems or the
/// answer, with how the model's markers compared with what the sentences state.
pub(super) fn check(
    schema: &Value,
    facts: &[Fact],
    content: &str,
) -> (std::result::Result<Checked, Vec<String>>, CitationStats) {
    let mut stats = CitationStats::default();
    let parsed = serde_json::from_str::<Value>(content.trim())
        .map_err(|e| vec![format!("the answer is not valid JSON ({e})")])
        .and_then(|v| {
            let validator = jsonschema::validator_for(schema).map_err(|e| vec![e.to_string()])?;
            if let Some(e) = validator.iter_errors(&v).next() {
                return Err(vec![format!("at {}: {e}", e.instance_path().as_str())]);
            }
            serde_json::from_value::<SummaryJson>(v).map_err(|e| vec![e.to_string()])
        });
    let written = match parsed {
        Err(p) => return (Err(p), stats),
        Ok(SummaryJson::Insufficient { insufficient }) => {
            let reason = crate::metadata::value::strip_unsafe_chars(&insufficient).into_owned();
            return (Ok(Checked::Insufficient(reason)), stats);
        }
        Ok(SummaryJson::Sentences { sentences }) => sentences,
    };
    let mut problems = vec![];
    let mut sentences: Vec<Sentence> = vec![];
    for (i, s) in written.iter().map(|s| SentenceOut::parse(s)).enumerate() {
        // A sentence written twice is shown once.
        if sentences.iter().any(|t| t.text == s.text) {
            continue;
        }
        if let Some(p) = EXAMPLE_PHRASES.iter().find(|p| contains_words(&s.text, p)) {
            problems.push(format!(
                "sentence {} (“{}”) copies the worked example (“{p}”), which is not about this record",
                i + 1,
                s.text
            ));
        }
        let unknown: Vec<&String> =
            s.cite.iter().filter(|r| !facts.iter().any(|f| &f.reference == *r)).collect();
        for r in &unknown {
            problems.push(format!("sentence {} cites {r}, which is not a fact id", i + 1));
        }
        let model: Vec<&Fact> =
            s.cite.iter().filter_map(|r| facts.iter().find(|f| &f.reference == r)).collect();
        let (citations, st) = resolve(&s.text, &model, facts);
        stats.add(&CitationStats { markers_unknown: unknown.len() as u32, ..st });
        let cited: Vec<&Fact> = citations.iter().map(|c| &c.fact).collect();
        for p in sentence_problems(&s.text, &cited, facts) {
            problems.push(format!("sentence {} (“{}”): {p}", i + 1, s.text));
        }
        sentences.push(Sentence { text: s.text, citations, clause: false });
    }
    if problems.is_empty() {
        (Ok(Checked::Sentences(sentences)), stats)
    } else {
        (Err(problems), stats)
    }
}

/// A claim a sentence makes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Claim {
    Number(f64, String),
    Date(chrono::NaiveDate, String),
    /// A time of day, in minutes after midnight ("9:34 AM" → 574).
    Time(u32, String),
}

pub(super) enum Token {
    Number(String),
    Word(String),
    Time(u32, String),
}

/// A time of day starting at `chars[i]` ("9:34", "09:34:00", "9:34 PM"): minutes after
/// midnight, what was written and where it ends.
pub(super) fn time_at(chars: &[char], i: usize) -> Option<(u32, String, usize)> {
    let digit = |j: usize| chars.get(j).filter(|c| c.is_ascii_digit()).and_then(|c| c.to_digit(10));
    let hour_end = (i..chars.len()).find(|&j| !chars[j].is_ascii_digit()).unwrap_or(chars.len());
    if hour_end - i > 2 || chars.get(hour_end) != Some(&':') {
        return None;
    }
    let (m1, m2) = (digit(hour_end + 1)?, digit(hour_end + 2)?);
    let mut end = hour_end + 3;
    if digit(end).is_some() {
        return None;
    }
    if chars.get(end) == Some(&':') && digit(end + 1).is_some() && digit(end + 2).is_some() {
        end += 3;
    }
    let mut hour: u32 = chars[i..hour_end].iter().collect::<String>().parse().ok()?;
    let after: String = chars[end..chars.len().min(end + 6)].iter().collect::<String>().to_lowercase();
    let gap = after.chars().take_while(|c| *c == ' ').count();
    for (mark, pm) in [("a.m.", false), ("p.m.", true), ("am", false), ("pm", true)] {
        let rest = &after[gap..];
        if rest.starts_with(mark) && !rest[mark.len()..].starts_with(|c: char| c.is_alphanumeric()) {
            if pm && hour < 12 {
                hour += 12;
            } else if !pm && hour == 12 {
                hour = 0;
            }
            end += gap + mark.chars().count();
            break;
        }
    }
    (hour < 24 && m1 < 6).then(|| (hour * 60 + m1 * 10 + m2, chars[i..end].iter().collect(), end))
}

/// Numbers, dates and times written in a sentence (ISO dates, "July 3, 2026", "3 July 2026",
/// "9:34 AM"), each with the character index where it ends.
pub(super) fn numbers_and_dates(text: &str) -> Vec<(Claim, usize)> {
    let mut out = vec![];
    let chars: Vec<char> = text.chars().collect();
    let mut tokens: Vec<(Token, usize)> = vec![];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            if let Some((minutes, written, end)) = time_at(&chars, i) {
                tokens.push((Token::Time(minutes, written), end));
                i = end;
                continue;
            }
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || ((chars[i] == ',' || chars[i] == '.' || chars[i] == '-')
                        && i + 1 < chars.len()
                        && chars[i + 1].is_ascii_digit()))
            {
                i += 1;
            }
            // An ISO datetime (2026-06-17T09:34:00Z): a date, then a time of day.
            if chars.get(i) == Some(&'T') && i - start == 10 {
                if let Some((minutes, written, end)) = time_at(&chars, i + 1) {
                    tokens.push((Token::Number(chars[start..i].iter().collect()), i));
                    let end = if chars.get(end) == Some(&'Z') { end + 1 } else { end };
                    tokens.push((Token::Time(minutes, written), end));
                    i = end;
                    continue;
                }
            }
            if i < chars.len() && chars[i].is_alphabetic() && chars[i] != 'k' && chars[i] != 'm' {
                // part of an identifier such as 2nd or INV-2026-50016 handled by words
                while i < chars.len() && chars[i].is_alphanumeric() {
                    i += 1;
                }
                continue;
            }
            tokens.push((Token::Number(chars[start..i].iter().collect()), i));
        } else if c.is_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_alphanumeric() {
                i += 1;
            }
            let w: String = chars[start..i].iter().collect();
            // Digits glued to letters (an id like INV-2026-50016) are not amounts.
            if i < chars.len() && chars[i] == '-' {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '-') {
                    i += 1;
                }
                continue;
            }
            tokens.push((Token::Word(w), i));
        } else {
            i += 1;
        }
    }
    let num = |j: usize| match tokens.get(j) {
        Some((Token::Number(s), end)) => s.parse::<i32>().ok().map(|n| (n, *end)),
        _ => None,
    };
    let mut skip = std::collections::HashSet::new();
    for (k, (t, _)) in tokens.iter().enumerate() {
        let Token::Word(t) = t else { continue };
        let Some(m) = MONTHS.iter().position(|x| *x == t.to_lowercase()) else { continue };
        let m = m as u32 + 1;
        // July 3, 2026
        if let (Some((d, _)), Some((y, end))) = (num(k + 1), num(k + 2)) {
            if let Some(date) = chrono::NaiveDate::from_ymd_opt(y, m, d as u32) {
                out.push((Claim::Date(date, format!("{t} {d}, {y}")), end));
                skip.extend([k + 1, k + 2]);
                continue;
            }
        }
        // 3 July 2026
        if let (Some((d, _)), Some((y, end))) = (k.checked_sub(1).and_then(num), num(k + 1)) {
            if let Some(date) = chrono::NaiveDate::from_ymd_opt(y, m, d as u32) {
                out.push((Claim::Date(date, format!("{d} {t} {y}")), end));
                skip.extend([k - 1, k + 1]);
            }
        }
    }
    for (k, (t, end)) in tokens.iter().enumerate() {
        match t {
            Token::Time(minutes, written) => out.push((Claim::Time(*minutes, written.clone()), *end)),
            Token::Number(t) if !skip.contains(&k) => {
                if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
                    out.push((Claim::Date(d, t.clone()), *end));
                } else if let Ok(x) = t.replace(',', "").parse::<f64>() {
                    out.push((Claim::Number(x, t.clone()), *end));
                }
            }
            _ => {}
        }
    }
    out.sort_by_key(|(_, end)| *end);
    out
}

/// Where `needle` occurs in `haystack` as whole words (case-insensitive): the character index
/// just after the first occurrence.
pub(super) fn find_words(haystack: &str, needle: &str) -> Option<usize> {
    let h = haystack.to_lowercase();
    let n = needle.trim().to_lowercase();
    if n.is_empty() {
        return None;
    }
    h.match_indices(&n)
        .find(|(i, _)| {
            let before = h[..*i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let after = h[i + n.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            before && after
        })
        .map(|(i, _)| h[..i + n.len()].chars().count())
}

pub(super) fn contains_words(haystack: &str, needle: &str) -> bool {
    find_words(haystack, needle).is_some()
}

/// Which facts state a value, for the repair: " (F3 states it: cite it, or leave it out)", or
/// " (no fact states it: leave it out)".
pub(super) fn hint(facts: &[Fact], states: impl Fn(&Fact) -> bool) -> String {
    let ids: Vec<&str> = facts.iter().filter(|f| states(f)).map(|f| f.reference.as_str()).take(3).collect();
    match ids.len() {
        0 => " (no fact states it: leave it out)".into(),
        1 => format!(" ({} states it: cite it, or leave it out)", ids[0]),
        _ => format!(" ({} state it: cite the one you mean, or leave it out)", ids.join(", ")),
    }
}

/// `text` with every whole-word occurrence of `needle` (case-insensitive) replaced by spaces.
pub(super) fn mask_words(text: &str, needle: &str) -> String {
    let lower = text.to_lowercase();
    let n = needle.to_lowercase();
    if lower.len() != text.len() || n.is_empty() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for (i, _) in lower.match_indices(&n) {
        let before = lower[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = lower[i + n.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        if before && after && out.is_char_boundary(i) && out.is_char_boundary(i + n.len()) {
            out.replace_range(i..i + n.len(), &" ".repeat(n.len()));
        }
    }
    out
}

/// The numbers, dates and times a sentence states. Digits inside a name or text value it quotes
/// ("Upgrade 14", "PO-58731", a phone number) belong to that value, not to a number claim: such
/// values are masked first.
pub(super) fn claims_in(text: &str, facts: &[Fact]) -> Vec<(Claim, usize)> {
    let mut quoted: Vec<String> = facts
        .iter()
        .flat_map(|f| {
            let text_like = matches!(f.field_type.as_str(), "text" | "lookup" | "phone" | "email" | "url");
            [f.record_name.as_str(), if text_like { f.display.as_str() } else { "" }]
        })
        .filter(|w| w.chars().count() >= 3 && w.chars().any(|c| c.is_ascii_digit()))
        .map(String::from)
        .collect();
    // A name's tail is quoted too: "Renewal 33" of "Initech GmbH - Renewal 33".
    let tails: Vec<String> = quoted
        .iter()
        .filter_map(|w| match w.split_whitespace().collect::<Vec<_>>()[..] {
            [_, .., word, number]
                if word.chars().all(char::is_alphabetic) && number.chars().all(|c| c.is_ascii_digit()) =>
            {
                Some(format!("{word} {number}"))
            }
            _ => None,
        })
        .collect();
    quoted.extend(tails);
    quoted.sort_by_key(|w| std::cmp::Reverse(w.len()));
    let mut masked = text.to_string();
    for w in quoted {
        masked = mask_words(&masked, &w);
    }
    numbers_and_dates(&masked)
}

pub(super) fn fact_number(f: &Fact) -> Option<f64> {
    matches!(f.field_type.as_str(), "number" | "currency").then(|| f.value.as_f64()).flatten()
}

pub(super) fn fact_date(f: &Fact) -> Option<chrono::NaiveDate> {
    let s = f.value.as_str()?;
    match f.field_type.as_str() {
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(),
        "datetime" => chrono::NaiveDate::parse_from_str(s.get(..10)?, "%Y-%m-%d").ok(),
        _ => None,
    }
}

/// A datetime fact's time of day (as stored, UTC), in minutes after midnight.
pub(super) fn fact_minutes(f: &Fact) -> Option<u32> {
    let s = f.value.as_str().filter(|_| f.field_type == "datetime")?;
    let (h, m) = (s.get(11..13)?.parse::<u32>().ok()?, s.get(14..16)?.parse::<u32>().ok()?);
    Some(h * 60 + m)
}

/// Whether a fact's value is the number, date or time a claim writes.
pub(super) fn claim_states(c: &Claim, f: &Fact) -> bool {
    match c {
        Claim::Number(x, _) => fact_number(f).is_some_and(|y| (x - y).abs() < 0.005),
        Claim::Date(d, _) => fact_date(f) == Some(*d),
        Claim::Time(m, _) => fact_minutes(f) == Some(*m),
    }
}

/// Whether the sentence states the fact's value.
pub(super) fn states(text: &str, claims: &[(Claim, usize)], f: &Fact) -> bool {
    if fact_number(f).is_some() || fact_date(f).is_some() {
        return claims.iter().any(|(c, _)| claim_states(c, f));
    }
    match f.field_type.as_str() {
        "boolean" => true,
        "long_text" => f
            .display
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 5)
            .any(|w| contains_words(text, w)),
        _ => contains_words(text, &f.display) || contains_words(text, &display(&f.value)),
    }
}

/// How the first answer's citations compared with what its sentences state (the eval's
/// coverage and precision).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CitationStats {
    /// Values written that need a citation: numbers, dates, times, listed values, names.
    pub values: u32,
    /// Of those, covered by a marker the model wrote.
    pub values_cited_by_model: u32,
    /// Of those, covered by the one fact (or the one in a record already cited) that states it.
    pub values_cited_by_kernel: u32,
    /// Markers the model wrote (ids that are facts).
    pub markers: u32,
    /// Of those, naming a fact the sentence states.
    pub markers_stated: u32,
    /// Markers naming an id that is not a fact.
    pub markers_unknown: u32,
    /// Markers dropped as off by an id or two from a fact the sentence states.
    pub markers_dropped: u32,
}

impl CitationStats {
    pub fn add(&mut self, o: &CitationStats) {
        self.values += o.values;
        self.values_cited_by_model += o.values_cited_by_model;
        self.values_cited_by_kernel += o.values_cited_by_kernel;
        self.markers += o.markers;
        self.markers_stated += o.markers_stated;
        self.markers_unknown += o.markers_unknown;
        self.markers_dropped += o.markers_dropped;
    }
}

/// A value a sentence writes and the facts that state it.
pub(super) struct Written<'f> {
    end: usize,
    facts: Vec<&'f Fact>,
    /// A number, date, time, listed value or record name: must be cited. (A plain text value,
    /// such as a city, gets a citation when one fact states it, but needs none.)
    required: bool,
}

/// The values a sentence writes (the subject record's own name excepted), longest first so a
/// name inside a longer name is not counted twice.
pub(super) fn values_in<'f>(text: &str, claims: &[(Claim, usize)], facts: &'f [Fact]) -> Vec<Written<'f>> {
    let mut out: Vec<Written<'f>> = claims
        .iter()
        .map(|(c, end)| Written {
            end: *end,
            facts: facts.iter().filter(|f| claim_states(c, f)).collect(),
            required: true,
        })
        .collect();
    let subject = facts.first().map(|f| f.record_name.to_lowercase()).unwrap_or_default();
    let names: std::collections::HashSet<String> =
        facts.iter().map(|f| f.record_name.to_lowercase()).collect();
    let mut words: Vec<String> = facts
        .iter()
        .filter(|f| {
            matches!(f.field_type.as_str(), "picklist" | "lookup" | "text" | "email" | "url" | "phone")
        })
        .map(|f| f.display.to_lowercase())
        .chain(names.iter().cloned())
        .filter(|w| w.chars().count() >= 3)
        .collect();
    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
    words.dedup();
    let mut rest = text.to_string();
    for w in words {
        let Some(end) = find_words(&rest, &w) else { continue };
        rest = mask_words(&rest, &w);
        if w == subject {
            continue;
        }
        let stating: Vec<&Fact> = facts
            .iter()
            .filter(|f| {
                f.display.to_lowercase() == w
                    && matches!(
                        f.field_type.as_str(),
                        "picklist" | "lookup" | "text" | "email" | "url" | "phone"
                    )
            })
            .collect();
        let required = names.contains(&w)
            || stating.iter().any(|f| matches!(f.field_type.as_str(), "picklist" | "lookup"));
        if !stating.is_empty() {
            out.push(Written { end, facts: stating, required });
        }
    }
    out
}

/// One sentence's citations. A marker the model wrote is kept where the sentence states its
/// fact. A value the sentence writes that no marker covers gets the one fact that states it,
/// or, when several do, the one in a record the sentence already cites; anything more is left
/// uncited for the checker to refuse (the kernel never guesses between facts). A marker naming
/// a fact the sentence does not state is dropped only when it is a missed pointer: within two
/// ids of a cited fact of the same record (a small model's ids are often off by one), or the
/// same field of another record than the one the sentence states (another invoice's number). Any
/// other stays, and the checker refuses it. Every value the sentence writes is still checked
/// against the citations that remain.
pub(super) fn resolve(text: &str, model: &[&Fact], facts: &[Fact]) -> (Vec<Citation>, CitationStats) {
    let claims = claims_in(text, facts);
    let values = values_in(text, &claims, facts);
    let mut stats = CitationStats { markers: model.len() as u32, ..Default::default() };
    let mut chosen: Vec<(&Fact, usize, bool)> = vec![];
    let mut pending = vec![];
    for v in &values {
        stats.values += u32::from(v.required);
        let by_model: Vec<&Fact> =
            v.facts.iter().copied().filter(|f| model.iter().any(|m| m.reference == f.reference)).collect();
        if !by_model.is_empty() {
            stats.values_cited_by_model += u32::from(v.required);
            chosen.extend(by_model.into_iter().map(|f| (f, v.end, true)));
        } else if v.facts.len() == 1 {
            stats.values_cited_by_kernel += u32::from(v.required);
            chosen.push((v.facts[0], v.end, false));
        } else {
            pending.push(v);
        }
    }
    for v in pending {
        let same_record: Vec<&Fact> = v
            .facts
            .iter()
            .copied()
            .filter(|f| chosen.iter().any(|(c, _, _)| c.object == f.object && c.id == f.id))
            .collect();
        if let [only] = same_record[..] {
            stats.values_cited_by_kernel += u32::from(v.required);
            chosen.push((only, v.end, false));
        }
    }
    let number = |f: &Fact| f.reference[1..].parse::<i64>().unwrap_or(0);
    let len = text.chars().count();
    let anchored: Vec<&Fact> = chosen.iter().map(|(f, _, _)| *f).collect();
    for m in model {
        if states(text, &claims, m) {
            stats.markers_stated += 1;
            if !chosen.iter().any(|(c, _, _)| c.reference == m.reference) {
                let at = claims
                    .iter()
                    .find(|(c, _)| claim_states(c, m))
                    .map(|(_, end)| *end)
                    .or_else(|| find_words(text, &m.display))
                    .unwrap_or(len);
                chosen.push((m, at, true));
            }
            continue;
        }
        // The model's pointer missed: next to a stated fact of the same record, or the same
        // field of another record than the one whose value the sentence states.
        let near = anchored.iter().any(|c| {
            c.object == m.object
                && ((c.id == m.id && (number(c) - number(m)).abs() <= 2)
                    || (c.id != m.id && c.field == m.field))
        });
        if near {
            stats.markers_dropped += 1;
        } else {
            chosen.push((m, len, true));
        }
    }
    let mut seen = std::collections::HashSet::new();
    chosen.retain(|(f, _, _)| seen.insert(f.reference.clone()));
    chosen.sort_by_key(|(f, end, _)| (*end, number(f)));
    let utf16 = |end: usize| text.chars().take(end).map(char::len_utf16).sum::<usize>() as u32;
    let citations = chosen
        .into_iter()
        .map(|(f, end, by_model)| Citation { fact: f.clone(), at: utf16(end), by_model })
        .collect();
    (citations, stats)
}

/// What is wrong with one sentence given the facts it cites: a number, date, time, listed value
/// or record name it writes that no cited fact states, and a cited fact it does not state.
pub(super) fn sentence_problems(text: &str, cited: &[&Fact], facts: &[Fact]) -> Vec<String> {
    let mut problems = vec![];
    let claims = claims_in(text, facts);
    for (c, _) in &claims {
        if !cited.iter().any(|f| claim_states(c, f)) {
            let (what, written) = match c {
                Claim::Number(_, w) => ("the number", w),
                Claim::Date(_, w) => ("the date", w),
                Claim::Time(_, w) => ("the time", w),
            };
            let h = hint(facts, |f| claim_states(c, f));
            problems.push(format!("{what} {written} is not the value of a fact it cites{h}"));
        }
    }
    // Listed values (picklists) and record names the sentence writes must be cited.
    let mut words: Vec<(&str, &Fact)> = vec![];
    for f in facts {
        if f.field_type == "picklist" {
            words.push((f.display.as_str(), f));
        }
        if !f.record_name.is_empty() {
            words.push((f.record_name.as_str(), f));
        }
        if f.field_type == "lookup" {
            words.push((f.display.as_str(), f));
        }
    }
    let mut said = std::collections::HashSet::new();
    for (w, f) in words {
        if w.chars().count() < 3 || !contains_words(text, w) || !said.insert(w.to_lowercase()) {
            continue;
        }
        // The summary's subject may be named in any sentence that cites something.
        let subject =
            facts.first().is_some_and(|s| s.record_name.eq_ignore_ascii_case(w)) && !cited.is_empty();
        let supported = subject
            || cited.iter().any(|c| {
                c.display.eq_ignore_ascii_case(w)
                    || c.record_name.eq_ignore_ascii_case(w)
                    || (c.object == f.object && c.id == f.id && f.record_name.eq_ignore_ascii_case(w))
                    // A cited text that itself states the word.
                    || (matches!(c.field_type.as_str(), "text" | "long_text") && contains_words(&c.display, w))
            });
        if !supported {
            problems.push(format!(
                "“{w}” is written but no cited fact states it{}",
                hint(facts, |x| {
                    x.display.eq_ignore_ascii_case(w) || x.record_name.eq_ignore_ascii_case(w)
                })
            ));
        }
    }
    let unstated: Vec<&&Fact> = cited.iter().filter(|f| !states(text, &claims, f)).collect();
    match unstated[..] {
        [] => {}
        [f] => problems.push(format!(
            "it cites {} ({} of {} = {}) but does not state that value: write the value itself, or leave it out",
            f.reference, f.label, f.record_name, f.display
        )),
        _ => problems.push(format!(
            "it cites {} but states none of their values (cite only the facts whose values it writes)",
            unstated.iter().map(|f| f.reference.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_example_is_refused_and_a_repeated_sentence_shown_once() {
        let schema = answer_schema(false, None, 6);
        let facts = vec![fact("F1", "a1", "close_date", "date", json!("2026-01-16"), "Acme")];
        let copied = r#"{"sentences": ["It departs next on 2026-01-16 [F1]."]}"#;
        let (out, _) = check(&schema, &facts, copied);
        assert!(out.err().unwrap()[0].contains("copies the worked example"));
        let twice =
            r#"{"sentences": ["Acme closes on 2026-01-16 [F1].", "Acme closes on 2026-01-16 [F1]."]}"#;
        let Ok(Checked::Sentences(s)) = check(&schema, &facts, twice).0 else { panic!("refused") };
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn control_and_bidi_characters_are_stripped_before_a_sentence_is_checked_or_shown() {
        let schema = answer_schema(false, None, 6);
        let facts = vec![fact("F1", "a1", "close_date", "date", json!("2026-01-16"), "Acme")];
        let written = "Acme\u{202E} closes on \u{2066}2026-01-16\u{2069} [F1]\u{1b}.\u{2028}\u{85}";
        let content = json!({"sentences": [written]}).to_string();
        let Ok(Checked::Sentences(s)) = check(&schema, &facts, &content).0 else { panic!("refused") };
        assert_eq!(s[0].text, "Acme closes on 2026-01-16.");
        assert!(s[0]
            .text
            .chars()
            .all(|c| crate::metadata::value::unsafe_char(&c.to_string(), false).is_none()));
        assert_eq!(s[0].citations.len(), 1);
        let content = json!({"insufficient": "no\u{202E} data\u{7}"}).to_string();
        let Ok(Checked::Insufficient(why)) = check(&schema, &facts, &content).0 else {
            panic!("not refused")
        };
        assert_eq!(why, "no data");
    }

    #[test]
    fn markers_become_citations() {
        let s = SentenceOut::parse("Acme [F1] earns 5120 [F3, F4] a year [see note].");
        assert_eq!(s.text, "Acme earns 5120 a year [see note].");
        assert_eq!(s.cite, ["F1", "F3", "F4"]);
        let s = SentenceOut::parse("Novak [31] is [a] CEO [F2,5].");
        assert_eq!(
            (s.text.as_str(), s.cite),
            ("Novak is [a] CEO.", vec!["F31".to_string(), "F2".into(), "F5".into()])
        );
    }

    #[test]
    fn numbers_dates_and_ids_in_a_sentence() {
        let claims = |t: &str| numbers_and_dates(t).into_iter().map(|(c, _)| c).collect::<Vec<_>>();
        let date = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(
            claims(
                "Invoice INV-2026-50016 of 18,000.50 EUR was issued on July 3, 2026 and is due 2026-08-01."
            ),
            vec![
                Claim::Number(18000.5, "18,000.50".into()),
                Claim::Date(date(2026, 7, 3), "July 3, 2026".into()),
                Claim::Date(date(2026, 8, 1), "2026-08-01".into()),
            ]
        );
        assert_eq!(claims("On 3 July 2026 they had 12 staff.").len(), 2);
        // Times of day are one claim, not two numbers.
        assert_eq!(
            claims("Written on June 17, 2026 at 9:34 PM, and again at 09:05."),
            vec![
                Claim::Date(date(2026, 6, 17), "June 17, 2026".into()),
                Claim::Time(21 * 60 + 34, "9:34 PM".into()),
                Claim::Time(9 * 60 + 5, "09:05".into()),
            ]
        );
        // An ISO datetime is a date and a time.
        assert_eq!(
            claims("Written at 2026-06-17T09:34:00Z."),
            vec![
                Claim::Date(date(2026, 6, 17), "2026-06-17".into()),
                Claim::Time(9 * 60 + 34, "09:34:00".into())
            ]
        );
        // Where each claim ends (characters).
        assert_eq!(numbers_and_dates("€ 5 and 12").iter().map(|(_, e)| *e).collect::<Vec<_>>(), [3, 10]);
    }

    fn fact(reference: &str, id: &str, field: &str, field_type: &str, value: Value, name: &str) -> Fact {
        Fact {
            reference: reference.into(),
            object: "account".into(),
            id: id.into(),
            field: field.into(),
            label: field.into(),
            field_type: field_type.into(),
            display: display(&value),
            value,
            record_name: name.into(),
            set: None,
            currency: None,
        }
    }

    #[test]
    fn the_kernel_attaches_only_the_one_fact_that_states_a_value() {
        let facts = vec![
            fact("F1", "a1", "name", "text", json!("Acme"), "Acme"),
            fact("F2", "a1", "employees", "number", json!(120), "Acme"),
            fact("F3", "a1", "city", "text", json!("New York"), "Acme"),
            fact("F4", "a1", "country", "text", json!("United States"), "Acme"),
            fact("F5", "o1", "name", "text", json!("Acme Renewal"), "Acme Renewal"),
            fact("F6", "o1", "stage", "picklist", json!("Prospecting"), "Acme Renewal"),
            fact("F7", "o2", "name", "text", json!("Acme Upsell"), "Acme Upsell"),
            fact("F8", "o2", "stage", "picklist", json!("Prospecting"), "Acme Upsell"),
        ];
        let by =
            |refs: &[&str]| facts.iter().filter(|f| refs.contains(&f.reference.as_str())).collect::<Vec<_>>();
        let refs =
            |c: &[Citation]| c.iter().map(|c| (c.fact.reference.clone(), c.by_model)).collect::<Vec<_>>();
        // Uncited but stated by one fact each: attached, where the value ends.
        let (c, st) = resolve("Acme has 120 staff in New York.", &[], &facts);
        assert_eq!(refs(&c), [("F2".into(), false), ("F3".into(), false)]);
        assert_eq!(c[0].at, 12);
        assert_eq!(
            (st.values, st.values_cited_by_kernel),
            (1, 1),
            "the city is not a value that must be cited"
        );
        // "Prospecting" is stated by two facts: the one in a record the sentence names.
        let (c, _) = resolve("Acme Upsell is Prospecting.", &[], &facts);
        assert_eq!(refs(&c), [("F7".into(), false), ("F8".into(), false)]);
        // With nothing to tell them apart it stays uncited, and the checker refuses it.
        let (c, _) = resolve("Both are Prospecting.", &[], &facts);
        assert!(c.is_empty());
        let p = sentence_problems("Both are Prospecting.", &[], &facts);
        assert!(p[0].contains("F6, F8 state it"), "{p:?}");
        // A marker one id off from the stated value is dropped; one far off stays (refused).
        let (c, st) = resolve("Acme is in New York.", &by(&["F4"]), &facts);
        assert_eq!((refs(&c), st.markers_dropped), (vec![("F3".into(), false)], 1));
        // The same field of another record than the one stated: dropped too.
        let (c, st) = resolve("Acme Upsell is Prospecting.", &by(&["F5"]), &facts);
        assert_eq!((refs(&c).len(), st.markers_dropped), (2, 1));
        let (c, _) = resolve("Acme is doing well.", &by(&["F8"]), &facts);
        assert_eq!(refs(&c), [("F8".into(), true)]);
        assert!(!sentence_problems("Acme is doing well.", &[&c[0].fact], &facts).is_empty());
        // The digits of a name's tail ("Renewal 7" of "Acme Renewal 7") are not a number claim.
        let named = vec![fact("F1", "o9", "name", "text", json!("Acme - Renewal 7"), "Acme - Renewal 7")];
        assert!(claims_in("The renewal 7 deal.", &named).is_empty());
        assert_eq!(claims_in("The renewal 8 deal.", &named).len(), 1);
        // A number no fact states gets no citation.
        let (c, _) = resolve("Acme has 121 staff.", &[], &facts);
        assert!(c.is_empty());
    }
}
