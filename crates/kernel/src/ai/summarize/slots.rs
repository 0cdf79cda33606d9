//! Slots, not values (prompt version 3): the model writes sentences whose values are slots
//! naming facts (`{F3}`), never a number, date, amount, listed value or record name of its own.
//! The kernel renders each slot from its fact — formatted by type, amounts with their currency —
//! and the citation is the slot, so a sentence states exactly what it cites by construction.
//! The check refuses a literal value outside a slot, a slot naming no fact, a sentence with no
//! slot at all, and a slot the words around it do not introduce as what it is
//! ([`unintroduced`]); "the facts are not enough" stays an answer. A refused sentence's values
//! are written by the kernel beside their fields' labels ([`clause`]): the model points, the
//! kernel writes what it cannot vouch for the model's words on.

use super::claims::{claims_in, find_words, mask_words};
use super::*;

/// How a sentence writes its values: in the reader's locale, an amount in its record's
/// currency or else the workspace's.
#[derive(Debug, Clone)]
pub(super) struct Writing {
    pub currency: String,
    pub locale: crate::locale::Locale,
    /// The words of the listed values the record's own picklists offer but it does not hold
    /// ("closed" of an opportunity in Proposal): a sentence that says one says a state the
    /// record is not in (`Session::unheld_words`).
    pub unheld: Vec<String>,
}

/// Words that deny what follows them, in the languages summaries are written in.
const NEGATIONS: [&str; 10] =
    ["not", "never", "no", "yet", "nicht", "kein", "keine", "pas", "jamais", "nunca"];

/// A fact's value as a sentence shows it.
pub(super) fn rendered(f: &Fact, w: &Writing) -> String {
    let l = &w.locale;
    match f.field_type.as_str() {
        _ if f.set.is_some() && !matches!(f.field_type.as_str(), "date" | "currency" | "number") => {
            f.display.clone()
        }
        "currency" => f
            .value
            .as_f64()
            .map(|x| l.money(x, f.currency.as_deref().unwrap_or(&w.currency)))
            .unwrap_or_else(|| f.display.clone()),
        "number" => {
            let n = match f.value.as_f64() {
                Some(x) if x.fract() == 0.0 && x.abs() >= 10_000.0 => l.number(x, 0),
                Some(x) if x.fract() != 0.0 => l.decimal(x),
                _ => f.display.clone(),
            };
            if percent(f) {
                l.percent(&n)
            } else {
                n
            }
        }
        "date" => f
            .value
            .as_str()
            .and_then(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
            .map(|d| l.long_date(d))
            .unwrap_or_else(|| f.display.clone()),
        _ => f.display.clone(),
    }
}

/// Words of the check's own problems that a small model, repairing, copies into its sentence
/// ("{amount} is one of its values, not what it is."): a sentence holding one is refused.
pub(super) const REPAIR_PHRASES: [&str; 8] = [
    "one of its values",
    "not what it is",
    "which is no date",
    "where money goes",
    "which is another fact",
    "marks doubled",
    "write the count's slot",
    "a person would sign",
];

/// A number its field's label says is a percentage ("Probability (%)", "Margin percent"): its
/// slot writes the sign, so "{probability} chance" says "25% chance", not "25 chance".
fn percent(f: &Fact) -> bool {
    let label = f.label.to_lowercase();
    f.field_type == "number" && f.set.is_none() && (label.contains('%') || label.contains("percent"))
}

/// The slots of a template, in order: (byte range, slot name) — `{open_deals_count}`.
pub(super) fn slots(template: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = vec![];
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if bytes.get(j) == Some(&b'}') {
                out.push((i..j + 1, template[i + 1..j].to_string()));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// A draft as it streams, with every complete slot rendered and an unfinished one (or a `{`
/// that may start one) held back, so what is shown only ever grows. Values are written
/// JSON-escaped: the draft is the model's JSON.
pub(super) fn draft(raw: &str, facts: &[Fact], w: &Writing) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (range, r) in slots(raw) {
        out.push_str(&raw[last..range.start]);
        match facts.iter().find(|f| f.reference == r) {
            Some(f) => {
                let v = serde_json::to_string(&rendered(f, w)).unwrap_or_default();
                out.push_str(&v[1..v.len() - 1]);
            }
            None => out.push_str(&raw[range.clone()]),
        }
        last = range.end;
    }
    let tail = &raw[last..];
    let held =
        tail.rfind('{').filter(|at| tail[at + 1..].chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    out.push_str(&tail[..held.unwrap_or(tail.len())]);
    out
}

/// Check and render one template: its sentence with citations, or its problems.
pub(super) fn render(
    template: &str,
    facts: &[Fact],
    w: &Writing,
) -> std::result::Result<Sentence, Vec<String>> {
    let template = crate::metadata::value::strip_unsafe_chars(template);
    let template = written_values_as_slots(&template, facts);
    let template = singular_after_one(&template, facts, w.locale.language());
    let template = is_not_to(&template, facts);
    let found = slots(&template);
    let mut problems = vec![];
    // One pass: the sentence with its slots rendered (each a citation), what it writes outside
    // them (a value restated right after its own slot is neither), and the sentence with the
    // rendered values blanked (the same characters, so a position in one is one in the other).
    let mut text = String::new();
    let mut outside = String::new();
    let mut blanked = String::new();
    let mut citations = vec![];
    let mut last = 0;
    // The currency codes a sentence could name: the workspace's and its amounts'.
    let codes: Vec<String> = facts
        .iter()
        .filter(|f| f.field_type == "currency")
        .filter_map(|f| rendered(f, w).rsplit(' ').next().map(String::from))
        .chain([w.currency.clone()])
        .filter(|c| crate::metadata::catalog::is_currency_code(c))
        .collect();
    for (range, r) in &found {
        let between = &template[last.min(range.start)..range.start];
        text.push_str(between);
        outside.push_str(between);
        outside.push_str(" … ");
        blanked.push_str(between);
        last = range.end;
        match facts.iter().find(|f| &f.reference == r) {
            Some(f) => {
                let value = rendered(f, w);
                text.push_str(&value);
                blanked.extend(std::iter::repeat_n(' ', value.chars().count()));
                citations.push(Citation {
                    fact: f.clone(),
                    at: text.encode_utf16().count() as u32,
                    by_model: true,
                });
                // Said again and again ("{total} USD in USD"): all of it dropped.
                loop {
                    let again = restated(&template[last..], f, &value, w.locale.language());
                    if again == 0 {
                        break;
                    }
                    last += again;
                }
                if let Some(code) = next_word(&template[last..]).filter(|w| codes.iter().any(|c| c == w)) {
                    problems.push(if f.field_type == "currency" {
                        format!("it writes {code} after {{{r}}}, an amount its slot writes with its own currency: leave it out")
                    } else {
                        format!("it writes {code} after {{{r}}}, which is no amount: leave it out")
                    });
                }
            }
            None => problems.push(format!("{{{r}}} is not a slot of the facts")),
        }
    }
    let rest = &template[last.min(template.len())..];
    text.push_str(rest);
    outside.push_str(rest);
    blanked.push_str(rest);
    // What the sentence writes outside its slots must hold no value of its own.
    for (claim, _) in claims_in(&outside, facts) {
        let which = facts.iter().find(|f| claims::claim_states(&claim, f));
        let written = match claim {
            claims::Claim::Number(_, w) | claims::Claim::Date(_, w) | claims::Claim::Time(_, w) => w,
        };
        problems.push(match which {
            Some(f) => format!("it writes “{written}” itself: write {{{}}} instead", f.reference),
            None => format!("it writes “{written}”, which no fact holds: leave it out"),
        });
    }
    problems.extend(strays(&outside, facts, w.locale.language()));
    problems.extend(unknown_words(&outside, facts, w.locale.language()));
    problems.extend(junk(&template, &found));
    // An amount's slot writes its currency: a code elsewhere in the prose ("total value EUR
    // {amount}", "4 invoices in EUR") says a currency of nothing.
    for word in outside.split(|c: char| !c.is_alphanumeric()) {
        let a_code = crate::metadata::catalog::is_currency_code(word)
            && (codes.iter().any(|c| c == word) || keshvar::CurrencyCode::try_from(word).is_ok());
        if a_code {
            problems
                .push(format!("it writes {word} itself: an amount's slot writes its currency; leave it out"));
        }
    }
    // A name or listed value written as a word ("an overdue invoice") states the one fact that
    // holds it: the kernel cites that fact where the word ends. Held by several facts, the
    // word is the model's to point with a slot.
    let named = |f: &&Fact| names_or_lists(f) && f.display.chars().count() >= 3;
    for f in facts.iter().filter(named) {
        let Some(end) = find_words(&blanked, &f.display) else { continue };
        let holders =
            facts.iter().filter(named).filter(|g| g.display.to_lowercase() == f.display.to_lowercase());
        if holders.count() == 1 {
            let at = text.chars().take(end).map(char::len_utf16).sum::<usize>() as u32;
            citations.push(Citation { fact: f.clone(), at, by_model: false });
        } else {
            problems.push(format!("it writes “{}” itself: write {{{}}} instead", f.display, f.reference));
        }
    }
    // A name or short text written out in part ("is an upgrade of … Upgrade x" of the name, "is
    // scheduled for a demo" of the next step "Schedule demo"): a word of it that no other value
    // holds is its own, which its slot writes whole; in other words the kernel cannot vouch
    // for it.
    // The words written outside the slots, in order (this check and the unheld-value one read them).
    let prose: Vec<String> = lowercase_words(&outside).collect();
    let words_of_display = |f: &Fact| -> Vec<String> { lowercase_words(&f.display).collect() };
    for text in facts.iter().filter(|f| f.field_type == "text" && f.set.is_none()) {
        let is_name = text.display == text.record_name;
        // (A longer text, a description, shares its words with what is said of it.)
        if !is_name && text.display.split_whitespace().count() > 4 {
            continue;
        }
        // The record's name is held by no other value, whatever else names it (a lookup).
        let others: Vec<String> = facts
            .iter()
            .filter(|g| g.reference != text.reference && (!is_name || g.display != g.record_name))
            .flat_map(words_of_display)
            .collect();
        let own: Vec<String> = words_of_display(text)
            .into_iter()
            .filter(|w| w.chars().count() >= 4 && w.chars().all(char::is_alphabetic))
            .filter(|w| !others.contains(w))
            .collect();
        if let Some(word) = own.iter().find(|w| prose.contains(w)) {
            let whose = if is_name { "record's name".to_string() } else { clause_label(text).to_lowercase() };
            problems.push(format!(
                "it writes “{word}”, a word of the {whose}: write {{{}}} for it, whole",
                text.reference
            ));
        }
    }
    // A state the record is in, said as ahead of it ("is due to close" of a Closed Lost
    // opportunity, "will be paid" of a paid invoice): a listed value it holds that says what
    // happened ("closed", "paid"), after "to" or "will" in its present form or with "be".
    let held: Vec<String> = facts
        .iter()
        .filter(|f| f.field_type == "picklist" && f.set.is_none())
        .flat_map(words_of_display)
        .filter(|w| w.chars().count() >= 4)
        .collect();
    for done in &held {
        let present = done.strip_suffix('d').filter(|_| done.ends_with("ed"));
        // ("It was due to close on …" says it in the past.)
        let ahead = (0..prose.len()).any(|i| {
            let word = |k: usize| prose.get(i + k).map(String::as_str);
            let past =
                prose[i.saturating_sub(2)..i].iter().any(|w| ["was", "were", "had"].contains(&w.as_str()));
            ["to", "will"].contains(&prose[i].as_str())
                && !past
                && (word(1).is_some_and(|w| present == Some(w))
                    || (word(1) == Some("be") && word(2) == Some(done)))
        });
        if ahead {
            problems.push(format!(
                "it says the record is yet to be {done}, and it is {done}: say what happened, in the past"
            ));
        }
    }
    // "… is a prospecting stage": the record said to be one of its fields.
    for c in citations.iter().filter(|c| !c.by_model && c.fact.field_type == "picklist") {
        let end: usize = c.at as usize;
        let units: Vec<u16> = text.encode_utf16().collect();
        let len = c.fact.display.encode_utf16().count();
        let (Some(head), Some(tail)) = (units.get(..end.saturating_sub(len)), units.get(end..)) else {
            continue;
        };
        let (head, tail) = (String::from_utf16_lossy(head).to_lowercase(), String::from_utf16_lossy(tail));
        let next = tail
            .split(|c: char| !c.is_alphabetic())
            .find(|w| !w.is_empty())
            .unwrap_or_default()
            .to_lowercase();
        let is_a = [" is a ", " is an ", " was a ", " was an "].iter().any(|p| head.ends_with(p));
        if is_a && label_words(&c.fact.label).iter().any(|l| same_word(l, &next)) {
            problems.push(format!("it says the record is its {next}: say what its {next} is"));
        }
    }
    // A word a person capitalizes inside a sentence is a name: one no fact holds ("a customer
    // in Chicago" of an account in Munich, "Upgrade Nine") is the model's.
    let sheet: Vec<String> = facts
        .iter()
        .flat_map(|f| [f.display.as_str(), f.label.as_str(), f.record_name.as_str()])
        .flat_map(lowercase_words)
        .collect();
    // German writes every noun with a capital: there the rule says nothing.
    let mut first = true;
    let words_of_outside =
        if w.locale.language() == crate::locale::Language::De { "" } else { outside.as_str() };
    for word in words_of_outside.split(|c: char| c.is_whitespace()) {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        let starts = first || bare.is_empty();
        // A word after ". ", "! ", "? " or ": " starts a sentence of its own.
        first = (first && bare.is_empty()) || word.ends_with(['.', '!', '?', ':']);
        if starts || word.starts_with('…') {
            continue;
        }
        let capital = bare.chars().next().is_some_and(char::is_uppercase)
            && bare.chars().skip(1).any(char::is_lowercase)
            && !bare.contains(['\'', '’']);
        let known = bare.split(['-', '\'', '’']).all(|p| sheet.contains(&p.to_lowercase()));
        if capital && !known && !NAMELESS_CAPITALS.contains(&bare) {
            problems.push(format!("it writes “{bare}”, a name no fact holds: leave it out"));
        }
    }
    // A word of a listed value the record does not hold, outside any slot ("It was closed on
    // {close_date}" of an opportunity in Proposal, "It is a partner" of a customer) says a
    // state it is not in. Negated ("not paid") it may be true.
    for (i, word) in prose.iter().enumerate() {
        let negated = prose[i.saturating_sub(2)..i].iter().any(|w| NEGATIONS.contains(&w.as_str()));
        if w.unheld.contains(word) && !sheet.contains(word) && !negated {
            problems
                .push(format!("it writes “{word}”, a listed value the record does not hold: leave it out"));
        }
    }
    citations.sort_by_key(|c| c.at);
    // A listed value said by its slot and again as a word ("{lead_source} is a referral") says
    // nothing: a tautology.
    for c in citations
        .iter()
        .filter(|c| !c.by_model && matches!(c.fact.field_type.as_str(), "picklist" | "lookup"))
    {
        if citations.iter().any(|d| d.by_model && d.fact.reference == c.fact.reference) {
            problems.push(format!(
                "it says “{}” twice, once by {{{}}}: say what it means once",
                c.fact.display, c.fact.reference
            ));
        }
    }
    // "Send proposal.", "{name}.": values alone are no sentence.
    let words_left = facts.iter().filter(named).fold(outside.clone(), |p, f| mask_words(&p, &f.display));
    if !citations.is_empty() && !words_left.chars().any(char::is_alphabetic) {
        problems.push("it says only values: say what they are".to_string());
    }
    problems.extend(equated(&template, facts));
    problems.extend(misplaced(&template, &found, facts));
    problems.extend(unintroduced(&template, &found, facts));
    // Every sentence states a value through a slot: words alone ("It was closed on ouch", the
    // record's name written out with a word for its number) are the model's, not the facts'.
    if found.is_empty() && problems.is_empty() {
        problems.push(
            "it uses no fact's slot: write the slots of the facts it states, in braces, where their values go"
                .to_string(),
        );
    }
    problems.dedup();
    if problems.is_empty() {
        Ok(Sentence { text: text.trim().to_string(), citations, clause: false })
    } else {
        Err(problems)
    }
}

/// How many bytes at the start of `rest` restate the value a slot just rendered: the value
/// again ("{rating} Cold"), an amount's currency code (" EUR", " in EUR"), or a date's month
/// or year ("{close_date} June"). The model restating what the kernel writes is dropped, not
/// refused: it claims nothing new.
fn restated(rest: &str, f: &Fact, value: &str, language: crate::locale::Language) -> usize {
    let words: Vec<&str> = value.split(' ').collect();
    let code = words
        .last()
        .filter(|c| f.field_type == "currency" && c.len() == 3 && c.chars().all(|x| x.is_ascii_uppercase()));
    let mut said = vec![format!(" {value}")];
    if percent(f) {
        said.extend([
            "%".to_string(),
            " %".into(),
            "\u{202f}%".into(),
            " percent".into(),
            " per cent".into(),
        ]);
    }
    if let Some(code) = code {
        said.extend([format!(" {code}"), format!(" in {code}")]);
    }
    // A date's month and year ("3 March 2026", "3. März 2026", "3 de marzo de 2026").
    let month = words.iter().position(|w| language.month_of(w).is_some());
    if let (true, Some(m), Some(year)) = (f.field_type == "date", month, words.last()) {
        let month = words[m];
        said.extend([format!(" {month} {year}"), format!(" {month}"), format!(" {year}")]);
    }
    for s in said {
        let head = rest.get(..s.len()).unwrap_or_default();
        if head.eq_ignore_ascii_case(&s) && !rest[s.len()..].starts_with(|c: char| c.is_alphanumeric()) {
            return s.len();
        }
    }
    0
}

/// One character of the prose a sentence may write outside its slots: the characters the
/// request holds it to at decode time ([`super::LETTERS`], [`super::MARKS`], [`super::DASHES`]).
static PROSE_CHAR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(&format!("^[{}{}{}(-]$", super::LETTERS, super::MARKS, super::DASHES))
        .expect("the prose class")
});

/// What the prose outside a sentence's slots must not hold although it is no number (a server
/// that ignores the request's pattern lets all of these through):
/// - a month's name: a date is written whole by its slot, and "{close_date} July" adds a date
///   of its own ("May" is left alone, a verb far more often, and so is a month inside a name a
///   fact holds, "June Media");
/// - a character the request's pattern does not allow ("】", "伍", "$");
/// - a parenthesis with no partner;
/// - a word said three times in a row, which is a small model stuck, not prose.
fn strays(outside: &str, facts: &[Fact], language: crate::locale::Language) -> Vec<String> {
    let mut out = vec![];
    let prose = facts
        .iter()
        .filter(|f| names_or_lists(f))
        .fold(outside.to_string(), |p, f| mask_words(&p, &f.display));
    let words: Vec<&str> = prose.split(|c: char| !c.is_alphabetic()).filter(|w| !w.is_empty()).collect();
    for word in &words {
        // English capitalizes a month; French and Spanish do not, German capitalizes every noun.
        let lower = word.to_lowercase();
        let english = lower != "may"
            && crate::locale::Language::En.months().contains(&lower.as_str())
            && word.starts_with(|c: char| c.is_uppercase());
        let own = language != crate::locale::Language::En && language.months().contains(&lower.as_str());
        if english || own {
            out.push(format!("it writes “{word}”, a month no slot states: the date's slot writes it"));
        }
    }
    for w in words.windows(3) {
        if w[0].eq_ignore_ascii_case(w[1]) && w[1].eq_ignore_ascii_case(w[2]) {
            out.push(format!("it repeats “{}”: write each thing once", w[0]));
        }
    }
    let mut buf = [0u8; 4];
    let mut depth = 0i32;
    for c in prose.chars() {
        let fine = c.is_whitespace() || c.is_ascii_digit() || c == '{' || c == '}';
        if !fine && !PROSE_CHAR.is_match(c.encode_utf8(&mut buf)) {
            out.push(format!("it writes “{c}”, which is not prose: leave it out"));
        }
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            out.push("it writes “)” with no “(” before it: leave it out".to_string());
            depth = 0;
        }
    }
    if depth > 0 {
        out.push("it opens “(” and never closes it: leave it out".to_string());
    }
    out.sort();
    out.dedup();
    out
}

/// Words outside the slots that are neither words of the sentence's language (its word list)
/// nor words of the fact sheet (a name, a listed value, a fact's label): a made-up word
/// ("Geschäftspotentien"), a word of another language, a run of letters. A word with an
/// apostrophe is known whole ("it's") or by its parts ("l'échéance").
fn unknown_words(outside: &str, facts: &[Fact], language: crate::locale::Language) -> Vec<String> {
    let sheet: std::collections::HashSet<String> = facts
        .iter()
        .flat_map(|f| [f.display.as_str(), f.label.as_str(), f.record_name.as_str()])
        .flat_map(|t| t.split(|c: char| !c.is_alphabetic()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let known = |w: &str| sheet.contains(&w.to_lowercase()) || language.knows(w);
    let mut out = vec![];
    for token in outside.split(|c: char| !(c.is_alphabetic() || c == '\'' || c == '’')) {
        let word = token.trim_matches(|c: char| c == '\'' || c == '’');
        if word.is_empty() || known(word) {
            continue;
        }
        let parts: Vec<&str> = word.split(['\'', '’']).filter(|p| !p.is_empty()).collect();
        let elided = |p: &str| {
            matches!(p.to_lowercase().as_str(), "l" | "d" | "j" | "qu" | "n" | "s" | "c" | "m" | "t")
        };
        if parts.len() > 1 && parts.iter().all(|p| known(p) || elided(p)) {
            continue;
        }
        // A slot's name written as a word ("nextstep" for {next_step}): the model meant the slot.
        let flat = word.to_lowercase();
        if let Some(f) = facts.iter().find(|f| f.reference.replace('_', "") == flat) {
            out.push(format!(
                "it writes “{word}”, the slot {{{}}} without its braces: write {{{}}} where its value goes, or leave it out",
                f.reference, f.reference
            ));
            continue;
        }
        out.push(format!(
            "it writes “{word}”, which is no {} word and no name or value of the facts: write a word or leave it out",
            language.english_name()
        ));
    }
    out.dedup();
    out
}

/// "{po_number} is {due_date}": one value said to be another. Only a record's name may be said
/// to be a listed value ("{name} is {stage}"); a name is no date or amount, and two other values
/// are never the same thing.
fn equated(template: &str, facts: &[Fact]) -> Vec<String> {
    static EQUATED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        // "is", "ist", "est", "es", with an article or none, in the four languages.
        regex::Regex::new(
            r"\{(\w+)\}\s+(?:is|are|was|were|ist|sind|war|waren|est|sont|était|es|son|era|está)\s+(?:(?:a|an|the|ein|eine|der|die|das|un|une|le|la|el|una)\s+)?\{(\w+)\}",
        )
            .expect("the pattern")
    });
    EQUATED
        .captures_iter(template)
        .filter_map(|c| {
            let (left, right) = (&c[1], &c[2]);
            let fact = facts.iter().find(|f| f.reference == left)?;
            let a_name = fact.display == fact.record_name;
            let listed = facts
                .iter()
                .find(|f| f.reference == right)
                .is_some_and(|f| matches!(f.field_type.as_str(), "picklist" | "lookup"));
            (!(a_name && listed) && left != right).then(|| {
                format!("it says {{{left}}} is {{{right}}}: two values are not one thing; say what each is")
            })
        })
        .collect()
}

/// The words that say when, before a date, in the four languages of the prompt's variants;
/// with the verbs of being ("The close date is …").
const WHEN_WORDS: [&str; 40] = [
    "on", "since", "until", "till", "by", "of", "from", "before", "after", "dated", "for", "is", "was", "be",
    "am", "vom", "seit", "bis", "zum", "ab", "ist", "war", "le", "du", "au", "depuis", "avant", "après",
    "est", "était", "el", "del", "al", "desde", "hasta", "antes", "después", "es", "fue", "era",
];

/// A slot where its value does not belong, by the words around it (English): a date's word
/// before an amount or a number ("paid on {amount}"), money's word before what is no amount
/// ("worth {count}"), and a value followed by another field's name ("a {amount} margin", where
/// the margin is a field of its own), and a date after no word that says when ("and a
/// {close_date}", [`WHEN_WORDS`]). The model then points at the fact that belongs there.
fn misplaced(template: &str, found: &[(std::ops::Range<usize>, String)], facts: &[Fact]) -> Vec<String> {
    const DATE_WORDS: [&str; 4] = ["on", "since", "until", "dated"];
    const MONEY_WORDS: [&str; 7] =
        ["worth", "totaling", "totalling", "valued at", "amount of", "value of", "revenue of"];
    let fact = |r: &str| facts.iter().find(|f| f.reference == r);
    let words_of = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphabetic()).filter(|w| w.len() > 1).map(str::to_lowercase).collect()
    };
    // The things the facts count ("invoices" of "number of overdue invoices").
    let counted: Vec<String> = facts
        .iter()
        .filter_map(|g| g.label.strip_prefix("number of "))
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_lowercase)
        .collect();
    let mut out = vec![];
    for (range, r) in found {
        let Some(f) = fact(r) else { continue };
        let before = template[..range.start].trim_end().to_lowercase();
        let ends_with = |w: &str| {
            before.ends_with(w) && !before[..before.len() - w.len()].ends_with(|c: char| c.is_alphanumeric())
        };
        let numeric = matches!(f.field_type.as_str(), "currency" | "number");
        if numeric && DATE_WORDS.iter().any(|w| ends_with(w)) {
            out.push(format!("it writes {{{r}}}, which is no date, where a date goes: point at the date that belongs there"));
        }
        if f.field_type != "currency" && MONEY_WORDS.iter().any(|w| ends_with(w)) {
            out.push(format!("it writes {{{r}}}, which is no amount, where money goes: point at the amount that belongs there"));
        }
        // "is percentage ({probability})": a value in brackets explains the word before them,
        // which must name it.
        if let Some(inside) = before.strip_suffix('(') {
            let word = inside.trim_end().rsplit(|c: char| !c.is_alphabetic()).next().unwrap_or_default();
            if !words_of(&f.label).iter().any(|l| same_word(l, word)) {
                out.push(format!(
                    "it writes {{{r}}} in brackets after “{word}”, which does not name it: say what it is"
                ));
            }
        }
        // "closed due to {close_date}": a cause, not a date.
        if f.field_type == "date" && ends_with("due to") {
            out.push(format!("it writes “due to {{{r}}}”, a date as a cause: say what happens on the date"));
        }
        // "closed with a 100% probability and a {close_date}": a date follows a word that says
        // when ("on", "since", "am", "le"), a verb of being ("The due date is …"), or its label
        // ("due {due_date}", "Close date: …").
        let word_before =
            before.rsplit(|c: char| !c.is_alphabetic()).find(|w| !w.is_empty()).unwrap_or_default();
        let when = WHEN_WORDS.contains(&word_before)
            || ["date", "datum", "fecha"].contains(&word_before)
            || label_words(&f.label).iter().any(|l| same_word(l, word_before));
        if f.field_type == "date" && !when {
            let after_word =
                if word_before.is_empty() { String::new() } else { format!(" after “{word_before}”") };
            out.push(format!(
                "it writes {{{r}}}, a date,{after_word}, which does not say when: write “on {{{r}}}”"
            ));
        }
        // The word right after the value (past a restated sign or code).
        let after = template[range.end..].trim_start_matches(['%', ' ']);
        let next = after.split(|c: char| !c.is_alphabetic()).next().unwrap_or_default().to_lowercase();
        let own = words_of(&f.label);
        let other_field = facts.iter().filter(|g| {
            g.reference != f.reference
                && g.set.is_none()
                && g.id == f.id
                && matches!(g.field_type.as_str(), "currency" | "number" | "date")
        });
        let names_another = other_field.flat_map(|g| words_of(&g.label)).any(|w| {
            w == next
                && w.len() > 3
                && !own.contains(&w)
                && !["date", "amount", "total"].contains(&w.as_str())
        });
        if numeric && names_another {
            out.push(format!(
                "it writes {{{r}}} as the {next}, which is another fact: write that fact's slot for it"
            ));
        }
        // An amount where a number of things goes: "{amount} overdue invoices".
        let two: Vec<String> = after
            .split_whitespace()
            .take(2)
            .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()).to_lowercase())
            .collect();
        if f.field_type == "currency" && two.iter().any(|w| counted.contains(w)) {
            out.push(format!(
                "it writes {{{r}}}, an amount, as a number of {}: write the count's slot for it",
                two.join(" ")
            ));
        }
    }
    // "It is {amount}.": the record said to be one of its values. Only a listed value (a
    // status, a stage, a type) may be what a record is.
    static IS_A_VALUE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(?:It|This)\s+(?:is|was)\s+(?:(?:a|an|the)\s+)?\{(\w+)\}\s*\.?\s*$")
            .expect("the pattern")
    });
    if let Some(c) = IS_A_VALUE.captures(template.trim()) {
        if fact(&c[1]).is_some_and(|f| f.field_type != "picklist") {
            out.push(format!(
                "it says the record is {{{}}}, which is one of its values, not what it is: say what the value is",
                &c[1]
            ));
        }
    }
    out
}

/// Every slot must be introduced by words saying what its value is, or it is refused (the
/// kernel then writes the value beside its field's label, [`clause`]): a word of its field's
/// label that tells it from the sheet's other values of its type ("won" for the total of won
/// opportunities, "issued" for the issue date); for a plain amount or total, a money word
/// ("worth"); for a probability, "chance". Free of this: the record's own name (the subject),
/// a status or type after "is" ("It is Paid.", "It is a Customer"), a linked record after a
/// preposition ("for Oscorp"), a passage after a word of saying ("A note reads: …"), and a few
/// kinds of value by their usual words ("located in {billing_city}", "in {industry}").
/// A count of one with its plural noun ("1 notes") is refused too.
/// And a slot is written once per sentence ("a {margin} margin of {margin}").
/// So "led by {lead_source}", "an initial investment of {amount}", "{name} won the invoice" and
/// "It is {rating}." are refused: the words around them do not say what the value is.
fn unintroduced(template: &str, found: &[(std::ops::Range<usize>, String)], facts: &[Fact]) -> Vec<String> {
    // In the four languages of the prompt's variants.
    const MONEY: [&str; 21] = [
        "amount",
        "total",
        "value",
        "valued",
        "worth",
        "totaling",
        "totalling",
        "sum",
        "owes",
        "costs",
        "price",
        "betrag",
        "wert",
        "summe",
        "über",
        "montant",
        "valeur",
        "somme",
        "importe",
        "valor",
        "monto",
    ];
    const CHANCE: [&str; 7] = [
        "chance",
        "likelihood",
        "likely",
        "probability",
        "wahrscheinlichkeit",
        "probabilité",
        "probabilidad",
    ];
    // ("from" is not one: "It is from Acme Industries" of an invoice says who sent it.)
    const LINKS: [&str; 14] =
        ["for", "to", "with", "of", "by", "at", "für", "an", "von", "mit", "pour", "de", "avec", "para"];
    const QUOTES: [&str; 10] =
        ["reads", "says", "notes", "note", "mentions", "states", "lautet", "sagt", "dit", "dice"];
    const STATES: [&str; 14] = [
        "is", "was", "are", "were", "remains", "now", "ist", "war", "bleibt", "est", "était", "es", "está",
        "era",
    ];
    const ARTICLES: [&str; 11] = ["a", "an", "the", "ein", "eine", "un", "une", "una", "el", "la", "le"];
    // What introduces a value of a label's word without naming it: words anywhere in the
    // sentence ("located"), or the word right before its slot ("in").
    const KINDS: [(&str, &[&str], &[&str]); 6] = [
        ("city", &["located", "based"], &["in"]),
        ("country", &["located", "based"], &["in"]),
        ("address", &["located", "based"], &["at"]),
        ("industry", &["sector"], &["in"]),
        ("employees", &["staff", "people", "headcount", "employs"], &[]),
        ("paid", &["payment", "pay", "paying"], &[]),
    ];
    let mut prose = String::new();
    let mut last = 0;
    for (range, _) in found {
        prose.push_str(&template[last..range.start]);
        prose.push(' ');
        last = range.end;
    }
    prose.push_str(&template[last..]);
    // The record's own kind ("invoice", "Rechnung", from its name's label) is the subject, not
    // what a value is: "Die Rechnung … am {paid_date}" does not name the "Rechnungsdatum".
    let subject: Vec<String> = facts
        .iter()
        .filter(|f| f.field_type == "text" && f.set.is_none() && f.display == f.record_name)
        .flat_map(|f| label_words(&f.label))
        .filter(|w| w != "name")
        .collect();
    let words: Vec<String> =
        label_words(&prose).into_iter().filter(|w| !subject.iter().any(|s| same_word(s, w))).collect();
    let says = |w: &str| words.iter().any(|x| same_word(x, w));
    // The things the sheet counts ("contacts", "invoices").
    let counted: Vec<String> =
        facts.iter().filter_map(|g| g.set.as_ref()).flat_map(|set| label_words(&set.label)).collect();
    let mut out = vec![];
    for (i, (range, r)) in found.iter().enumerate() {
        let Some(f) = facts.iter().find(|f| &f.reference == r) else { continue };
        if found[..i].iter().any(|(_, s)| s == r) {
            out.push(format!("it writes {{{r}}} twice: say each value once"));
            continue;
        }
        if f.field_type == "text" && f.set.is_none() && f.display == f.record_name {
            continue;
        }
        let previous: Vec<String> = template[..range.start]
            .split_whitespace()
            .rev()
            .take(2)
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
            .collect();
        let before = previous.first().cloned().unwrap_or_default();
        let after = &template[range.end..];
        let own = label_words(&f.label);
        // "1 notes": a count of one with its plural noun.
        let noun = f.label.split_whitespace().last().unwrap_or_default().to_lowercase();
        let next: Vec<String> = after
            .split_whitespace()
            .take(3)
            .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()).to_lowercase())
            .collect();
        let one = f.value.as_f64() == Some(1.0) && f.set.is_some() && f.label.starts_with("number of ");
        if one && noun.ends_with('s') && next.contains(&noun) {
            out.push(format!("it writes {{{r}}}, which is 1, with the plural “{noun}”: write the singular"));
        }
        // A record's status or type is what it is: "It is {status}", "It is a {type}".
        let stated = STATES.contains(&before.as_str())
            || (ARTICLES.contains(&before.as_str())
                && previous.get(1).is_some_and(|w| STATES.contains(&w.as_str())));
        let kind = own.iter().any(|w| w == "status" || w == "type");
        if f.field_type == "picklist" && kind && stated {
            continue;
        }
        // "It is a {stage} opportunity", "a {status} invoice": a record's status, type or stage
        // before the record's own kind.
        let standing = kind || own.iter().any(|w| w == "stage");
        let kind_next = next.first().is_some_and(|n| subject.iter().any(|s| same_word(s, n)));
        if f.field_type == "picklist" && standing && ARTICLES.contains(&before.as_str()) && kind_next {
            continue;
        }
        // "in {billing_city}" says where the record is, not where the things it counts are
        // ("6 contacts in Chicago").
        let after_counted = previous.get(1).is_some_and(|w| counted.iter().any(|c| same_word(c, w)));
        let by_kind = KINDS.iter().any(|(label, anywhere, right_before)| {
            own.iter().any(|w| w == label)
                && (anywhere.iter().any(|a| words.iter().any(|w| w == a))
                    || (right_before.contains(&before.as_str()) && !after_counted))
        });
        if by_kind {
            continue;
        }
        // "for Oscorp", "with the Oscorp" (a preposition, perhaps an article), "Oscorp's".
        let after_link = LINKS.contains(&before.as_str())
            || (ARTICLES.contains(&before.as_str())
                && previous.get(1).is_some_and(|w| LINKS.contains(&w.as_str())));
        let linked = after_link || after.starts_with("'s") || after.starts_with("’s");
        if f.field_type == "lookup" && linked {
            continue;
        }
        if f.field_type == "long_text" && QUOTES.iter().any(|q| words.iter().any(|w| w == q)) {
            continue;
        }
        // "Amount", "Total", and compounds ending in one ("Rechnungsbetrag").
        let plain_money =
            f.field_type == "currency" && own.iter().all(|w| MONEY.iter().any(|m| w.ends_with(m)));
        // "an invoice for {total}", "eine Rechnung über {total}".
        if plain_money
            && (MONEY.iter().any(|m| says(m)) || ["for", "über", "pour", "por"].contains(&before.as_str()))
        {
            continue;
        }
        if percent(f) && own.iter().any(|w| w.starts_with("probab")) && CHANCE.iter().any(|c| says(c)) {
            continue;
        }
        let wanted = telling_words(f, facts);
        // A figure over a set also names its set ("from 56 days ago" of the newest note is said
        // of the notes, not of the overdue invoices).
        let set_said = f.set.as_ref().is_none_or(|set| label_words(&set.label).iter().any(|w| says(w)));
        if !wanted.is_empty() && wanted.iter().any(|w| says(w)) && set_said {
            continue;
        }
        out.push(format!(
            "nothing in it says what {{{r}}} is: name it by its field (“{}”) or leave it out",
            clause_label(f).to_lowercase()
        ));
    }
    out
}

/// A text's words (runs of letters and digits), lowercase: "PO-33060" is "po" and "33060".
pub(super) fn lowercase_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// The words of a label or a sentence that can say what a value is: lowercase, without
/// articles and prepositions, currency codes and the words every count, sum and date share.
fn label_words(text: &str) -> Vec<String> {
    const FILLER: [&str; 17] = [
        "of", "the", "in", "a", "an", "and", "for", "to", "on", "by", "with", "at", "its", "it", "is",
        "number", "date",
    ];
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !FILLER.contains(&w.as_str()))
        .filter(|w| !(w.len() == 3 && keshvar::CurrencyCode::try_from(w.to_uppercase().as_str()).is_ok()))
        .collect()
}

/// The words of a fact's label that tell it from the sheet's other values of its type ("won"
/// beside "open"); all its label's words when none does. A plain amount's ("amount",
/// "total") is empty: money words introduce it.
fn telling_words(f: &Fact, facts: &[Fact]) -> Vec<String> {
    const SUMS: [&str; 4] = ["amount", "total", "value", "sum"];
    let own: Vec<String> =
        label_words(&f.label).into_iter().filter(|w| !SUMS.contains(&w.as_str())).collect();
    let others: Vec<String> = facts
        .iter()
        .filter(|g| g.reference != f.reference && g.field_type == f.field_type)
        .flat_map(|g| label_words(&g.label))
        .collect();
    let telling: Vec<String> =
        own.iter().filter(|w| !others.iter().any(|o| same_word(o, w))).cloned().collect();
    if telling.is_empty() {
        own
    } else {
        telling
    }
}

/// Two words are one if they are equal or share their first four letters ("issued" and
/// "issue", "opportunity" and "opportunities"; not "led" and "lead").
fn same_word(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    a == b || a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count() >= 4
}

/// A fact's label as a clause writes it: "Probability", "Total of overdue invoices" (its
/// percent sign and currency code are the value's).
fn clause_label(f: &Fact) -> String {
    let label = f.label.replace("(%)", "");
    let mut words: Vec<&str> = label.split_whitespace().collect();
    if let [.., "in", code] = words[..] {
        if code.len() == 3 && code.chars().all(char::is_alphabetic) {
            words.truncate(words.len() - 2);
        }
    }
    let label = words.join(" ");
    let mut chars = label.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The kernel's own sentence for values the model pointed at but did not introduce in words a
/// person would sign: each value beside its field's label ("Lead source: Referral; Amount:
/// 220,000.00 USD."), in the reader's locale. None when there is nothing to state.
pub(super) fn clause(facts: &[&Fact], w: &Writing) -> Option<Sentence> {
    let mut text = String::new();
    let mut citations = vec![];
    for f in facts {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&clause_label(f));
        text.push_str(": ");
        text.push_str(&rendered(f, w));
        citations.push(Citation {
            fact: (*f).clone(),
            at: text.encode_utf16().count() as u32,
            by_model: true,
        });
    }
    text.push('.');
    (!citations.is_empty()).then_some(Sentence { text, citations, clause: true })
}

/// "{count} open opportunities" where the count is 1, in English: the kernel writes the
/// singular ("1 open opportunity"), which it knows from the count's own label; the model,
/// writing before the value is known, writes the plural.
fn singular_after_one(template: &str, facts: &[Fact], language: crate::locale::Language) -> String {
    if language != crate::locale::Language::En {
        return template.to_string();
    }
    let mut out = template.to_string();
    for (range, r) in slots(template).into_iter().rev() {
        let Some(f) = facts.iter().find(|f| f.reference == r) else { continue };
        let one = f.value.as_f64() == Some(1.0) && f.set.is_some() && f.label.starts_with("number of ");
        let plural = f.label.split_whitespace().last().unwrap_or_default();
        if !one || !plural.ends_with('s') {
            continue;
        }
        let singular = match plural.strip_suffix("ies") {
            Some(stem) => format!("{stem}y"),
            None if ["ses", "xes", "ches", "shes"].iter().any(|e| plural.ends_with(e)) => {
                plural[..plural.len() - 2].to_string()
            }
            None => plural[..plural.len() - 1].to_string(),
        };
        // The plural within the three words after the slot ("{n} open opportunities").
        let mut at = range.end;
        for _ in 0..3 {
            let rest = &out[at..];
            let start = at + rest.len() - rest.trim_start().len();
            let end = start + out[start..].find(|c: char| !c.is_alphabetic()).unwrap_or(out.len() - start);
            if end == start {
                break;
            }
            if out[start..end].eq_ignore_ascii_case(plural) {
                out.replace_range(start..end, &singular);
                break;
            }
            at = end;
        }
    }
    out
}

/// "The next step is to {next_step}": the kernel writes "is {next_step}", which reads right
/// whether the value is a verb ("Send proposal") or not ("Legal review").
fn is_not_to(template: &str, facts: &[Fact]) -> String {
    let mut out = template.to_string();
    for (range, r) in slots(template).into_iter().rev() {
        let listed = facts
            .iter()
            .find(|f| f.reference == r)
            .is_some_and(|f| matches!(f.field_type.as_str(), "picklist" | "text" | "lookup"));
        let before = &template[..range.start];
        if listed && (before.ends_with(" is to ") || before.ends_with(" was to ")) {
            out.replace_range(range.start - 3..range.start, "");
        }
    }
    out
}

/// A short text's value written out as words ("a customer in Chicago", "next step is to
/// schedule demo"): the model meant its fact, so the kernel reads it as that fact's slot, which
/// then writes the value and must be introduced like any other ("6 contacts in {billing_city}"
/// is refused). Only a value no other fact holds, and only outside slots.
fn written_values_as_slots(template: &str, facts: &[Fact]) -> String {
    let mut out = template.to_string();
    let text = |f: &&Fact| {
        f.field_type == "text" && !names_or_lists(f) && f.set.is_none() && f.display.chars().count() >= 3
    };
    for f in facts.iter().filter(text) {
        let others = facts.iter().filter(|g| g.display.eq_ignore_ascii_case(&f.display)).count();
        if others != 1 {
            continue;
        }
        let lower = out.to_lowercase();
        let needle = f.display.to_lowercase();
        // Byte positions agree only when lowercasing keeps every length (ASCII and most Latin).
        if lower.len() != out.len() {
            continue;
        }
        let inside = |at: usize| {
            let open = out[..at].rfind('{');
            let close = out[..at].rfind('}');
            open.is_some_and(|o| close.is_none_or(|c| c < o))
        };
        let found = lower.match_indices(&needle).map(|(i, _)| i).find(|&i| {
            let before = lower[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '{');
            let after =
                lower[i + needle.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '}');
            before && after && !inside(i)
        });
        if let Some(i) = found {
            out.replace_range(i..i + needle.len(), &format!("{{{}}}", f.reference));
        }
    }
    out
}

/// The word right after a slot ("{amount} USD"): letters after one space, then no letter or digit.
fn next_word(rest: &str) -> Option<&str> {
    let rest = rest.strip_prefix(' ')?;
    // "{amount} in EUR" names a currency as much as "{amount} EUR".
    let rest = rest.strip_prefix("in ").unwrap_or(rest);
    let end = rest.find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len());
    let word = &rest[..end];
    (!word.is_empty() && !rest[end..].starts_with(|c: char| c.is_ascii_digit())).then_some(word)
}

/// What no sentence a person would sign holds, outside its slots (each slot counting as a
/// word): a run of punctuation or dashes standing alone ("PO- – – –"), a word cut at a
/// hyphen ("PO-"), a placeholder ("XXX", "TBD").
fn junk(template: &str, found: &[(std::ops::Range<usize>, String)]) -> Vec<String> {
    let mut worded = String::new();
    let mut last = 0;
    for (range, _) in found {
        worded.push_str(&template[last..range.start]);
        worded.push_str("Slot");
        last = range.end;
    }
    worded.push_str(&template[last..]);
    let mut out = vec![];
    let tokens: Vec<&str> = worded.split_whitespace().collect();
    let marks_only = |t: &str| !t.chars().any(char::is_alphanumeric);
    if tokens.windows(2).any(|w| marks_only(w[0]) && marks_only(w[1])) {
        out.push("it writes a run of punctuation or dashes standing alone: leave it out".to_string());
    }
    static DOUBLED: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"[,;:][,;:.]|\.[,;:]").expect("the pattern"));
    if let Some(m) = DOUBLED.find(&worded) {
        out.push(format!("it writes “{}”, marks doubled: write one", m.as_str()));
    }
    for t in &tokens {
        let word = t.trim_end_matches(|c: char| ",.;:!?)…".contains(c));
        if word.ends_with(['-', '–', '—']) && word.chars().next_back().is_some() && !marks_only(word) {
            out.push(format!("it writes “{word}”, a word cut at its hyphen: write it whole or leave it out"));
        }
        let letters = word.trim_matches(|c: char| !c.is_alphanumeric());
        let placeholder = (letters.len() >= 2 && letters.chars().all(|c| c == 'X' || c == 'x'))
            || letters.eq_ignore_ascii_case("tbd");
        if placeholder {
            out.push(format!("it writes “{letters}”, a placeholder: write the value's slot or leave it out"));
        }
    }
    out
}

/// Capitalized words that are no name: the first person, and the words of the prompts'
/// languages a noun or a sentence after a colon starts with.
const NAMELESS_CAPITALS: [&str; 3] = ["I", "It", "Its"];

/// Facts whose value is a name or a listed value: a record's name, a lookup, a picklist.
fn names_or_lists(f: &Fact) -> bool {
    matches!(f.field_type.as_str(), "picklist" | "lookup")
        || (f.display == f.record_name && f.field_type == "text")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn en(currency: &str) -> Writing {
        Writing { currency: currency.into(), locale: Default::default(), unheld: vec![] }
    }

    /// A fact with its field's label.
    fn labelled(reference: &str, label: &str, field_type: &str, value: Value, display: &str) -> Fact {
        Fact { label: label.into(), ..fact(reference, field_type, value, display) }
    }

    fn fact(reference: &str, field_type: &str, value: Value, display: &str) -> Fact {
        Fact {
            reference: reference.into(),
            object: "account".into(),
            id: "a1".into(),
            field: "f".into(),
            label: reference.replace('_', " "),
            field_type: field_type.into(),
            value,
            display: display.into(),
            record_name: "Acme".into(),
            set: None,
            currency: None,
        }
    }

    #[test]
    fn a_draft_only_grows_and_never_shows_a_slot() {
        let facts = [
            fact("name", "text", json!("Acme \"One\""), "Acme \"One\""),
            fact("unpaid_total_eur", "currency", json!(1500.5), "1500.5"),
        ];
        let raw = r#"{"sentences":["{name} owes {unpaid_total_eur}."]}"#;
        let mut shown = String::new();
        for end in 1..=raw.len() {
            let d = draft(&raw[..end], &facts, &en("EUR"));
            assert!(d.starts_with(&shown), "{shown:?} then {d:?}");
            assert!(!d.contains("{name") && !d.contains("{unpaid"), "{d}");
            shown = d;
        }
        assert_eq!(shown, r#"{"sentences":["Acme \"One\" owes 1,500.50 EUR."]}"#);
    }

    #[test]
    fn a_currency_restated_after_its_amount_is_dropped() {
        let facts =
            [Fact { label: "Total".into(), ..fact("overdue_total_eur", "currency", json!(88850), "88850") }];
        let s = render("It owes {overdue_total_eur} EUR in total.", &facts, &en("EUR")).unwrap();
        assert_eq!(s.text, "It owes 88,850.00 EUR in total.");
        let s = render("It owes {overdue_total_eur} in EUR.", &facts, &en("EUR")).unwrap();
        assert_eq!(s.text, "It owes 88,850.00 EUR.");
        let s = render("It owes {overdue_total_eur} EURO.", &facts, &en("EUR")).unwrap();
        assert_eq!(s.text, "It owes 88,850.00 EUR EURO.");
        // A listed value restated right after its slot is dropped.
        let facts = [fact("rating", "picklist", json!("cold"), "Cold")];
        assert_eq!(
            render("Its rating is {rating} cold.", &facts, &en("EUR")).unwrap().text,
            "Its rating is Cold."
        );
    }

    #[test]
    fn a_listed_value_written_as_a_word_cites_the_one_fact_holding_it() {
        let facts = [
            Fact { record_name: "INV-7".into(), ..fact("number", "text", json!("INV-7"), "INV-7") },
            fact("status", "picklist", json!("overdue"), "Overdue"),
            fact("total", "currency", json!(100800), "100800"),
        ];
        let s = render("{number} is an overdue invoice with a total of {total} USD.", &facts, &en("USD"))
            .unwrap();
        assert_eq!(s.text, "INV-7 is an overdue invoice with a total of 100,800.00 USD.");
        let cited: Vec<(&str, u32, bool)> =
            s.citations.iter().map(|c| (c.fact.reference.as_str(), c.at, c.by_model)).collect();
        let end_of = |w: &str| (s.text.find(w).unwrap() + w.len()) as u32;
        assert_eq!(
            cited,
            [("number", 5, true), ("status", end_of("overdue"), false), ("total", end_of("USD"), true)]
        );
        // With no slot at all, the sentence states nothing through the facts: refused, even
        // where its words name a value.
        let e = render("It is overdue.", &facts, &en("USD")).unwrap_err();
        assert!(e[0].contains("uses no fact's slot"), "{e:?}");
        // Two facts hold the word: which one is meant is the model's to say.
        let two = [
            fact("status", "picklist", json!("cold"), "Cold"),
            fact("rating", "picklist", json!("cold"), "Cold"),
        ];
        let e = render("It is cold.", &two, &en("USD")).unwrap_err();
        assert!(e.iter().any(|p| p.contains("write {status} instead")), "{e:?}");
        // A value no fact holds is still refused, and a sentence stating nothing too.
        assert!(render("It is paid.", &facts, &en("USD")).is_err_and(|e| e[0].contains("uses no fact")));
    }

    #[test]
    fn a_listed_value_the_record_does_not_hold_said_as_a_word_is_refused() {
        // An opportunity in Proposal: its stage's other values are the words it may not say.
        let facts = [
            fact("close_date", "date", json!("2025-02-04"), "2025-02-04"),
            Fact { label: "Stage".into(), ..fact("stage", "picklist", json!("proposal"), "Proposal") },
        ];
        let w = Writing { unheld: vec!["closed".into(), "won".into(), "lost".into()], ..en("USD") };
        let refused = |t: &str| render(t, &facts, &w).unwrap_err().join(" | ");
        assert!(refused("It was closed on {close_date}.")
            .contains("“closed”, a listed value the record does not hold"));
        assert!(refused("It was won, with a close date of {close_date}.").contains("“won”"));
        // Its own state, a date it is expected on, and a denial are true.
        assert!(render("Its stage is {stage}; it should close on {close_date}.", &facts, &w).is_ok());
        assert!(render("It is not closed: its close date is {close_date}.", &facts, &w).is_ok());
        assert!(
            render("It was closed on {close_date}.", &facts, &en("USD")).is_ok(),
            "nothing unheld, nothing refused"
        );
    }

    #[test]
    fn a_date_says_when_a_linked_record_may_take_an_article_and_a_stage_may_name_the_kind() {
        // An opportunity: its name is the record's name ("Acme", as every test fact's).
        let facts = [
            labelled("name", "Opportunity Name", "text", json!("Acme"), "Acme"),
            labelled("stage", "Stage", "picklist", json!("proposal"), "Proposal"),
            labelled("lead_source", "Lead Source", "picklist", json!("event"), "Event"),
            labelled("probability", "Probability (%)", "number", json!(100), "100"),
            labelled("close_date", "Close Date", "date", json!("2025-01-07"), "2025-01-07"),
            labelled("account", "Account", "lookup", json!("acc_1"), "Oscorp"),
        ];
        let result = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text).map_err(|e| e.join(" | "));
        for honest in [
            "It is associated with the {account}.",
            "It belongs to the {account} and closes on {close_date}.",
            "{name} is a {stage} opportunity with a {probability} chance of success.",
            "Its close date is {close_date}.",
            "It is expected to close by {close_date}.",
            "Its closing date ({close_date}) has passed.",
        ] {
            assert!(result(honest).is_ok(), "{honest}: {:?}", result(honest));
        }
        // A date after an article, a conjunction or at the start says nothing of when.
        for junk in [
            "It was closed with a {probability} probability and a {close_date}.",
            "It is in {stage} stage, {close_date}.",
            "{close_date} is its close date.",
        ] {
            let e = result(junk).unwrap_err();
            assert!(
                e.contains("{close_date}, a date") && e.contains("which does not say when"),
                "{junk}: {e}"
            );
        }
        // Only a status, type or stage names the record's kind; and only before that kind.
        for unsaid in ["{name} is an {lead_source} opportunity.", "It is a {stage} account."] {
            let e = result(unsaid).unwrap_err();
            assert!(e.contains("nothing in it says what {"), "{unsaid}: {e}");
        }
        assert!(result("It is a deal from the {account}.").unwrap_err().contains("{account}"));
        // A short text said in other words, and a state the record is in said as ahead of it.
        let facts = [
            labelled("next_step", "Next Step", "text", json!("Schedule demo"), "Schedule demo"),
            labelled("stage", "Stage", "picklist", json!("closed_lost"), "Closed Lost"),
            labelled("close_date", "Close Date", "date", json!("2025-01-07"), "2025-01-07"),
        ];
        let result = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text).map_err(|e| e.join(" | "));
        let e = result("It is {stage} and is scheduled for a demo next step.").unwrap_err();
        assert!(e.contains("“demo”, a word of the next step: write {next_step} for it, whole"), "{e}");
        let e = result("It is {stage} and is due to close on {close_date}.").unwrap_err();
        assert!(e.contains("yet to be closed"), "{e}");
        assert!(result("It is expected to be closed by {close_date}.")
            .unwrap_err()
            .contains("yet to be closed"));
        for honest in [
            "Its stage is {stage}: it was scheduled to close on {close_date}.",
            "It closed on {close_date}; the next step is {next_step}.",
            "The next step is to schedule demo.",
        ] {
            assert!(result(honest).is_ok(), "{honest}: {:?}", result(honest));
        }
    }

    #[test]
    fn a_month_a_stray_character_or_a_stuck_word_outside_the_slots_is_refused() {
        let facts = [
            fact("close_date", "date", json!("2025-06-09"), "2025-06-09"),
            Fact {
                record_name: "June Media".into(),
                ..fact("name", "text", json!("June Media"), "June Media")
            },
        ];
        let ok = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text);
        let refused_of = |t: &str| render(t, &facts, &en("USD")).unwrap_err().join(" | ");
        assert_eq!(
            ok("It may close on {close_date} (soon)."),
            Ok("It may close on 9 June 2025 (soon).".into())
        );

        assert!(ok("{name} closes on {close_date}.").is_ok(), "a month inside a name its slot writes");
        assert!(refused_of("June Media closes on {close_date}.").contains("a word of the record's name"));
        assert!(ok("Naturally: it closes on {close_date} – soon, at the café, as planned…").is_ok());
        let refused = |t: &str| render(t, &facts, &en("USD")).unwrap_err().join(" | ");
        assert!(refused("June Media closes in June, on {close_date}.").contains("“June”, a month"));
        // A weekday, a city, a name the facts do not hold: the model's claim, refused.
        assert!(
            refused("It may close on {close_date} (a Monday).").contains("“Monday”, a name no fact holds")
        );
        assert!(refused("It closes on {close_date} in Chicago.").contains("“Chicago”, a name no fact holds"));
        // The slot's own month or year said again is dropped; another month is refused.
        assert_eq!(ok("It closes on {close_date} June."), Ok("It closes on 9 June 2025.".into()));
        assert_eq!(ok("It closes on {close_date} June 2025."), Ok("It closes on 9 June 2025.".into()));
        assert!(refused("It closes on {close_date} July.").contains("“July”, a month"));
        assert!(refused("It closes on {close_date} June 】.").contains("“】”, which is not prose"));
        assert!(refused("{name} is Expansion 伍三.").contains("“伍”, which is not prose"));
        assert!(refused("It is worth $ on {close_date}.").contains("“$”"));
        // A word of no language the sentence is in, or none at all.
        assert!(refused("Ça va: it closes on {close_date}.").contains("“Ça”, which is no English word"));
        assert!(refused("It closes on {close_date} per the Geschäftsplan.").contains("“Geschäftsplan”"));
        assert!(refused("It closes on {close_date} with strong opportunitiez.").contains("“opportunitiez”"));
        assert!(refused("It closes on {close_date}, and closedate: soon.")
            .contains("the slot {close_date} without its braces"));
        assert!(refused("It closes on {close_date} (soon.").contains("never closes"));
        assert!(refused("It closes) on {close_date}.").contains("“)” with no “(”"));
        assert!(refused("It closes on {close_date} soon soon soon.").contains("repeats “soon”"));
        assert!(ok("It closes on {close_date}, soon, soon.").is_ok(), "twice is prose");
    }

    #[test]
    fn junk_a_person_would_not_sign_is_refused() {
        let facts = [
            Fact { label: "number of open deals".into(), ..fact("count", "number", json!(1), "1") },
            Fact {
                currency: Some("GBP".into()),
                label: "Amount".into(),
                ..fact("amount", "currency", json!(64200), "64,200.00 GBP")
            },
            Fact { label: "Purchase order".into(), ..fact("po", "text", json!("PO-87608"), "PO-87608") },
        ];
        let ok = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text);
        let refused = |t: &str| render(t, &facts, &en("USD")).unwrap_err().join(" | ");
        assert!(refused("It has a PO- number of {po} – – – –.").contains("run of punctuation"));
        assert!(refused("It has a PO- number of {po}.").contains("“PO-”, a word cut"));
        assert!(refused("Upgrade XXX is worth {amount}.").contains("“XXX”, a placeholder"));
        assert!(refused("It has {count} open deals worth {count} USD.")
            .contains("USD after {count}, which is no amount"));
        assert!(refused("It is worth {amount} USD.").contains("own currency"));
        assert!(refused("It is worth {amount} in USD.").contains("own currency"));
        assert!(refused("It has a total value EUR {amount}.").contains("writes EUR itself"));
        assert!(refused("It has {count} invoices in USD.").contains("writes USD itself"));
        assert!(refused("Overdue invoices total in GBP: {amount}.").contains("writes GBP itself"));
        assert_eq!(
            ok("It is worth {amount} GBP in GBP."),
            Ok("It is worth 64,200.00 GBP.".into()),
            "said twice, dropped"
        );
        // Honest prose stays: one dash, a hyphenated word, a code the slot itself restates.
        assert_eq!(
            ok("It is worth {amount} – a record."),
            Ok("It is worth 64,200.00 GBP – a record.".into())
        );
        assert!(ok("Its purchase order {po} is well-known.").is_ok());
        assert_eq!(ok("It is worth {amount} GBP."), Ok("It is worth 64,200.00 GBP.".into()));
        assert!(ok("It has {count} open deal, worth {amount}.").is_ok());
        assert!(ok("Its x-ray division has {count} deal.").is_ok(), "one x is a letter, not a placeholder");
    }

    #[test]
    fn a_tautology_or_one_value_said_to_be_another_is_refused() {
        let facts = [
            Fact { record_name: "Acme".into(), ..fact("name", "text", json!("Acme"), "Acme") },
            fact("lead_source", "picklist", json!("referral"), "Referral"),
            Fact { label: "Purchase order".into(), ..fact("po", "text", json!("PO-87608"), "PO-87608") },
            Fact { label: "Due date".into(), ..fact("due", "date", json!("2025-10-31"), "2025-10-31") },
        ];
        let ok = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text);
        let refused = |t: &str| render(t, &facts, &en("USD")).unwrap_err().join(" | ");
        assert!(refused("Its lead source {lead_source} is a referral.").contains("“Referral” twice"));
        assert!(refused("{po} is {due}.").contains("{po} is {due}"));
        assert!(ok("{name} came as a referral.").is_ok(), "the word alone cites the value");
        assert!(ok("{name} came from {lead_source} as its lead source.").is_ok());
        assert!(
            refused("{name} is {lead_source}.").contains("nothing in it says what {lead_source} is"),
            "a record is not its lead source"
        );
        assert!(refused("{name} is {due}.").contains("{name} is {due}"), "a name is no date");
        assert!(refused("{name} is {po}.").contains("{name} is {po}"));
        assert!(ok("Purchase order {po} is due on {due}.").is_ok());
    }

    #[test]
    fn a_slot_is_shown_only_where_its_words_say_what_it_is() {
        let counted = |reference: &str, label: &str, value: u64| Fact {
            set: Some(SetCitation {
                object: "note".into(),
                filter: crate::metadata::condition::Condition::All(crate::metadata::condition::AllOf {
                    all: vec![],
                }),
                field: None,
                operation: "count".into(),
                label: label.into(),
            }),
            ..labelled(reference, label, "number", json!(value), &value.to_string())
        };
        let facts = [
            Fact { record_name: "Acme".into(), ..fact("name", "text", json!("Acme"), "Acme") },
            labelled("lead_source", "Lead source", "picklist", json!("event"), "Event"),
            labelled("type", "Type", "picklist", json!("customer"), "Customer"),
            labelled("rating", "Rating", "picklist", json!("cold"), "Cold"),
            labelled("industry", "Industry", "picklist", json!("finance"), "Finance"),
            labelled("status", "Status", "picklist", json!("paid"), "Paid"),
            labelled("amount", "Amount", "currency", json!(220000), "220000"),
            labelled("account", "Account", "lookup", json!("acc_1"), "Oscorp"),
            labelled("billing_city", "Billing city", "text", json!("Munich"), "Munich"),
            labelled("issue_date", "Issue date", "date", json!("2025-10-25"), "2025-10-25"),
            labelled("due_date", "Due date", "date", json!("2025-12-24"), "2025-12-24"),
            labelled("won_total", "total amount of won opportunities in USD", "currency", json!(5), "5"),
            labelled("open_total", "total amount of open opportunities in USD", "currency", json!(7), "7"),
            counted("notes_count", "number of notes", 1),
            counted("open_count", "number of open opportunities", 2),
            labelled("paid_date", "Paid date", "date", json!("2025-12-21"), "2025-12-21"),
            labelled("close_date", "Close date", "date", json!("2025-11-12"), "2025-11-12"),
            labelled("next_step", "Next step", "text", json!("Legal review"), "Legal review"),
            Fact {
                set: counted("x", "notes", 0).set,
                ..labelled("days_since_note", "days since the newest note", "number", json!(56), "56")
            },
        ];
        let ok = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text);
        let unsaid = |t: &str, slot: &str| {
            let e = render(t, &facts, &en("USD")).unwrap_err().join(" | ");
            assert!(e.contains(&format!("nothing in it says what {{{slot}}} is")), "{t}: {e}");
        };
        for honest in [
            "{name} is a {type} in {industry} with a {rating} rating.",
            "Its lead source is {lead_source}.",
            "It is {status}.",
            "It is worth {amount}, for {account}.",
            "It was issued on {issue_date} and is due on {due_date}.",
            "It is located in {billing_city}.",
            "It has {open_count} open opportunities worth {open_total} and won {won_total}.",
            "It has {notes_count} note.",
            "It is an invoice for {amount}.",
            "The payment was made on {paid_date}.",
            "The next step is {next_step}.",
            "Its newest note is from {days_since_note} days ago.",
        ] {
            assert!(ok(honest).is_ok(), "{honest}: {:?}", ok(honest));
        }
        unsaid("It was led by {lead_source}.", "lead_source");
        unsaid("It is {rating}.", "rating");
        unsaid("It has an initial investment of {amount}.", "amount");
        unsaid("{account} won the invoice.", "account");
        unsaid("It is from {account}.", "account");
        assert!(
            ok("The amount is {amount}. The next step is {next_step}.").is_ok(),
            "a capital after a full stop"
        );
        unsaid("It was issued on {due_date}.", "due_date");
        unsaid("It has open opportunities worth {won_total}.", "won_total");
        unsaid("It is {rating} with {industry}.", "rating");
        let refused = |t: &str| render(t, &facts, &en("USD")).unwrap_err().join(" | ");
        assert!(refused("It was closed due to {close_date}.").contains("a date as a cause"));
        assert_eq!(ok("The next step is to {next_step}."), Ok("The next step is Legal review.".into()));
        assert!(refused("Event.").contains("only values"));
        unsaid("It has {open_count} open opportunities in {billing_city}.", "billing_city");
        assert!(refused("{name} is an Acme deal worth {amount}.").contains("a word of the record's name"));
        assert!(refused("{name} is a finance industry.").contains("the record is its industry"));
        assert!(refused("Its rating is percentage ({rating}).").contains("in brackets after “percentage”"));
        assert!(ok("Its rating ({rating}) is its own.").is_ok());
        // A short text's value written out is read as its slot, introduced like any other.
        assert_eq!(ok("{name} is a customer in Munich."), Ok("Acme is a customer in Munich.".into()));
        unsaid("It has {open_count} open opportunities in Munich.", "billing_city");
        assert_eq!(ok("The next step is to legal review."), Ok("The next step is Legal review.".into()));
        unsaid("It owes {open_total}, from {days_since_note} days ago.", "days_since_note");
        assert!(refused("{name}.").contains("only values"));
        // A count of one: the kernel writes its noun in the singular (English), and refuses the
        // plural where it cannot (German).
        assert_eq!(ok("It has {notes_count} notes."), Ok("It has 1 note.".into()));
        let de = Writing {
            currency: "USD".into(),
            locale: crate::locale::Locale::parse("de").unwrap(),
            unheld: vec![],
        };
        let e = render("Es hat {notes_count} notes.", &facts, &de).unwrap_err().join(" | ");
        assert!(e.contains("with the plural “notes”"), "{e}");
        let e = render("Its rating is {rating}, {rating}.", &facts, &en("USD")).unwrap_err().join(" | ");
        assert!(e.contains("{rating} twice"), "{e}");
        // The kernel's clause for refused values: each beside its label, in the reader's locale.
        let pointed = [&facts[1], &facts[6], &facts[11]];
        let c = clause(&pointed, &en("USD")).unwrap();
        assert_eq!(
            c.text,
            "Lead source: Event; Amount: 220,000.00 USD; Total amount of won opportunities: 5.00 USD."
        );
        assert!(
            c.clause
                && c.citations
                    .iter()
                    .all(|x| c.text.encode_utf16().take(x.at as usize).count() == x.at as usize)
        );
        assert!(clause(&[], &en("USD")).is_none());
    }

    #[test]
    fn values_are_rendered_by_type() {
        assert_eq!(
            rendered(&fact("F1", "currency", json!(28950000), "28950000"), &en("USD")),
            "28,950,000.00 USD"
        );
        assert_eq!(rendered(&fact("F1", "number", json!(11908), "11908"), &en("USD")), "11,908");
        assert_eq!(rendered(&fact("F1", "number", json!(877), "877"), &en("USD")), "877");
        assert_eq!(
            rendered(&fact("F1", "date", json!("2026-03-05"), "2026-03-05"), &en("USD")),
            "5 March 2026"
        );
        assert_eq!(rendered(&fact("F1", "picklist", json!("hot"), "Hot"), &en("USD")), "Hot");
    }

    #[test]
    fn a_german_reader_gets_german_dates_and_numbers_and_the_same_checks() {
        let de = Writing {
            currency: "EUR".into(),
            locale: crate::locale::Locale::parse("de-DE").unwrap(),
            unheld: vec![],
        };
        assert_eq!(rendered(&fact("F1", "currency", json!(64200), "64200"), &de), "64.200,00 EUR");
        assert_eq!(rendered(&fact("F1", "number", json!(12.6), "12.6"), &de), "12,6");
        assert_eq!(rendered(&fact("F1", "date", json!("2026-03-05"), "2026-03-05"), &de), "5. März 2026");
        // A German workspace labels its fields in German, and its labels' words introduce values.
        let facts = [
            Fact { label: "Fälligkeit".into(), ..fact("due", "date", json!("2026-03-05"), "2026-03-05") },
            Fact { label: "Rechnungsbetrag".into(), ..fact("total", "currency", json!(64200), "64200") },
            Fact { label: "Bestellnummer".into(), ..fact("po", "text", json!("PO-1"), "PO-1") },
        ];
        let ok = |t: &str| render(t, &facts, &de).map(|s| s.text);
        assert_eq!(
            ok("Die Rechnung über {total} ist am {due} fällig."),
            Ok("Die Rechnung über 64.200,00 EUR ist am 5. März 2026 fällig.".into())
        );
        // The slot's own month said again is dropped; another month is refused, as is a value
        // said to be another.
        assert_eq!(ok("Sie ist am {due} März fällig."), Ok("Sie ist am 5. März 2026 fällig.".into()));
        let refused = |t: &str| render(t, &facts, &de).unwrap_err().join(" | ");
        assert!(refused("Sie ist im April fällig, am {due}.").contains("“April”, a month"));
        assert!(
            ok("Der Rechnungsbetrag von {total} ist am {due} fällig.").is_ok(),
            "a compound of German words"
        );
        assert!(refused("Sie hat offene Geschäftspotentien über {total}.")
            .contains("“Geschäftspotentien”, which is no German word"));
        assert!(refused("{po} ist {due}.").contains("{po} is {due}"));
        let es = Writing {
            currency: "EUR".into(),
            locale: crate::locale::Locale::parse("es").unwrap(),
            unheld: vec![],
        };
        let facts = [Fact { label: "Vencimiento".into(), ..facts[0].clone() }];
        assert_eq!(
            render("Vence el {due} marzo.", &facts, &es).map(|s| s.text),
            Ok("Vence el 5 de marzo de 2026.".into())
        );
        assert!(render("Vence en abril, el {due}.", &facts, &es).is_err());
    }

    #[test]
    fn a_value_where_another_kind_of_value_goes_is_refused_and_a_percentage_carries_its_sign() {
        let facts = [
            Fact {
                label: "Amount".into(),
                id: "opp_1".into(),
                ..fact("amount", "currency", json!(231000), "231000")
            },
            Fact {
                label: "Margin (%)".into(),
                id: "opp_1".into(),
                ..fact("margin_pct", "number", json!(32.84), "32.84")
            },
            Fact {
                label: "Probability (%)".into(),
                id: "opp_1".into(),
                ..fact("probability", "number", json!(25), "25")
            },
            Fact {
                label: "Close Date".into(),
                id: "opp_1".into(),
                ..fact("close_date", "date", json!("2026-01-07"), "2026-01-07")
            },
            Fact {
                label: "number of open opportunities".into(),
                ..fact("open_count", "number", json!(3), "3")
            },
        ];
        let ok = |t: &str| render(t, &facts, &en("USD")).map(|s| s.text);
        let refused = |t: &str| render(t, &facts, &en("USD")).unwrap_err().join(" | ");
        assert_eq!(
            ok("It has a {probability} chance of success."),
            Ok("It has a 25% chance of success.".into())
        );
        assert_eq!(
            ok("It has a {probability}% chance and a {margin_pct} percent margin."),
            Ok("It has a 25% chance and a 32.84% margin.".into())
        );
        assert_eq!(
            ok("It is worth {amount} and closing on {close_date}."),
            Ok("It is worth 231,000.00 USD and closing on 7 January 2026.".into())
        );
        assert!(
            refused("It is a {amount} opportunity.").contains("nothing in it says what {amount} is"),
            "an amount no word calls money"
        );
        assert!(refused("It has a margin of {margin_pct} and {margin_pct}.").contains("{margin_pct} twice"));
        assert!(ok("It has a total of {open_count} open deals worth {amount}.").is_ok());
        assert!(refused("It was paid on {amount}.").contains("no date, where a date goes"));
        assert!(refused("It has deals worth {open_count}.").contains("no amount, where money goes"));
        assert!(
            refused("It is lost with a {amount} margin of {margin_pct}.").contains("{amount} as the margin")
        );
        assert!(refused("It is worth {amount},, soon.").contains("marks doubled"));
        assert!(refused("It has {amount} open opportunities.").contains("an amount, as a number of"));
        assert!(ok("It has {open_count} open opportunities worth {amount} in open deals.").is_ok());
        assert!(refused("It is {amount}.").contains("the record is {amount}"));
        assert!(refused("It is {probability}").contains("the record is {probability}"));
        assert!(ok("The amount is {amount}.").is_ok(), "a value named by its field");
        let de = Writing {
            currency: "EUR".into(),
            locale: crate::locale::Locale::parse("de").unwrap(),
            unheld: vec![],
        };
        assert_eq!(rendered(&facts[2], &de), "25\u{202f}%");
    }
}
