//! vCard files (`.vcf`, versions 2.1, 3.0 and 4.0) as a table: one row per card, with the
//! columns a contact list has — Full Name, First Name, Last Name, Organization, Title, Email,
//! Phone, Mobile Phone, Website, City, Country, Birthday, Note. A card's first e-mail, phone and
//! address fill them (a preferred one first). Folded lines are unfolded, escapes undone and
//! quoted-printable values (2.1) decoded; properties this table has no column for are left out.

use super::table::Table;
use crate::error::{Code, Error, Result};

pub(super) const COLUMNS: [&str; 13] = [
    "Full Name",
    "First Name",
    "Last Name",
    "Organization",
    "Title",
    "Email",
    "Phone",
    "Mobile Phone",
    "Website",
    "City",
    "Country",
    "Birthday",
    "Note",
];

pub(super) fn read(bytes: &[u8]) -> Result<Table<'static>> {
    let text = String::from_utf8_lossy(bytes);
    let mut rows = Vec::new();
    let mut card: Option<(u64, Card)> = None;
    for (line_no, line) in unfold(&text) {
        let Some((name_params, value)) = line.split_once(':') else { continue };
        let mut parts = name_params.split(';');
        let name =
            parts.next().unwrap_or_default().rsplit('.').next().unwrap_or_default().to_ascii_uppercase();
        let params: Vec<String> = parts.map(|p| p.to_ascii_uppercase()).collect();
        match name.as_str() {
            "BEGIN" if value.trim().eq_ignore_ascii_case("VCARD") => card = Some((line_no, Card::default())),
            "END" if value.trim().eq_ignore_ascii_case("VCARD") => {
                if let Some((start, c)) = card.take() {
                    rows.push((start, c.cells()));
                }
            }
            _ => {
                if let Some((_, c)) = card.as_mut() {
                    let value = decode(value, &params);
                    c.take(&name, &params, value);
                }
            }
        }
    }
    if rows.is_empty() {
        return Err(Error::new(Code::InvalidCsv, "the file holds no vCard (BEGIN:VCARD … END:VCARD)"));
    }
    Ok(Table::of_rows(COLUMNS.iter().map(|c| c.to_string()).collect(), rows))
}

#[derive(Default)]
struct Card {
    full_name: String,
    first: String,
    last: String,
    org: String,
    title: String,
    email: Option<(bool, String)>,
    phone: Option<(bool, String)>,
    mobile: String,
    url: String,
    city: String,
    country: String,
    birthday: String,
    note: String,
}

impl Card {
    fn take(&mut self, name: &str, params: &[String], value: String) {
        let preferred = params.iter().any(|p| p.contains("PREF"));
        let keep = |slot: &mut Option<(bool, String)>, value: String| {
            if slot.as_ref().is_none_or(|(pref, _)| preferred && !pref) && !value.is_empty() {
                *slot = Some((preferred, value));
            }
        };
        match name {
            "FN" => self.full_name = unescape(&value),
            "N" => {
                let parts = components(&value);
                self.last = parts.first().cloned().unwrap_or_default();
                self.first = parts.get(1).cloned().unwrap_or_default();
            }
            "ORG" => self.org = components(&value).into_iter().next().unwrap_or_default(),
            "TITLE" => self.title = unescape(&value),
            "EMAIL" => keep(&mut self.email, unescape(&value)),
            "TEL" if params.iter().any(|p| p.contains("CELL")) && self.mobile.is_empty() => {
                self.mobile = unescape(&value).trim_start_matches("tel:").to_string();
            }
            "TEL" => keep(&mut self.phone, unescape(&value).trim_start_matches("tel:").to_string()),
            "URL" if self.url.is_empty() => self.url = unescape(&value),
            "ADR" if self.city.is_empty() => {
                // post office box; extended; street; locality; region; postal code; country
                let parts = components(&value);
                self.city = parts.get(3).cloned().unwrap_or_default();
                self.country = parts.get(6).cloned().unwrap_or_default();
            }
            "BDAY" => self.birthday = birthday(&value),
            "NOTE" => self.note = unescape(&value),
            _ => {}
        }
    }

    fn cells(self) -> Vec<String> {
        let full = if self.full_name.is_empty() {
            format!("{} {}", self.first, self.last).trim().to_string()
        } else {
            self.full_name
        };
        // A phone-only contact's mobile number is their phone.
        let (phone, mobile) = match self.phone {
            Some((_, p)) => (p, self.mobile),
            None => (self.mobile, String::new()),
        };
        vec![
            full,
            self.first,
            self.last,
            self.org,
            self.title,
            self.email.map(|(_, e)| e).unwrap_or_default(),
            phone,
            mobile,
            self.url,
            self.city,
            self.country,
            self.birthday,
            self.note,
        ]
    }
}

/// Lines with their continuations (a line starting with a space or tab) joined, each with the
/// 1-based line it started on. A 2.1 quoted-printable soft break (`=` at the end) joins too.
fn unfold(text: &str) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = Vec::new();
    let mut soft = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if let (Some(last), true) = (out.last_mut(), line.starts_with([' ', '\t'])) {
            last.1.push_str(&line[1..]);
        } else if let (Some(last), true) = (out.last_mut(), soft) {
            last.1.push_str(line);
        } else {
            out.push((i as u64 + 1, line.to_string()));
        }
        soft = out
            .last()
            .is_some_and(|(_, l)| l.to_ascii_uppercase().contains("QUOTED-PRINTABLE") && l.ends_with('='));
        if soft {
            if let Some(last) = out.last_mut() {
                last.1.pop();
            }
        }
    }
    out
}

fn decode(value: &str, params: &[String]) -> String {
    if params.iter().any(|p| p.contains("QUOTED-PRINTABLE")) {
        let bytes = value.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'=' && i + 2 < bytes.len() {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                if let Ok(b) = u8::from_str_radix(hex, 16) {
                    out.push(b);
                    i += 3;
                    continue;
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    } else {
        value.to_string()
    }
}

/// `\,` `\;` `\n` `\\` undone.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') | Some('N') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// A structured value's components (split on unescaped `;`), each unescaped.
fn components(v: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in v.chars() {
        if escaped {
            cur.push('\\');
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ';' {
            parts.push(unescape(&cur));
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    parts.push(unescape(&cur));
    parts
}

/// `19850412`, `1985-04-12` or `--0412` (no year: left out, a date needs one).
fn birthday(v: &str) -> String {
    let v = v.trim();
    if v.len() == 8 && v.chars().all(|c| c.is_ascii_digit()) {
        format!("{}-{}-{}", &v[..4], &v[4..6], &v[6..])
    } else if v.starts_with("--") {
        String::new()
    } else {
        v.chars().take(10).collect()
    }
}
