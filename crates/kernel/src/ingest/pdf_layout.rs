//! A PDF page's text laid out from where its glyphs are, not from the order the content stream
//! draws them: lines top to bottom, glyphs left to right along each line's own direction (a page
//! turned 90° reads like any other), words set apart by the gaps between glyphs (a document
//! that draws every word on its own, with no space character, still has words), and columns by
//! two spaces or more at the place their x-position gives, so the rows of a table line up under
//! its header as they do on paper. A content stream drawn out of reading order, or columns
//! joined by single spaces, lose a table; positions keep it.

/// One glyph as the page places it, in its line direction's own frame: `u` along the line,
/// `v` across it (larger is higher on the page).
#[derive(Debug, Clone)]
pub(super) struct Glyph {
    /// The quarter turn of the line direction (0: left to right, 1: upward, 2, 3).
    pub(super) turn: u8,
    pub(super) u: f64,
    pub(super) v: f64,
    /// How far the glyph advances along the line.
    pub(super) advance: f64,
    /// The glyph's height (the font size as drawn).
    pub(super) size: f64,
    pub(super) text: String,
    /// The advance per character (a glyph is one; an OCR word several).
    pub(super) per_char: f64,
}

/// A gap of this many font sizes or more between two glyphs of a line is a column, not a word
/// space (two spaces of a monospaced font are 1.2; a justified word space stays under 1).
const COLUMN_GAP: f64 = 0.9;
/// A gap of this many font sizes or more is a word space (Helvetica's space is 0.28).
const WORD_GAP: f64 = 0.12;
/// No column is placed further right than this many characters (a glyph a hostile file puts
/// at x = 1e300 gets two spaces, not a line of them).
const MAX_COLUMN: usize = 400;

impl Glyph {
    /// The glyph pdf-extract reports: its text rendering matrix (without the font size), its
    /// advance in text space (per unit of font size) and its font size.
    pub(super) fn placed(
        trm: &pdf_extract::Transform,
        width: f64,
        font_size: f64,
        text: &str,
    ) -> Option<Glyph> {
        let along = (trm.m11, trm.m12);
        let across = (trm.m21, trm.m22);
        let scale = along.0.hypot(along.1);
        let size = (font_size * across.0.hypot(across.1)).abs();
        let (x, y) = (trm.m31, trm.m32);
        if ![scale, size, x, y, width].iter().all(|n| n.is_finite()) || scale == 0.0 {
            return None;
        }
        let turn = (along.1.atan2(along.0) / std::f64::consts::FRAC_PI_2).round().rem_euclid(4.0) as u8;
        let (u, v) = match turn {
            0 => (x, y),
            1 => (y, -x),
            2 => (-x, -y),
            _ => (-y, x),
        };
        let size = if size > 0.0 { size } else { font_size.abs().max(1.0) };
        let advance = (width * font_size).abs() * scale;
        let text = unligature(text);
        Some(Glyph {
            turn,
            u,
            v,
            advance,
            size,
            per_char: advance / text.chars().count().max(1) as f64,
            text,
        })
    }
}

/// Typographic ligatures (ﬁ, ﬂ, …) as the letters they join, so "ﬁnal" is searched as "final".
fn unligature(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{FB00}' => "ff".to_string(),
            '\u{FB01}' => "fi".to_string(),
            '\u{FB02}' => "fl".to_string(),
            '\u{FB03}' => "ffi".to_string(),
            '\u{FB04}' => "ffl".to_string(),
            '\u{FB05}' | '\u{FB06}' => "st".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The page's text: the lines of the direction most of its glyphs run in first, then those
/// of any other direction (a stamp, a margin note turned on its side).
pub(super) fn page_text(glyphs: &[Glyph]) -> String {
    let mut turns: Vec<(u8, usize)> =
        (0..4u8).map(|t| (t, glyphs.iter().filter(|g| g.turn == t).count())).collect();
    turns.sort_by_key(|(t, n)| (std::cmp::Reverse(*n), *t));
    let mut out = vec![];
    for (turn, n) in turns {
        if n > 0 {
            let mut mine: Vec<&Glyph> =
                glyphs.iter().filter(|g| g.turn == turn && !g.text.trim().is_empty()).collect();
            out.extend(lines(&mut mine));
        }
    }
    out.join("\n")
}

/// The lines of glyphs running one way (space glyphs left out: gaps make the spaces), top to
/// bottom.
fn lines(glyphs: &mut [&Glyph]) -> Vec<String> {
    if glyphs.is_empty() {
        return vec![];
    }
    glyphs.sort_by(|a, b| b.v.total_cmp(&a.v).then(a.u.total_cmp(&b.u)));
    // The grid a column is placed on: the page's typical character advance from its left edge.
    let origin = glyphs.iter().map(|g| g.u).fold(f64::INFINITY, f64::min);
    let mut advances: Vec<f64> = glyphs.iter().map(|g| g.per_char).filter(|a| *a > 0.0).collect();
    advances.sort_by(f64::total_cmp);
    let unit = advances.get(advances.len() / 2).copied().unwrap_or(5.0).max(0.5);
    let mut out = vec![];
    let mut start = 0;
    while start < glyphs.len() {
        // A line: the glyphs whose baselines lie within 40% of a font size of the first's.
        let top = glyphs[start];
        let mut end = start + 1;
        while end < glyphs.len() && top.v - glyphs[end].v <= 0.4 * top.size.max(glyphs[end].size) {
            end += 1;
        }
        let line = &mut glyphs[start..end];
        line.sort_by(|a, b| a.u.total_cmp(&b.u));
        out.push(line_text(line, origin, unit));
        start = end;
    }
    out
}

fn line_text(line: &[&Glyph], origin: f64, unit: f64) -> String {
    let mut text = String::new();
    let mut column = 0usize;
    let mut last: Option<&Glyph> = None;
    for g in line {
        if let Some(p) = last {
            let gap = g.u - (p.u + p.advance);
            let size = p.size.max(g.size);
            // A glyph drawn again over itself (fake bold, a shadow) is one glyph.
            if g.text == p.text && (g.u - p.u).abs() < 0.2 * size {
                continue;
            }
            if gap >= COLUMN_GAP * size {
                let at = column_of(g.u, origin, unit);
                let pad = at.saturating_sub(column).max(2);
                text.extend(std::iter::repeat_n(' ', pad));
                column += pad;
            } else if gap >= WORD_GAP * size {
                text.push(' ');
                column += 1;
            }
        } else {
            let at = column_of(g.u, origin, unit);
            text.extend(std::iter::repeat_n(' ', at));
            column = at;
        }
        text.push_str(&g.text);
        column += g.text.chars().count();
        last = Some(g);
    }
    text
}

fn column_of(u: f64, origin: f64, unit: f64) -> usize {
    ((u - origin) / unit).round().clamp(0.0, MAX_COLUMN as f64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyphs(words: &[(f64, f64, &str)]) -> Vec<Glyph> {
        // Each character 5 wide at size 10, drawn at (x, y).
        words
            .iter()
            .flat_map(|(x, y, w)| {
                w.chars().enumerate().map(move |(i, c)| Glyph {
                    turn: 0,
                    u: x + 5.0 * i as f64,
                    v: *y,
                    advance: 5.0,
                    size: 10.0,
                    text: c.to_string(),
                    per_char: 5.0,
                })
            })
            .collect()
    }

    #[test]
    fn lines_come_top_to_bottom_and_columns_keep_their_place_whatever_the_drawing_order() {
        let mut g = glyphs(&[
            (300.0, 680.0, "9.00"),
            (50.0, 680.0, "Pen"),
            (300.0, 700.0, "Amount"),
            (50.0, 700.0, "Item"),
            (150.0, 680.0, "3"),
            (150.0, 700.0, "Qty"),
        ]);
        g.reverse();
        let text = page_text(&g);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(
            rows[0].trim_start().starts_with("Item") && rows[1].trim_start().starts_with("Pen"),
            "{text}"
        );
        // The columns start at the same character in both lines, set apart by 2+ spaces.
        assert_eq!(rows[0].find("Qty"), rows[1].find('3'), "{text}");
        assert_eq!(rows[0].find("Amount"), rows[1].find("9.00"), "{text}");
        assert!(rows[0].contains("Item  "), "{text}");
    }

    #[test]
    fn words_drawn_apart_without_space_characters_are_words() {
        // "Total due" drawn as two words 3 units apart (a space's width), no ' ' glyph.
        let text = page_text(&glyphs(&[(50.0, 700.0, "Total"), (78.0, 700.0, "due")]));
        assert_eq!(text.trim(), "Total due");
    }

    #[test]
    fn a_page_turned_a_quarter_reads_along_its_lines() {
        // Text running upward: u is y, v is -x; two lines at x = 100 and x = 120.
        let turned: Vec<Glyph> = glyphs(&[(50.0, -100.0, "first"), (50.0, -120.0, "second")])
            .into_iter()
            .map(|g| Glyph { turn: 1, ..g })
            .collect();
        assert_eq!(page_text(&turned).lines().map(str::trim).collect::<Vec<_>>(), ["first", "second"]);
    }

    #[test]
    fn a_glyph_placed_far_off_the_page_gets_a_column_gap_not_a_line_of_spaces() {
        let text = page_text(&glyphs(&[(50.0, 700.0, "Total"), (1e300, 700.0, "9")]));
        assert!(text.len() <= MAX_COLUMN + 10, "{}", text.len());
        assert_eq!(text.split_whitespace().collect::<Vec<_>>(), ["Total", "9"]);
    }

    #[test]
    fn ligatures_are_their_letters() {
        assert_eq!(unligature("\u{FB01}nal o\u{FB00}er"), "final offer");
    }
}
