//! HTML → paragraphs of text.

use super::*;

/// HTML → paragraphs of text: block elements and `<br>` end a paragraph; `script`, `style`,
/// `head` and comments are dropped; entities decoded; whitespace collapsed. Runs of empty
/// paragraphs are kept as one (they separate blocks).
pub fn html_paragraphs(html: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let _ = html_walk(
        html,
        &mut |p| {
            if !(p.is_empty() && out.last().is_none_or(String::is_empty)) {
                out.push(p);
            }
            Ok(())
        },
        &mut || Ok(()),
    );
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

/// The HTML walk behind [`html_paragraphs`]: each paragraph goes to `emit` as it ends, and
/// `tick` is called once per tag, so the caller bounds the time. Linear in the input: the end
/// of a `script`, `style` or `head` element is searched for once, from where it starts.
pub(super) fn html_walk(
    html: &str,
    emit: &mut dyn FnMut(String) -> Result<()>,
    tick: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    pub(super) const BLOCK: &[&str] = &[
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "hr",
        "title",
        "td",
        "th",
        "dl",
        "dt",
        "address",
        "main",
        "nav",
        "aside",
        "caption",
        "figure",
        "figcaption",
    ];
    let mut cur = String::new();
    let mut rest = html;
    // Inside a table cell: a `<br>` or a paragraph there is a space, not a new line (a row is
    // one line); the columns the cell spans (`colspan`), so a merged cell keeps the grid.
    let mut in_cell = false;
    let mut span = 1usize;
    let mut flush = |cur: &mut String| {
        let t = cur.split_whitespace().collect::<Vec<_>>().join(" ");
        cur.clear();
        emit(t.trim_end_matches('|').trim().to_string())
    };
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = r.find("-->").map_or("", |i| &r[i + 3..]);
            continue;
        }
        if rest.starts_with('<') {
            tick()?;
            let Some(end) = rest.find('>') else {
                cur.push_str(rest);
                break;
            };
            let tag = &rest[1..end];
            let closing = tag.starts_with('/');
            let tname: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .take(16)
                .collect::<String>()
                .to_ascii_lowercase();
            rest = &rest[end + 1..];
            if !closing && matches!(tname.as_str(), "script" | "style" | "head") {
                rest = match find_ascii_ci(rest, &format!("</{tname}")) {
                    Some(i) => rest[i..].find('>').map_or("", |j| &rest[i + j + 1..]),
                    None => "",
                };
                continue;
            }
            // A definition list's term and its value on one line, as a label and its value
            // ("Issued: April 2, 2026"), not run together.
            if tname == "dd" && !closing {
                cur.push_str(": ");
                continue;
            }
            if tname == "dt" && closing {
                continue;
            }
            if BLOCK.contains(&tname.as_str()) {
                if tname == "td" || tname == "th" {
                    if closing {
                        cur.push_str(" | ");
                        for _ in 1..span {
                            cur.push_str("  | ");
                        }
                        in_cell = false;
                    } else {
                        in_cell = true;
                        span = colspan(tag);
                    }
                } else if in_cell && tname != "tr" && tname != "table" {
                    cur.push(' ');
                } else {
                    in_cell = false;
                    flush(&mut cur)?;
                }
            }
            continue;
        }
        let next = rest.find('<').unwrap_or(rest.len());
        cur.push_str(&decode_entities(&rest[..next]));
        rest = &rest[next..];
    }
    flush(&mut cur)
}

/// The columns a `td` or `th` tag spans (`colspan="3"`, quoted or not): 1 to 64.
fn colspan(tag: &str) -> usize {
    let Some(at) = find_ascii_ci(tag, "colspan") else { return 1 };
    let value = tag[at + "colspan".len()..].trim_start().trim_start_matches('=').trim_start();
    let digits: String =
        value.trim_start_matches(['"', '\'']).chars().take_while(char::is_ascii_digit).take(3).collect();
    digits.parse::<usize>().unwrap_or(1).clamp(1, 64)
}

/// Byte offset of the first match of the ASCII `needle` in `hay`, ignoring ASCII case.
pub(super) fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    h.windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
}

pub(super) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" | "#39" => Some('\''),
            "nbsp" => Some(' '),
            "euro" => Some('€'),
            "pound" => Some('£'),
            e if e.starts_with("#x") || e.starts_with("#X") => {
                u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32)
            }
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_definition_list_reads_as_labels_and_their_values() {
        let p = super::html_paragraphs(
            "<dl><dt>Issued</dt><dd>April 2, 2026</dd><dt>Due</dt><dd>May 2, 2026</dd></dl><address>1 Main St<br>Springfield</address>",
        );
        let p: Vec<&String> = p.iter().filter(|x| !x.is_empty()).collect();
        assert_eq!(p, ["Issued: April 2, 2026", "Due: May 2, 2026", "1 Main St", "Springfield"]);
    }
}
