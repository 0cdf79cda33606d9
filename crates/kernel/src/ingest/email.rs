//! E-mail (`.eml`): the headers, then the text parts (else the HTML parts as text);
//! attachments are listed, not read.

use super::*;

pub(super) fn email(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let name = b.name;
    let msg = mail_parser::MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| invalid(name, "it is not an e-mail message"))?;
    let header = |b: &mut Builder, label: &str, value: Option<String>| -> Result<()> {
        match value.filter(|v| !v.is_empty()) {
            Some(v) => {
                b.push(&format!("{label}: {v}"), Location::Header { name: label.to_ascii_lowercase() })
            }
            None => Ok(()),
        }
    };
    let addr = |a: Option<&mail_parser::Address>| {
        a.map(|a| {
            a.iter()
                .take(100)
                .map(|x| match (x.name(), x.address()) {
                    (Some(n), Some(e)) => format!("{n} <{e}>"),
                    (None, Some(e)) => e.to_string(),
                    (Some(n), None) => n.to_string(),
                    (None, None) => String::new(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    header(b, "From", addr(msg.from()))?;
    header(b, "To", addr(msg.to()))?;
    header(b, "Date", msg.date().map(|d| d.to_rfc3339()))?;
    header(b, "Subject", msg.subject().map(String::from))?;
    let mut line = 0u32;
    let mut body = |b: &mut Builder, text: &str| -> Result<()> {
        b.blank_line();
        for l in text.lines() {
            line += 1;
            b.push(l.trim_end_matches('\r'), Location::Line { n: line })?;
        }
        Ok(())
    };
    if msg.text_body_count() > 0 {
        for i in 0..msg.text_body_count() {
            if let Some(t) = msg.body_text(i) {
                body(b, &t)?;
            }
        }
    } else {
        for i in 0..msg.html_body_count() {
            if let Some(h) = msg.body_html(i) {
                body(b, &html_paragraphs(&h).join("\n"))?;
            }
        }
    }
    b.attachments = msg
        .attachments()
        .take(1000)
        .map(|a| mail_parser::MimeHeaders::attachment_name(a).unwrap_or("(unnamed)").to_string())
        .collect();
    Ok(())
}
