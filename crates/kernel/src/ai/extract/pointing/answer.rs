//! The model's answer read: checked against the request's offers, each value taken from its
//! span and coerced by the save path's rules, the table's rows read into child records, and
//! every value rated by its evidence.

use super::*;

/// What version 2's answer becomes.
pub struct Read {
    pub patch: Vec<ProposedField>,
    pub children: Vec<ProposedChild>,
    pub unmapped: Vec<Value>,
}

/// A value read for `field` (of a new record: no before), rated later.
pub(super) fn proposed(field: &str, value: Value, source: Option<SourceSpan>) -> ProposedField {
    ProposedField {
        field: field.to_string(),
        value,
        before: Value::Null,
        confidence: None,
        source,
        problem: None,
        candidates: vec![],
    }
}

pub(super) fn span(doc: &Document, a: usize, b: usize) -> SourceSpan {
    SourceSpan { start: a, end: b, text: doc.text[a..b].to_string(), location: doc.locate(a).cloned() }
}

impl Pointing {
    /// The kernel's check of an answer the schema let through: every id is one offered for
    /// its field (a date's id for an amount field is refused even if a server ignored the
    /// schema). `Err` is the problem the repair turn states.
    pub fn check(&self, answer: &Map<String, Value>) -> std::result::Result<(), String> {
        for (key, v) in answer {
            let Some(Value::Array(allowed)) = self.offered.get(key) else {
                if v.is_null() {
                    continue;
                }
                return Err(format!("`{key}` is not a listed field"));
            };
            let is_id =
                |s: &str| self.reading.get(s).is_some() || self.reading.tables.iter().any(|t| t.id == s);
            match v {
                Value::Null => {}
                _ if allowed.contains(v) => {}
                Value::String(s) if is_id(s) => {
                    let kind = self.reading.get(s).map(|c| c.kind);
                    return Err(format!(
                        "`{s}` is {} and cannot fill `{key}`; choose one of {}",
                        match kind {
                            Some(k) => format!("a {k:?} candidate").to_lowercase(),
                            None => "a table".into(),
                        },
                        allowed.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
                    ));
                }
                // Free text for a text field that is not an identifier: checked against the
                // document when it is read.
                Value::String(_) if self.free_text.contains(key) => {}
                other => {
                    return Err(format!(
                        "`{key}` cannot be {other}; choose one of {} or null",
                        allowed.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")
                    ))
                }
            }
        }
        Ok(())
    }

    /// Turn a checked answer into the patch, the child rows and the unmapped values.
    pub fn read_answer(
        &self,
        s: &Session<'_>,
        object: &ObjectMeta,
        fields: &[&FieldDef],
        doc: &Document,
        answer: &Map<String, Value>,
    ) -> Result<Read> {
        let mut patch: Vec<ProposedField> = vec![];
        let mut unmapped: Vec<Value> = vec![];
        let claimed: Vec<&str> = answer.values().filter_map(Value::as_str).collect();
        for f in fields {
            let Some(v) = answer.get(&f.key).filter(|v| !v.is_null()) else { continue };
            let candidate = v
                .as_str()
                .and_then(|id| self.reading.get(id))
                .filter(|c| kinds_for(f.field_type).contains(&c.kind));
            let mut pf = proposed(&f.key, v.clone(), None);
            let mut evidence = Evidence::default();
            match candidate {
                Some(c) => {
                    pf.source = Some(span(doc, c.start, c.end));
                    let words = telling_words(f, object);
                    evidence.labelled = names(&c.label, &words) || identifier_names(c, f);
                    evidence.labelled_other = fields.iter().any(|o| {
                        o.key != f.key
                            && kinds_for(o.field_type).contains(&c.kind)
                            && (names(&c.label, &telling_words(o, object)) || identifier_names(c, o))
                    });
                    evidence.rivals = self
                        .reading
                        .candidates
                        .iter()
                        .filter(|o| {
                            o.cell.is_none() && o.kind == c.kind && o.id != c.id && o.target == c.target
                        })
                        .filter(|o| !claimed.contains(&o.id.as_str()))
                        .count();
                    evidence.ambiguous = c.ambiguous;
                    if f.field_type == FieldType::Lookup {
                        match c.records.as_slice() {
                            [] => {
                                unmapped.push(json!({"field": f.key, "value": c.value, "source": pf.source,
                                    "reason": format!("no {} you can read is called “{}”", f.target.as_deref().unwrap_or_default(), c.value)}));
                                continue;
                            }
                            [one] => pf.value = Value::String(one.id.clone()),
                            many => {
                                pf.value = Value::String(c.value.clone());
                                pf.problem = Some(format!(
                                    "“{}” matches several records: {}; choose one",
                                    c.value,
                                    many.iter()
                                        .map(|m| format!("{} ({})", m.name, m.id))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ));
                                pf.candidates = many.to_vec();
                            }
                        }
                    } else {
                        match crate::metadata::value::coerce(f, &Value::String(c.value.clone())) {
                            Ok(scalar) => pf.value = scalar.to_json(Some(f)),
                            Err(why) => {
                                unmapped.push(json!({"field": f.key, "value": c.value, "source": pf.source, "reason": why}));
                                continue;
                            }
                        }
                    }
                }
                None => {
                    // A picklist value or free text: it must be stated outside the excluded lines.
                    let spots = crate::ai::extract::occurrences(&doc.text, f, v);
                    let Some((a, b)) =
                        spots.into_iter().find(|(a, b)| !self.excluded.iter().any(|(s, e)| a >= s && b <= e))
                    else {
                        unmapped.push(json!({"field": f.key, "value": v,
                            "reason": "the document does not state this value; it was not proposed"}));
                        continue;
                    };
                    pf.source = Some(span(doc, a, b));
                    if let Err(why) = crate::metadata::value::coerce(f, v) {
                        unmapped
                            .push(json!({"field": f.key, "value": v, "source": pf.source, "reason": why}));
                        continue;
                    }
                    let line = doc.text[..a].rfind('\n').map_or(0, |i| i + 1);
                    evidence.labelled = names(
                        &candidates::label_before(&doc.text[line..], a - line),
                        &telling_words(f, object),
                    );
                }
            }
            pf.confidence = Some(evidence.confidence());
            patch.push(pf);
        }
        // One table reads as the record's rows and the model chose none: nothing is left to
        // choose, so the kernel takes it (the reviewer still accepts row by row).
        let only = match self.row_tables.as_slice() {
            [one] => Some(self.reading.tables[one.table].id.as_str()),
            _ => None,
        };
        let chosen = answer.get(ROWS_KEY).and_then(Value::as_str).or(only);
        let children = match chosen {
            Some(id) => self.rows(s, object, doc, id),
            None => vec![],
        };
        if self.rows_asked {
            if let Some(child) = s.child_object(object.key()) {
                unmapped.extend(self.missed(&child, doc, chosen, children.len()));
            }
        }
        if let Some(pf) = self.stated_currency(object, fields, doc, answer, &patch) {
            patch.push(pf);
        }
        unmapped.extend(self.stated_twice(object, fields, doc, answer, &mut patch));
        self.agree(fields, &mut patch, &children, answer);
        Ok(Read { patch, children, unmapped })
    }

    /// A value the document states twice with different figures ("Total due: 1,250.00" above,
    /// "Amount enclosed: 1,205.00" on the slip): each other writing whose label names the same
    /// field is told to the reviewer next to it, and the value is no more than uncertain. The
    /// kernel does not choose between them.
    fn stated_twice(
        &self,
        object: &ObjectMeta,
        fields: &[&FieldDef],
        doc: &Document,
        answer: &Map<String, Value>,
        patch: &mut [ProposedField],
    ) -> Vec<Value> {
        let mut out = vec![];
        for pf in patch.iter_mut() {
            let Some(f) = fields.iter().find(|f| f.key == pf.field) else { continue };
            let Some(c) = answer.get(&f.key).and_then(Value::as_str).and_then(|id| self.reading.get(id))
            else {
                continue;
            };
            if !matches!(c.kind, Kind::Amount | Kind::Date) {
                continue;
            }
            let words = telling_words(f, object);
            let same = |a: &str, b: &str| match (a.parse::<f64>(), b.parse::<f64>()) {
                (Ok(x), Ok(y)) => (x - y).abs() < 0.005,
                _ => a == b,
            };
            // The same label again, or one made only of the field's own words: "Total VAT" or
            // "Total net" beside "Total" are other figures, not the total stated twice.
            let chosen_label = crate::ai::projection::words(&c.label);
            let says_it = |label: &str| {
                let lw = crate::ai::projection::words(label);
                !lw.is_empty()
                    && (lw == chosen_label
                        || lw.iter().all(|l| words.iter().any(|w| l == w || abbreviates(l, w))))
            };
            for o in self.reading.candidates.iter().filter(|o| {
                o.kind == c.kind
                    && o.cell.is_none()
                    && o.id != c.id
                    && says_it(&o.label)
                    && !same(&o.value, &c.value)
            }) {
                let source = span(doc, o.start, o.end);
                out.push(json!({"field": f.key, "value": o.value, "source": source,
                    "reason": format!("the document also states “{}” for this field; check which is right",
                        doc.text[o.start..o.end].trim())}));
                pf.confidence = pf.confidence.map(|x| x.min(BANDS[2]));
            }
        }
        out
    }

    /// The record's currency when the model left it out and the document says it by its
    /// amounts: the amounts the answer points at carry one currency mark ("USD 100,000.00",
    /// "1.200,00 €") — or, pointing at none that carry one, every amount of the document carries
    /// the same — and the object's currency picklist holds it. The kernel reads a mark as it
    /// reads a number; two currencies, or none, leave the field to the reviewer.
    fn stated_currency(
        &self,
        object: &ObjectMeta,
        fields: &[&FieldDef],
        doc: &Document,
        answer: &Map<String, Value>,
        patch: &[ProposedField],
    ) -> Option<ProposedField> {
        let key = object.currency_field()?;
        let f = fields.iter().find(|f| f.key == key)?;
        if patch.iter().any(|p| p.field == key) || answer.get(key).is_some_and(|v| !v.is_null()) {
            return None;
        }
        let marked = |c: &&Candidate| c.kind == Kind::Amount && c.currency.is_some();
        let pointed: Vec<&Candidate> = answer
            .values()
            .filter_map(Value::as_str)
            .filter_map(|id| self.reading.get(id))
            .filter(marked)
            .collect();
        let from = if pointed.is_empty() {
            self.reading.candidates.iter().filter(marked).collect()
        } else {
            pointed
        };
        let first = from.first()?;
        let mark = first.currency.as_ref()?;
        if from.iter().any(|c| c.currency.as_ref().map(|m| &m.code) != Some(&mark.code)) {
            return None;
        }
        let value =
            crate::metadata::value::coerce(f, &Value::String(mark.code.clone())).ok()?.to_json(Some(f));
        let mut pf = proposed(key, value, Some(span(doc, mark.start, mark.end)));
        pf.confidence = Some(Evidence { rivals: 1, ..Evidence::default() }.confidence());
        Some(pf)
    }

    /// What the document holds that the proposal's rows leave out, told to the reviewer: the
    /// lines of the document outside the chosen table that hold two or more amounts, one of them
    /// money (a rate with `%` is not one; a page's "1 of 2" is no money), as a document's line
    /// items do — a table the reader could not read
    /// (columns joined by spaces, a layout, the half of a table after a page break) or one the
    /// model did not choose. Two such lines or more make a notice with where the first one is;
    /// one is a totals line as often as not. A proposal never looks complete when it is not.
    pub(super) fn missed(
        &self,
        child: &ChildObject<'_>,
        doc: &Document,
        chosen: Option<&str>,
        proposed: usize,
    ) -> Option<Value> {
        let table = chosen.and_then(|id| self.reading.tables.iter().find(|t| t.id == id));
        let inside = |at: usize| table.is_some_and(|t| t.rows.iter().any(|r| r.start <= at && at <= r.end));
        // Line start → (line end, amounts on it, whether one is money: decimals or a currency
        // mark — "Page 1 of 2" holds two numbers and no money).
        let mut lines: std::collections::BTreeMap<usize, (usize, usize, bool)> = Default::default();
        for c in self.reading.candidates.iter().filter(|c| c.kind == Kind::Amount && !inside(c.start)) {
            let rate =
                doc.text[c.start..c.end].contains('%') || doc.text[c.end..].trim_start().starts_with('%');
            if rate {
                continue;
            }
            let start = doc.text[..c.start].rfind('\n').map_or(0, |i| i + 1);
            let end = doc.text[c.end..].find('\n').map_or(doc.text.len(), |i| c.end + i);
            let line = lines.entry(start).or_insert((end, 0, false));
            line.1 += 1;
            line.2 |= c.value.contains('.') || c.currency.is_some();
        }
        let missed: Vec<(usize, usize)> = lines
            .iter()
            .filter(|(_, (_, n, money))| *n >= 2 && *money)
            .map(|(a, (b, _, _))| (*a, *b))
            .collect();
        if missed.len() < 2 {
            return None;
        }
        let plural = child.meta.def.plural_label.to_lowercase();
        let (a, b) = missed[0];
        Some(json!({
            // Not a field of the record (a reader's view keeps only readable fields): the
            // child object, by key and by the label the reviewer reads.
            "rows": child.meta.key(),
            "label": child.meta.def.plural_label,
            "value": format!("{} more lines", missed.len()),
            "source": span(doc, a, b),
            "reason": format!(
                "{} lines of the document hold two or more amounts, as {plural} do, but are not among the {proposed} proposed (the first: “{}”); check them against the document",
                missed.len(),
                doc.text[a..b].split_whitespace().collect::<Vec<_>>().join(" ").chars().take(80).collect::<String>(),
            ),
            "missed_lines": missed.len(),
        }))
    }

    /// The rows of the chosen table as child records: each mapped column's value read from its
    /// cell by the field's type; a text field no column names takes the one identifier in the
    /// row (a product code in brackets), which then leaves the text it sat in.
    pub(super) fn rows(
        &self,
        s: &Session<'_>,
        parent: &ObjectMeta,
        doc: &Document,
        id: &str,
    ) -> Vec<ProposedChild> {
        let Some(child) = s.child_object(parent.key()) else { return vec![] };
        let Some(rt) = self.row_tables.iter().find(|r| self.reading.tables[r.table].id == id) else {
            return vec![];
        };
        let table = &self.reading.tables[rt.table];
        let spare: Vec<&&FieldDef> = child
            .fields
            .iter()
            .filter(|f| f.field_type == FieldType::Text && !rt.columns.iter().any(|(k, _)| k == &f.key))
            .collect();
        let mut out = vec![];
        for (r, row) in table.rows.iter().enumerate() {
            let in_cell =
                |k: usize| self.reading.candidates.iter().filter(move |c| c.cell == Some((rt.table, r, k)));
            let mut fields: Vec<ProposedField> = vec![];
            let mut spare_taken: Option<&Candidate> = None;
            if let [code] = spare.as_slice() {
                let ids: Vec<&Candidate> = (0..row.cells.len())
                    .flat_map(in_cell)
                    .filter(|c| c.kind == Kind::Identifier)
                    .filter(|c| {
                        rt.columns.iter().any(|(k, col)| {
                            c.cell.map(|x| x.2) == Some(*col)
                                && child.fields.iter().any(|f| &f.key == k && f.field_type == FieldType::Text)
                        })
                    })
                    .collect();
                if let [one] = ids.as_slice() {
                    spare_taken = Some(one);
                    fields.push(proposed(
                        &code.key,
                        Value::String(one.value.clone()),
                        Some(span(doc, one.start, one.end)),
                    ));
                }
            }
            for (key, col) in &rt.columns {
                let Some(f) = child.fields.iter().find(|f| &f.key == key) else { continue };
                let (a, b) = row.cells[*col];
                let kinds = kinds_for(f.field_type);
                let (value, at) = if f.field_type == FieldType::Text {
                    let mut text = doc.text[a..b].to_string();
                    if let Some(c) = spare_taken.filter(|c| c.cell.map(|x| x.2) == Some(*col)) {
                        let (ca, cb) = (c.start - a, c.end - a);
                        let open = text[..ca].trim_end().ends_with(['(', '[']);
                        let from = if open { text[..ca].trim_end().len() - 1 } else { ca };
                        let close = text[cb..].trim_start().starts_with([')', ']']);
                        let to = if close {
                            cb + (text[cb..].len() - text[cb..].trim_start().len()) + 1
                        } else {
                            cb
                        };
                        text.replace_range(from..to, "");
                    }
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    (Value::String(text), (a, b))
                } else {
                    let found: Vec<&Candidate> = in_cell(*col).filter(|c| kinds.contains(&c.kind)).collect();
                    match found.as_slice() {
                        [one] => (Value::String(one.value.clone()), (one.start, one.end)),
                        _ => (Value::String(doc.text[a..b].trim().to_string()), (a, b)),
                    }
                };
                let mut pf = proposed(key, value.clone(), Some(span(doc, at.0, at.1)));
                match crate::metadata::value::coerce(f, &value) {
                    Ok(v) => pf.value = v.to_json(Some(f)),
                    Err(why) => pf.problem = Some(why),
                }
                fields.push(pf);
            }
            // A row's own check: a number times one amount is the other (quantity × price =
            // amount), when the row has one number and two amounts.
            let number = |ty: FieldType| -> Vec<(usize, f64)> {
                fields
                    .iter()
                    .enumerate()
                    .filter(|(_, pf)| child.fields.iter().any(|f| f.key == pf.field && f.field_type == ty))
                    .filter_map(|(i, pf)| Some((i, pf.value.as_f64()?)))
                    .collect()
            };
            let (numbers, money) = (number(FieldType::Number), number(FieldType::Currency));
            let agrees = match (numbers.as_slice(), money.as_slice()) {
                ([(_, q)], [(_, p), (_, t)]) => {
                    Some(((q * p) - t).abs() < 0.005 || ((q * t) - p).abs() < 0.005)
                }
                _ => None,
            };
            for pf in &mut fields {
                let e = Evidence {
                    labelled: true,
                    rivals: 0,
                    agrees: if pf.problem.is_some() { Some(false) } else { agrees },
                    ..Default::default()
                };
                pf.confidence = Some(e.confidence());
            }
            out.push(ProposedChild {
                object: child.meta.key().to_string(),
                parent_field: child.parent_field.clone(),
                fields,
                source: Some(span(doc, row.start, row.end)),
                record_id: None,
                result_version: None,
            });
        }
        out
    }

    /// Second readings: the rows' amounts summing to a total, the total's currency written
    /// beside it. Each agreement raises the field's confidence, a disagreement lowers it.
    pub(super) fn agree(
        &self,
        fields: &[&FieldDef],
        patch: &mut [ProposedField],
        children: &[ProposedChild],
        answer: &Map<String, Value>,
    ) {
        let kind_of = |key: &str| fields.iter().find(|f| f.key == key).map(|f| f.field_type);
        // Each row's largest amount is its total (an amount is at least its unit price).
        let row_sum: Option<f64> = (!children.is_empty())
            .then(|| {
                children
                    .iter()
                    .map(|c| {
                        c.fields
                            .iter()
                            .filter(|f| f.source.is_some() && f.value.is_number())
                            .filter_map(|f| f.value.as_f64())
                            .reduce(f64::max)
                    })
                    .sum::<Option<f64>>()
            })
            .flatten();
        let currencies: Vec<String> = answer
            .values()
            .filter_map(Value::as_str)
            .filter_map(|id| self.reading.get(id))
            .filter_map(|c| c.currency.as_ref().map(|m| m.code.clone()))
            .collect();
        for pf in patch.iter_mut() {
            let Some(c) = pf.confidence else { continue };
            let agrees = match kind_of(&pf.field) {
                Some(FieldType::Currency) => {
                    row_sum.map(|s| pf.value.as_f64().is_some_and(|v| (v - s).abs() < 0.005))
                }
                Some(FieldType::Picklist) if !currencies.is_empty() => {
                    pf.value.as_str().map(|v| currencies.iter().any(|c| c == v))
                }
                _ => None,
            };
            let step = |up: bool| {
                let i = BANDS.iter().position(|b| *b >= c).unwrap_or(0) as i32 + if up { 2 } else { -2 };
                BANDS[i.clamp(0, BANDS.len() as i32 - 1) as usize]
            };
            if let Some(up) = agrees {
                pf.confidence = Some(step(up));
            }
        }
    }
}
