//! The answer's shape and its checks: the schema a request holds the model to, the answer as
//! parsed, version 3's check of sentences and slots, and the re-check of a finished summary
//! against facts read afresh.

use super::*;

/// The answer's shape: sentences, "not enough", or — while tool calls remain — a tool call with
/// the tool's closed input (`tools::specs`).
/// With `slots` (version 3, for the request only), a sentence is held at decode time to text
/// without digits or braces, and slots naming the facts — and to one line of at most
/// [`SENTENCE_ITEMS`] characters and slots: a server ignores `maxLength` beside a `pattern`, and
/// a small model inside an unbounded string can write until its output cap (seen: a curly quote
/// where the closing one belonged, then lines of backticks to the end), losing the whole answer.
/// Spaces come one at a time: a small model copying a value whose digits are closed to it
/// otherwise writes a space per digit ("an amount of    USD"); with that closed too, the slot
/// is what is left to write.
pub(super) fn answer_schema(tools: bool, slots: Option<&[String]>, most: usize) -> Value {
    let mut sentence = json!({"type": "string", "minLength": 1, "maxLength": 400});
    if let Some(keys) = slots {
        sentence["pattern"] = json!(sentence_pattern(keys));
    }
    let mut any = vec![
        json!({"type": "object", "properties": {"sentences": {"type": "array", "minItems": 1, "maxItems": most,
            "items": sentence}},
         "required": ["sentences"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"insufficient": {"type": "string", "maxLength": 300}},
         "required": ["insufficient"], "additionalProperties": false}),
    ];
    if tools {
        for spec in crate::ai::tools::specs().as_array().into_iter().flatten() {
            let mut input = spec["input"].clone();
            input["properties"]["tool"] = json!({"const": spec["name"]});
            let required = input["required"].as_array_mut();
            if let Some(r) = required {
                r.insert(0, json!("tool"));
            }
            any.push(input);
        }
    }
    json!({"anyOf": any})
}

/// A sentence as the model wrote it: text with `[F12]` markers after the values it states.
#[derive(Debug)]
pub(super) struct SentenceOut {
    pub(super) text: String,
    pub(super) cite: Vec<String>,
}

impl SentenceOut {
    pub(super) fn parse(written: &str) -> SentenceOut {
        // Control characters and bidi overrides are gone before the sentence is checked or
        // shown: what the checker reads is what the reader sees.
        let written = crate::metadata::value::strip_unsafe_chars(written);
        let mut text = String::new();
        let mut cite = vec![];
        let mut rest: &str = &written;
        while let Some(open) = rest.find('[') {
            let Some(close) = rest[open..].find(']').map(|c| open + c) else { break };
            let inner = &rest[open + 1..close];
            // `[F12]`, `[F3, F4]`; a bare `[12]` is read as F12 (the checker then holds it to
            // what F12 states).
            let ids: Vec<&str> = inner.split(',').map(|i| i.trim().trim_start_matches('F')).collect();
            if ids.iter().all(|i| !i.is_empty() && i.len() < 6 && i.chars().all(|c| c.is_ascii_digit())) {
                text.push_str(rest[..open].trim_end_matches(' '));
                cite.extend(ids.iter().map(|i| format!("F{i}")));
            } else {
                text.push_str(&rest[..=close]);
            }
            rest = &rest[close + 1..];
        }
        text.push_str(rest);
        cite.dedup();
        SentenceOut { text: text.trim().to_string(), cite }
    }
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum SummaryJson {
    Sentences { sentences: Vec<String> },
    Insufficient { insufficient: String },
}

/// A version-3 answer as checked: what it shows, and the problems of the sentences the kernel
/// refused (each replaced by its [`slots::clause`]).
pub(super) struct SlotAnswer {
    pub(super) checked: Checked,
    pub(super) problems: Vec<String>,
    /// How many of the shown sentences the model wrote (the rest are the kernel's clauses).
    pub(super) by_model: usize,
}

/// Check a version-3 answer: the schema, then every sentence's slots (`slots::render`): each
/// names a fact, no value is written outside one, every one is introduced by words saying what
/// it is, and no sentence is without one. A refused sentence is replaced by the kernel's
/// clause for the values it pointed at and no kept sentence states. An answer that is not
/// JSON of the schema is the error.
pub(super) fn check_slots(
    schema: &Value,
    facts: &[Fact],
    content: &str,
    w: &slots::Writing,
) -> std::result::Result<SlotAnswer, Vec<String>> {
    let v: Value = crate::ai::contract::parse_answer(content)
        .map_err(|e| vec![format!("the answer is not valid JSON ({e})")])?;
    let validator = jsonschema::validator_for(schema).map_err(|e| vec![e.to_string()])?;
    if let Some(e) = validator.iter_errors(&v).next() {
        return Err(vec![format!("at {}: {e}", e.instance_path().as_str())]);
    }
    let written = match serde_json::from_value::<SummaryJson>(v).map_err(|e| vec![e.to_string()])? {
        SummaryJson::Insufficient { insufficient } => {
            let why = crate::metadata::value::strip_unsafe_chars(&insufficient).into_owned();
            return Ok(SlotAnswer { checked: Checked::Insufficient(why), problems: vec![], by_model: 0 });
        }
        SummaryJson::Sentences { sentences } => sentences,
    };
    let mut problems = vec![];
    // Each sentence in the model's order: the model's, or the facts a refused one pointed at.
    let mut shown: Vec<std::result::Result<Sentence, Vec<&Fact>>> = vec![];
    for (i, template) in written.iter().enumerate() {
        let mut own = vec![];
        let mut copied = EXAMPLE_PHRASES.iter().chain(&super::languages::EXAMPLE_PHRASES);
        if let Some(p) = copied.find(|p| claims::contains_words(template, p)) {
            own.push(format!("copies the worked example (“{p}”), which is not about this record"));
        }
        if let Some(p) = slots::REPAIR_PHRASES.iter().find(|p| claims::contains_words(template, p)) {
            own.push(format!("repeats the check's own words (“{p}”), which say nothing about this record"));
        }
        match slots::render(template, facts, w) {
            Ok(s) if own.is_empty() => {
                if !shown.iter().any(|t| t.as_ref().is_ok_and(|t| t.text == s.text)) {
                    shown.push(Ok(s));
                }
                continue;
            }
            Ok(_) => {}
            Err(ps) => own.extend(ps),
        }
        problems.extend(own.into_iter().map(|p| format!("sentence {} (“{template}”): {p}", i + 1)));
        let pointed =
            slots::slots(template).into_iter().filter_map(|(_, r)| facts.iter().find(|f| f.reference == r));
        shown.push(Err(pointed.collect()));
    }
    // A clause states what no sentence before it states, and never the record's own name.
    let mut stated: Vec<String> = shown
        .iter()
        .flat_map(|s| {
            s.as_ref().ok().into_iter().flat_map(|s| s.citations.iter().map(|c| c.fact.reference.clone()))
        })
        .collect();
    let mut sentences = vec![];
    for s in shown {
        let sentence = match s {
            Ok(s) => Some(s),
            Err(pointed) => {
                let mut fresh: Vec<&Fact> = vec![];
                for f in pointed {
                    let name = f.field_type == "text" && f.set.is_none() && f.display == f.record_name;
                    if !name && !stated.contains(&f.reference) {
                        stated.push(f.reference.clone());
                        fresh.push(f);
                    }
                }
                slots::clause(&fresh, w)
            }
        };
        // The first sentences only (the model was asked for at most this many).
        if let Some(s) = sentence.filter(|_| sentences.len() < MOST_SENTENCES) {
            sentences.push(s);
        }
    }
    let by_model = sentences.iter().filter(|s| !s.clause).count();
    Ok(SlotAnswer { checked: Checked::Sentences(sentences), problems, by_model })
}

/// A version-3 sentence at decode time: one line of at most [`SENTENCE_ITEMS`] items, one space
/// between two. An item is a word of at most [`WORD_CHARS`] letters of [`LETTERS`] or a slot
/// naming a fact (with an `'s`), perhaps after `(`, perhaps followed by up to three of
/// [`MARKS`]; or one of [`DASHES`] alone. So there is no digit (a number is a slot's), no brace,
/// quote, backslash, backtick or line break (they end or break the JSON), no currency sign (an
/// amount is a slot's), no other script (a small model closed out of digits wrote "53" as
/// "伍三"), no run of spaces (the same model wrote a space per digit it could not write) and no
/// run of marks (it wrote ", , , …" to its output cap). A server ignores `maxLength` beside a
/// `pattern`, so the pattern bounds the sentence itself. [`slots::render`] checks the
/// characters again after the answer.
pub(super) fn sentence_pattern(keys: &[String]) -> String {
    let slot = format!(r"\{{({})\}}(['’]s)?", keys.join("|"));
    let item = format!(r"\(?([{LETTERS}-]{{1,{WORD_CHARS}}}|{slot})[{MARKS}]{{0,3}}|[{DASHES}]");
    format!("^({item})( ({item})){{0,{}}}$", SENTENCE_ITEMS - 1)
}

/// The letters of a version-3 sentence's words (and the hyphen): those of the prompts' language,
/// English (there are no locale variants yet), the accented Latin ones a word may borrow, and
/// apostrophes.
pub(super) const LETTERS: &str = "A-Za-zÀ-ÖØ-öø-ɏ'’";

/// The marks that may follow a word or a slot.
pub(super) const MARKS: &str = ",.;:!?)%…";

/// The marks that stand alone between words.
pub(super) const DASHES: &str = "–—&/+";

/// The most sentences a version-3 summary shows.
pub(super) const MOST_SENTENCES: usize = 4;

/// Words and slots a sentence may hold at decode time (prompt version 3).
pub(super) const SENTENCE_ITEMS: usize = 32;

/// Letters a word may hold at decode time (prompt version 3).
pub(super) const WORD_CHARS: usize = 30;

/// Re-check a finished summary against freshly read facts: the number of problems (claims
/// without a citation stating them, citations not stated). 0 for every summary this module
/// returns; the eval counts it independently of the run.
pub fn recheck(session: &Session<'_>, answer: &SummaryAnswer) -> Result<usize> {
    // A version-3 summary is grounded on the sheet (the record's values, amounts in their
    // record's currency, and the rollups), a version-2 one on its facts: read both afresh; the
    // answer holds if it holds on one of them.
    let (sheet, _) = session.fact_sheet(&answer.object, &answer.id)?;
    let answer = &in_english(answer, &session.writing());
    let on_sheet = problems_on(answer, &sheet);
    if on_sheet == 0 || answer.sentences.iter().flat_map(|s| &s.citations).any(|c| c.fact.set.is_some()) {
        return Ok(on_sheet);
    }
    let (facts, _) = session.summary_facts(&answer.object, &answer.id)?;
    Ok(on_sheet.min(problems_on(answer, &facts)))
}

/// A summary written in another locale with each slot's value as English writes it, so the
/// check reads its numbers and dates ("71.150,00 USD" is 71,150; "2. April 2026" a day). Only
/// what a slot rendered changes; the prose stays as written.
fn in_english(answer: &SummaryAnswer, w: &slots::Writing) -> SummaryAnswer {
    let english = slots::Writing { locale: Default::default(), ..w.clone() };
    if w.locale == english.locale {
        return answer.clone();
    }
    let mut out = answer.clone();
    for s in &mut out.sentences {
        let units: Vec<u16> = s.text.encode_utf16().collect();
        let mut text: Vec<u16> = vec![];
        let mut last = 0usize;
        let mut shift = 0i64;
        for c in &mut s.citations {
            let (value, plain) = (slots::rendered(&c.fact, w), slots::rendered(&c.fact, &english));
            let (end, len) = (c.at as usize, value.encode_utf16().count());
            let start = end.saturating_sub(len);
            let here = c.by_model
                && start >= last
                && units.get(start..end) == Some(&value.encode_utf16().collect::<Vec<_>>()[..]);
            if here {
                text.extend_from_slice(&units[last..start]);
                text.extend(plain.encode_utf16());
                last = end;
                shift += plain.encode_utf16().count() as i64 - len as i64;
            }
            c.at = (c.at as i64 + shift).max(0) as u32;
        }
        text.extend_from_slice(&units[last.min(units.len())..]);
        s.text = String::from_utf16_lossy(&text);
    }
    out
}

pub(super) fn problems_on(answer: &SummaryAnswer, facts: &[Fact]) -> usize {
    answer
        .sentences
        .iter()
        .map(|s| {
            let cited: Vec<&Fact> = s
                .citations
                .iter()
                .filter_map(|c| {
                    facts.iter().find(|f| {
                        f.object == c.fact.object
                            && f.id == c.fact.id
                            && f.field == c.fact.field
                            && f.set == c.fact.set
                            && f.value == c.fact.value
                    })
                })
                .collect();
            let missing = s.citations.len() - cited.len();
            let text = if s.clause { labels_blanked(&s.text) } else { s.text.clone() };
            sentence_problems(&text, &cited, facts).len() + missing
        })
        .sum()
}

/// A clause ("Paid Date: 2 December 2025; Total: …") with its labels blanked (the same number
/// of characters, so positions hold): a field's label names the field, it claims nothing —
/// "Paid" in "Paid Date" is not the status Paid. Only the values are checked.
fn labels_blanked(clause: &str) -> String {
    clause
        .split("; ")
        .map(|part| match part.split_once(": ") {
            Some((label, value)) => format!("{}: {value}", " ".repeat(label.chars().count())),
            None => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
