//! The trust contract: a table is the answer only when every content word of the question is
//! used — by the object, a condition, the order, the count or a column. Otherwise the answer
//! is a **clarification**: the words not placed, and what they could mean as options, each a
//! spec one click runs. The table of a spec that ignores a word is never shown as the answer.

use super::choice::ReadCondition;
use super::reader::{tokens, Reading, Token};
use super::*;
use crate::ai::projection::ProjectedField;
use crate::locale::Language;
use crate::metadata::condition::AllOf;

/// The question could not be read whole: the words not placed and what they could mean.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Clarification {
    /// The words Countersign could not place, as written.
    pub words: Vec<String>,
    /// One sentence for the person, in their language.
    pub message: String,
    /// What the words could mean, nearest first; each runs with one click.
    pub options: Vec<ClarifyOption>,
}

/// One thing the words could mean, as a spec ready to run.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClarifyOption {
    /// What it means, in the workspace's labels ("Stage is Negotiation"), or what it leaves out.
    pub label: String,
    /// The question's words it reads (empty for "leave out").
    pub words: String,
    pub spec: QuerySpec,
}

/// Options a clarification offers at most.
const MAX_OPTIONS: usize = 8;

/// Words as a sentence quotes them: “a”, “b”.
fn quoted(words: &[String]) -> String {
    words.iter().map(|w| format!("“{w}”")).collect::<Vec<_>>().join(", ")
}

/// The sentence above the options.
fn message(language: Language, words: &[String]) -> String {
    let quoted = quoted(words);
    match language {
        Language::En => format!(
            "Countersign could not place {quoted} in your question, so it shows no table rather than rows that may be wrong. Did you mean one of these?"
        ),
        Language::De => format!(
            "Countersign konnte {quoted} in Ihrer Frage nicht zuordnen und zeigt deshalb keine Tabelle statt womöglich falscher Zeilen. Meinten Sie eines davon?"
        ),
        Language::Fr => format!(
            "Countersign n’a pas su placer {quoted} dans votre question : il n’affiche pas de tableau plutôt que des lignes peut-être fausses. Vouliez-vous dire l’un de ceux-ci ?"
        ),
        Language::Es => format!(
            "Countersign no pudo ubicar {quoted} en su pregunta, así que no muestra una tabla en lugar de filas quizá erróneas. ¿Quiso decir una de estas?"
        ),
    }
}

/// The sentence above the other readings of words whose chosen reading found nothing.
fn read_otherwise(language: Language, words: &[String]) -> String {
    let quoted = quoted(words);
    match language {
        Language::En => format!(
            "Countersign read {quoted} one way and found nothing; read another way, it finds records. Which did you mean?"
        ),
        Language::De => format!(
            "Countersign hat {quoted} auf eine Weise gelesen und nichts gefunden; anders gelesen findet es Datensätze. Was meinten Sie?"
        ),
        Language::Fr => format!(
            "Countersign a lu {quoted} d’une façon et n’a rien trouvé ; lu autrement, il trouve des enregistrements. Que vouliez-vous dire ?"
        ),
        Language::Es => format!(
            "Countersign leyó {quoted} de una manera y no encontró nada; leído de otra, encuentra registros. ¿Qué quiso decir?"
        ),
    }
}

/// `c` with its member `old` replaced by `new` (a member of its top-level `all`, or itself).
fn replaced(c: &Condition, old: &Condition, new: &Condition) -> Option<Condition> {
    if c == old {
        return Some(new.clone());
    }
    let Condition::All(a) = c else { return None };
    let at = a.all.iter().position(|x| x == old)?;
    let mut all = a.all.clone();
    all[at] = new.clone();
    Some(Condition::All(AllOf { all }))
}

/// "Leave out “X”", in the person's language.
fn leave_out(language: Language, words: &[String]) -> String {
    let quoted = quoted(words);
    match language {
        Language::En => format!("Leave out {quoted}"),
        Language::De => format!("Ohne {quoted}"),
        Language::Fr => format!("Sans {quoted}"),
        Language::Es => format!("Sin {quoted}"),
    }
}

/// A field's label in `language` (its own label where it has none there).
fn field_label(f: &ProjectedField, language: Language) -> String {
    f.other_labels
        .iter()
        .find(|(l, _)| *l == language)
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| f.label.clone())
}

/// A picklist value's label in `language`.
fn value_label(f: &ProjectedField, value: &str, language: Language) -> String {
    f.other_value_labels
        .iter()
        .find(|(v, l, _)| v == value && *l == language)
        .map(|(_, _, t)| t.clone())
        .or_else(|| f.values.iter().find(|(v, _)| v == value).map(|(_, l)| l.clone()))
        .unwrap_or_else(|| value.to_string())
}

/// A comparison as the person reads it, in their language ("Phase ist Verhandlung", "Email is
/// blank"); `None` for what it does not say (the reading's own meaning is shown then).
fn said(c: &Condition, p: &Projection, object: &str, language: Language) -> Option<String> {
    let Condition::Compare(x) = c else { return None };
    let (_, f) = p.field(object, &x.field)?;
    let (is, is_not, set, blank) = match language {
        Language::En => ("is", "is not", "is set", "is blank"),
        Language::De => ("ist", "ist nicht", "ist angegeben", "ist leer"),
        Language::Fr => ("est", "n’est pas", "est renseigné", "est vide"),
        Language::Es => ("es", "no es", "está informado", "está vacío"),
    };
    let label = field_label(f, language);
    let value = |v: &Value| match v {
        Value::String(s) => value_label(f, s, language),
        other => other.to_string(),
    };
    Some(match (x.op, &x.value) {
        (Op::Eq, Some(v)) => format!("{label} {is} {}", value(v)),
        (Op::Ne, Some(v)) => format!("{label} {is_not} {}", value(v)),
        (Op::IsSet, _) => format!("{label} {set}"),
        (Op::IsBlank, _) => format!("{label} {blank}"),
        _ => return None,
    })
}

/// The spec with one more condition (AND), its field shown as a column.
fn with_condition(spec: &QuerySpec, c: Condition, p: &Projection) -> QuerySpec {
    let mut out = spec.clone();
    for f in c.fields() {
        let shown = p.field(&spec.object, f).is_some_and(|(_, x)| x.field_type != FieldType::Lookup);
        if shown && !out.fields.iter().any(|x| x == f) {
            out.fields.push(f.to_string());
        }
    }
    out.filters = Some(match out.filters.take() {
        None => c,
        Some(Condition::All(mut a)) => {
            a.all.push(c);
            Condition::All(a)
        }
        Some(other) => Condition::All(AllOf { all: vec![other, c] }),
    });
    out
}

/// The initials of a label ("Closed Won" → "cw").
fn initials(label: &[Token]) -> String {
    label.iter().filter_map(|w| w.lower.chars().next()).collect()
}

/// Whether an unplaced word could be a shortened or misspelt form of a label's words: a prefix
/// of one of them ("neg" for Negotiation), its initials ("cw", "CWs"), or two edits from one.
fn near(word: &Token, label: &[Token]) -> bool {
    let w = word.lower.as_str();
    let letters = w.chars().count();
    if letters < 2 || !w.chars().all(char::is_alphabetic) {
        return false;
    }
    let singular = w.strip_suffix('s').unwrap_or(w);
    let acronym = label.len() > 1 && (initials(label) == w || initials(label) == singular);
    let prefix = letters >= 3 && label.iter().any(|l| l.lower.starts_with(w) && l.lower != w);
    let typo = letters >= 5
        && label
            .iter()
            .any(|l| l.lower.chars().count() >= 5 && strsim::damerau_levenshtein(w, &l.lower) <= 2);
    acronym || prefix || typo
}

impl Session<'_> {
    /// The clarification for a plan whose answer leaves words of the question unused, if any.
    pub(super) fn clarification(
        &self,
        reading: &Reading,
        p: &Projection,
        spec: &QuerySpec,
        read: &[ReadCondition],
        unused: &[String],
    ) -> Option<Clarification> {
        if unused.is_empty() {
            return None;
        }
        let language = self.locale().language();
        let t = &reading.tokens;
        let unused_words: Vec<Token> = unused.iter().flat_map(|u| tokens(u)).collect();
        let unused_at: Vec<usize> =
            (0..t.len()).filter(|&i| unused_words.iter().any(|u| u.lower == t[i].lower)).collect();
        let mut options: Vec<ClarifyOption> = vec![];
        let push = |options: &mut Vec<ClarifyOption>, o: ClarifyOption| {
            if options.len() < MAX_OPTIONS && !options.iter().any(|x| x.spec == o.spec) {
                options.push(o);
            }
        };
        // An option for `word` that adds `c`, said in the person's language (else `fallback`).
        let option = |word: &Token, c: Condition, fallback: &str| ClarifyOption {
            label: said(&c, p, &spec.object, language).unwrap_or_else(|| fallback.to_string()),
            words: word.text.clone(),
            spec: with_condition(spec, c, p),
        };
        // Readings of those words the answer did not choose (another field, a parent's).
        for c in reading.candidates.iter().filter(|c| c.span.iter().any(|i| unused_at.contains(i))) {
            let chosen = read.iter().any(|r| r.id == c.id && r.chosen);
            let Some(on) = c.on(p, &spec.object).filter(|_| !chosen) else { continue };
            let label = said(&on, p, &spec.object, language).unwrap_or_else(|| c.meaning.clone());
            push(
                &mut options,
                ClarifyOption { label, words: c.words.clone(), spec: with_condition(spec, on, p) },
            );
        }
        // Values and fields the words could be a short, plural or misspelt form of, in any of
        // their languages.
        if let Some(o) = p.object(&spec.object) {
            for word in &unused_words {
                for f in &o.fields {
                    for (value, label) in &f.values {
                        let mut labels = vec![label];
                        labels.extend(
                            f.other_value_labels.iter().filter(|(v, _, _)| v == value).map(|(_, _, l)| l),
                        );
                        if labels.into_iter().any(|l| near(word, &tokens(l))) {
                            let c = Condition::compare(&f.key, Op::Eq, Value::String(value.clone()));
                            push(&mut options, option(word, c, label));
                        }
                    }
                    let names = tokens(&f.label);
                    let says_field = names.iter().any(|l| l.stem == word.stem && l.lower.len() > 2)
                        || (names.len() > 1 && near(word, &names));
                    if says_field && f.field_type != FieldType::Boolean {
                        for op in [Op::IsSet, Op::IsBlank] {
                            let c = Condition::unary(&f.key, op);
                            push(&mut options, option(word, c, &f.label));
                        }
                    }
                }
            }
        }
        // Running it without those words is a choice the person makes, never the answer; and
        // never every row because nothing matched.
        if let Some(filters) = &spec.filters {
            // What stays, in words, where the kernel can say it ("Department is Sales").
            let members: Vec<&Condition> = match filters {
                Condition::All(a) => a.all.iter().collect(),
                other => vec![other],
            };
            let kept: Vec<String> =
                members.iter().filter_map(|c| said(c, p, &spec.object, language)).collect();
            let label = if kept.is_empty() {
                leave_out(language, unused)
            } else {
                format!("{}: {}", leave_out(language, unused), kept.join(", "))
            };
            push(&mut options, ClarifyOption { label, words: String::new(), spec: spec.clone() });
        }
        Some(Clarification { words: unused.to_vec(), message: message(language, unused), options })
    }
}

impl Session<'_> {
    /// The clarification for an answer that finds nothing while another reading of the same
    /// words finds records ("over 10000": a quantity, a unit price, an amount): those readings,
    /// each a spec to run. `None` when no other reading finds anything either (then nothing
    /// found is the answer).
    pub(super) fn read_otherwise(
        &self,
        reading: &Reading,
        p: &Projection,
        spec: &QuerySpec,
        read: &[ReadCondition],
    ) -> Result<Option<Clarification>> {
        let Some(filters) = &spec.filters else { return Ok(None) };
        let language = self.locale().language();
        let (mut options, mut words): (Vec<ClarifyOption>, Vec<String>) = (vec![], vec![]);
        for chosen in read.iter().filter(|r| r.chosen) {
            let (Some(condition), Some(c)) =
                (&chosen.condition, reading.candidates.iter().find(|c| c.id == chosen.id))
            else {
                continue;
            };
            let others = reading.candidates.iter().filter(|o| {
                o.id != c.id
                    && o.span.iter().any(|i| c.span.contains(i))
                    && !read.iter().any(|r| r.id == o.id && r.chosen)
            });
            for other in others {
                let Some(on) = other.on(p, &spec.object) else { continue };
                let Some(swapped) = replaced(filters, condition, &on) else { continue };
                let alternative = with_condition(&QuerySpec { filters: None, ..spec.clone() }, swapped, p);
                let probe = QuerySpec { limit: Some(1), ..alternative.clone() };
                if self.query(&probe)?.records.is_empty() || options.iter().any(|o| o.spec == alternative) {
                    continue;
                }
                let label = said(&on, p, &spec.object, language).unwrap_or_else(|| other.meaning.clone());
                if options.len() < MAX_OPTIONS {
                    options.push(ClarifyOption { label, words: other.words.clone(), spec: alternative });
                }
                if !words.contains(&c.words) {
                    words.push(c.words.clone());
                }
            }
        }
        if options.is_empty() {
            return Ok(None);
        }
        Ok(Some(Clarification { message: read_otherwise(language, &words), words, options }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_plural_and_misspelt_forms_are_near_a_label() {
        let label = tokens("Closed Won");
        assert!(near(&tokens("cw")[0], &label));
        assert!(near(&tokens("CWs")[0], &label));
        assert!(near(&tokens("neg")[0], &tokens("Negotiation")));
        assert!(near(&tokens("negociation")[0], &tokens("Negotiation")));
        assert!(!near(&tokens("lyon")[0], &tokens("Negotiation")));
        assert!(!near(&tokens("a")[0], &tokens("Accepted")));
    }
}
