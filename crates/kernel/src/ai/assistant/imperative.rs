//! A change of the conversation's record said in full, read by the kernel before any model is
//! asked: "Mark it as closed won", "set this one to negotiation", "Setze es auf Verhandlung",
//! "Passe-la en négociation", "Márcala como ganada". A verb of change and a word for "it" open
//! the message, and every other word is one value of a picklist field the user may edit on
//! that record, as Ask's reader reads values (labels in each language, stems, initials). Then
//! the step is that proposal, checked like a model's action; anything else is the model's to
//! choose (a small model writes such a message back as a "reply", or asks again).

use super::*;
use crate::metadata::types::{Comparison, Condition, Op};

/// Verbs that ask to change a record, in the four languages the reader reads.
const VERBS: &[&str] = &[
    "mark",
    "set",
    "change",
    "move",
    "update",
    "make",
    "put",
    "switch",
    "flag",
    "markiere",
    "markier",
    "setze",
    "setz",
    "ändere",
    "änder",
    "stelle",
    "stell",
    "verschiebe",
    "marque",
    "marquer",
    "passe",
    "passer",
    "mets",
    "mettre",
    "changer",
    "marca",
    "marcar",
    "cambia",
    "cambiar",
    "pon",
    "poner",
    "pasa",
    "pasar",
    "mueve",
    "mover",
];

/// Words for the record the conversation is about, and the ones that link it to its value.
const POINTERS: &[&str] = &[
    "it",
    "this",
    "that",
    "one",
    "es",
    "sie",
    "ihn",
    "das",
    "le",
    "la",
    "l",
    "lo",
    "márcala",
    "márcalo",
    "ponla",
    "ponlo",
    "cámbiala",
    "cámbialo",
];
const LINKS: &[&str] = &["as", "to", "into", "als", "auf", "zu", "in", "en", "comme", "à", "a", "como"];

/// The `propose_update` the message says in full of the conversation's record, if it does.
pub(super) fn read_update(session: &Session<'_>, scope: &Scope, message: &str) -> Option<Value> {
    if message.contains('?') {
        return None;
    }
    let focus = scope.state.focus.as_ref()?;
    let t = ask::reader::tokens(message);
    let (mut verb, mut pointer) = (false, false);
    let mut at = 0;
    while let Some(w) = t.get(at).map(|w| w.lower.as_str()) {
        if VERBS.contains(&w) && !verb {
            verb = true;
        } else if POINTERS.contains(&w) {
            pointer = true;
        } else if !(verb && LINKS.contains(&w)) {
            break;
        }
        at += 1;
    }
    if !verb || !pointer || at == t.len() {
        return None;
    }
    let reading =
        session.read_question(message, &scope.projection, std::slice::from_ref(&focus.object)).ok()?;
    let object = scope.projection.object(&focus.object)?;
    let rest: Vec<usize> = (at..t.len()).collect();
    // The readings that say exactly the rest of the message: a value of an editable picklist.
    let mut changes: Vec<(String, Value)> = reading
        .candidates
        .iter()
        .filter(|c| !c.negated && c.object.as_deref() == Some(&focus.object) && c.span == rest)
        .filter_map(|c| {
            // One value: `eq`, or a term's `in` of one ("closed won": the won category).
            let (field, value) = match &c.condition {
                Condition::Compare(Comparison { field, op: Op::Eq, value: Some(v), .. }) => {
                    (field, v.clone())
                }
                Condition::Compare(Comparison {
                    field, op: Op::In, value: Some(Value::Array(vs)), ..
                }) if vs.len() == 1 => (field, vs[0].clone()),
                _ => return None,
            };
            let f = object.fields.iter().find(|f| &f.key == field)?;
            (f.field_type == FieldType::Picklist && f.access == FieldLevel::Edit)
                .then(|| (field.clone(), value))
        })
        .collect();
    changes.dedup();
    // One value of one field, or it is the model's to choose among them.
    let [(field, value)] = changes.as_slice() else { return None };
    Some(json!({
        "action": "propose_update",
        "object": focus.object,
        "record": {"focus": true},
        "changes": {field.clone(): value.clone()},
    }))
}
