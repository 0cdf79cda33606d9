//! E-mail (`.eml`): the headers, then the body — the text parts, or the HTML parts read as
//! HTML (tables as rows) when there is no text part or the text part is a stub beside them —
//! then each attachment in a format Countersign reads (PDF, DOCX, HTML, text, Markdown) under an
//! `Attachment: <name>` line. An attachment that cannot be read (another format, damaged, an
//! e-mail inside the e-mail) is listed with the reason, and the rest of the message still reads.

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
    // Only parts that are text (mail-parser also offers an HTML-only message's HTML as text,
    // its table cells run together).
    let plain: Vec<String> = msg
        .text_body
        .iter()
        .filter_map(|id| msg.parts.get(*id as usize))
        .filter_map(|p| match &p.body {
            mail_parser::PartType::Text(t) => Some(t.to_string()),
            _ => None,
        })
        .collect();
    // Only parts that are HTML (mail-parser also offers a text part converted to HTML).
    let html: Vec<String> = msg
        .html_body
        .iter()
        .filter_map(|id| msg.parts.get(*id as usize))
        .filter_map(|p| match &p.body {
            mail_parser::PartType::Html(h) => Some(html_paragraphs(h).join("\n")),
            _ => None,
        })
        .collect();
    let length = |parts: &[String]| parts.iter().map(|p| p.trim().chars().count()).sum::<usize>();
    // "Please see the HTML version" beside the real message: the HTML is the message.
    let parts = if !html.is_empty() && length(&plain) * 2 < length(&html) { html } else { plain };
    for part in &parts {
        body(b, part)?;
    }
    let mut unread = vec![];
    for a in msg.attachments().take(1000) {
        let name = mail_parser::MimeHeaders::attachment_name(a).unwrap_or("(unnamed)").to_string();
        let bytes = a.contents();
        let kind = match super::detect(&name, bytes) {
            Ok(DocumentKind::Email) => Err("an e-mail inside an e-mail is not read".to_string()),
            Ok(kind) => Ok(kind),
            Err(e) => Err(e.message),
        };
        let read = kind.and_then(|kind| {
            b.blank_line();
            b.push(&format!("Attachment: {name}"), Location::Header { name: "attachment".into() })
                .and_then(|_| {
                    // A parser that panics on this attachment loses the attachment, not the
                    // message (the read's own guard would end the whole document).
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        super::read_into(b, kind, bytes)
                    }))
                    .unwrap_or_else(|_| Err(invalid(name.as_str(), "its parser failed")))
                })
                .map_err(|e| e.message)
        });
        if let Err(why) = read {
            unread.push(format!("{name} (not read: {why})"));
        }
    }
    b.attachments = unread;
    Ok(())
}
