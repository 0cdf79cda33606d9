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
    // Rows spanned (`rowspan`): the cells of the rows below that a cell above covers, as
    // (column, columns, first row, row after the last, its text), repeated there so that each
    // row keeps the grid; the row and column being read.
    let mut spanned: Vec<(usize, usize, usize, usize, String)> = vec![];
    let (mut row, mut col, mut cell_at, mut cell_rows) = (0usize, 0usize, 0usize, 1usize);
    // A `<div>` grid: a div whose class or role says it is a row ("row", "table-row", role=row)
    // makes one line, its child divs its cells; the div depth it opened at.
    let mut div_depth = 0usize;
    let mut grid_row: Option<usize> = None;
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
            if tname == "div" {
                if closing {
                    match grid_row {
                        Some(d) if div_depth == d => {
                            grid_row = None;
                            div_depth = div_depth.saturating_sub(1);
                            flush(&mut cur)?;
                            continue;
                        }
                        Some(d) if div_depth == d + 1 => {
                            cur.push_str(" | ");
                            div_depth -= 1;
                            continue;
                        }
                        _ => div_depth = div_depth.saturating_sub(1),
                    }
                } else {
                    div_depth += 1;
                    if grid_row.is_none() && is_grid_row(tag) {
                        flush(&mut cur)?;
                        grid_row = Some(div_depth);
                        continue;
                    }
                }
            }
            if grid_row.is_some() && BLOCK.contains(&tname.as_str()) {
                // Inside a grid row's cells a block is a space.
                cur.push(' ');
                continue;
            }
            if BLOCK.contains(&tname.as_str()) {
                if tname == "tr" && !closing {
                    row += 1;
                    col = 0;
                    spanned.retain(|s| s.3 > row);
                }
                // The cells that rows above span, at the column reached (and at a row's end).
                let is_cell = tname == "td" || tname == "th";
                if (is_cell && !closing) || (tname == "tr" && closing) {
                    while let Some(s) = spanned.iter().find(|s| s.0 == col && s.2 <= row && row < s.3) {
                        cur.push_str(&format!("{} | ", s.4));
                        for _ in 1..s.1 {
                            cur.push_str("  | ");
                        }
                        col += s.1;
                    }
                }
                if is_cell {
                    if closing {
                        if cell_rows > 1 && spanned.len() < 256 {
                            let text = cur
                                .get(cell_at..)
                                .unwrap_or("")
                                .split_whitespace()
                                .collect::<Vec<_>>()
                                .join(" ");
                            spanned.push((col, span, row + 1, row + cell_rows, text));
                        }
                        cur.push_str(" | ");
                        for _ in 1..span {
                            cur.push_str("  | ");
                        }
                        col += span;
                        in_cell = false;
                    } else {
                        in_cell = true;
                        span = colspan(tag);
                        cell_rows = attribute_number(tag, "rowspan").clamp(1, 1000);
                        cell_at = cur.len();
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
    attribute_number(tag, "colspan").clamp(1, 64)
}

/// A number attribute of a tag (`rowspan="3"`, quoted or not); 1 when absent or unreadable.
fn attribute_number(tag: &str, name: &str) -> usize {
    let Some(at) = find_ascii_ci(tag, name) else { return 1 };
    let value = tag[at + name.len()..].trim_start().trim_start_matches('=').trim_start();
    let digits: String =
        value.trim_start_matches(['"', '\'']).chars().take_while(char::is_ascii_digit).take(4).collect();
    digits.parse::<usize>().unwrap_or(1)
}

/// A `<div>` tag that says it is a row of a grid: `role="row"`, or a class such as `row`,
/// `table-row`, `row-item`, `tr`.
fn is_grid_row(tag: &str) -> bool {
    let value = |name: &str| -> String {
        let Some(at) = find_ascii_ci(tag, name) else { return String::new() };
        let rest = tag[at + name.len()..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else { return String::new() };
        let rest = rest.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        let body = quote.map_or(rest, |q| rest[1..].split(q).next().unwrap_or(""));
        body.split(|c: char| c.is_whitespace() || (quote.is_none() && c == '>'))
            .take(32)
            .collect::<Vec<_>>()
            .join(" ")
    };
    if value("role").eq_ignore_ascii_case("row") {
        return true;
    }
    value("class").split_whitespace().any(|c| {
        let c = c.to_ascii_lowercase();
        c == "row"
            || c == "tr"
            || c.ends_with("-row")
            || c.ends_with("_row")
            || c.starts_with("row-")
            || c.starts_with("row_")
    })
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
    fn a_div_grid_and_rows_a_cell_spans_keep_one_line_per_row() {
        let p = super::html_paragraphs(
            r#"<div class="grid"><div class="row head"><div>Product</div><div>Units</div><div>Amount</div></div>
            <div class="row"><div>Pen</div><div class="num">2</div><div>4.00</div></div></div>
            <div class="content"><div>Para one</div><div>Para two</div></div>"#,
        );
        let p: Vec<&String> = p.iter().filter(|x| !x.is_empty()).collect();
        assert_eq!(p, ["Product | Units | Amount", "Pen | 2 | 4.00", "Para one", "Para two"]);
        let p = super::html_paragraphs(
            r#"<table><tr><th>Group</th><th>Item</th><th>Qty</th></tr><tr><td rowspan="2">Services</td><td>Pen</td><td>2</td></tr><tr><td>Ink</td><td>3</td></tr><tr><td colspan="2">Total</td><td>5</td></tr></table>"#,
        );
        let p: Vec<&String> = p.iter().filter(|x| !x.is_empty()).collect();
        assert_eq!(p, ["Group | Item | Qty", "Services | Pen | 2", "Services | Ink | 3", "Total | | 5"]);
    }

    #[test]
    fn a_definition_list_reads_as_labels_and_their_values() {
        let p = super::html_paragraphs(
            "<dl><dt>Issued</dt><dd>April 2, 2026</dd><dt>Due</dt><dd>May 2, 2026</dd></dl><address>1 Main St<br>Springfield</address>",
        );
        let p: Vec<&String> = p.iter().filter(|x| !x.is_empty()).collect();
        assert_eq!(p, ["Issued: April 2, 2026", "Due: May 2, 2026", "1 Main St", "Springfield"]);
    }
}
