//! The conversation around a document: in a forwarded e-mail, the forwarder's own words above
//! the forwarded message ("can you book this? we paid 4,300.00 last quarter"); in a reply, the
//! quoted lines (`> …`) and the "On … wrote:" line that introduces them. Their amounts, dates
//! and names are about other things, so they are no candidates: the model still reads them, as
//! context, but cannot point at them.

/// A line that starts a forwarded message, in English, German, French and Spanish.
const FORWARD_MARKERS: [&str; 10] = [
    "forwarded message",
    "original message",
    "begin forwarded message",
    "weitergeleitete nachricht",
    "ursprüngliche nachricht",
    "message transféré",
    "message d'origine",
    "mensaje reenviado",
    "mensaje original",
    "forwarded by",
];

/// Words that end the line introducing a quote ("On Tue, … Dana wrote:").
const QUOTE_INTRODUCTIONS: [&str; 5] = ["wrote:", "schrieb:", "a écrit :", "a écrit:", "escribió:"];

/// The spans of `text` that are conversation rather than the document (see the module).
pub fn conversation(text: &str) -> Vec<(usize, usize)> {
    let lines: Vec<(usize, usize, &str)> =
        super::candidates::lines_at(text).map(|(at, line)| (at, at + line.len(), line)).collect();
    let has_figures =
        |ls: &[(usize, usize, &str)]| ls.iter().any(|(_, _, l)| l.contains(|c: char| c.is_ascii_digit()));
    let mut out = vec![];
    // The last forward marker after which the text still holds figures: what is above it is the
    // forwarder's message (and any earlier forwards).
    // A marker line is the phrase in its decoration ("---------- Forwarded message ---------",
    // "Begin forwarded message:"), not a sentence that mentions one.
    let marker = lines.iter().rposition(|(_, _, l)| {
        let l = l.trim_matches(|c: char| "-=_>* \t\r".contains(c)).to_lowercase();
        FORWARD_MARKERS.iter().any(|m| l.starts_with(m))
    });
    let mut body_from = 0;
    if let Some(k) = marker.filter(|&k| has_figures(&lines[k + 1..])) {
        // E-mail headers at the very top (located as such by the reader) stay: they are the
        // message's own; the reply text between them and the marker is conversation.
        let first_body = lines.iter().position(|(_, _, l)| l.trim().is_empty()).map_or(0, |i| i + 1);
        if first_body < k {
            out.push((lines[first_body].0, lines[k - 1].1));
        }
        body_from = k + 1;
    }
    // Quoted lines, when the lines that are not quoted hold figures of their own.
    let quoted = |l: &str| l.trim_start().starts_with('>');
    let unquoted: Vec<(usize, usize, &str)> =
        lines[body_from..].iter().filter(|(_, _, l)| !quoted(l)).copied().collect();
    if has_figures(&unquoted) {
        for (i, (a, b, l)) in lines.iter().enumerate().skip(body_from) {
            let introduces = {
                let t = l.trim_end().to_lowercase();
                QUOTE_INTRODUCTIONS.iter().any(|w| t.ends_with(w))
                    && lines[i + 1..]
                        .iter()
                        .find(|(_, _, n)| !n.trim().is_empty())
                        .is_some_and(|(_, _, n)| quoted(n))
            };
            if quoted(l) || introduces {
                out.push((*a, *b));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::conversation;

    fn kept(text: &str) -> String {
        let spans = conversation(text);
        super::super::candidates::lines_at(text)
            .filter(|(start, l)| !spans.iter().any(|(a, b)| a <= start && start + l.len() <= *b))
            .map(|(_, l)| l)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_forwarders_words_and_quoted_replies_are_conversation_the_forwarded_invoice_is_not() {
        let text = "Subject: Fwd: Invoice 7\n\nHi, we paid 4,300.00 last quarter.\n> On Tue, Dana wrote:\n> The quote was 12,000.00\n\n---------- Forwarded message ---------\nINVOICE 7\nTotal due: 1,250.00 EUR";
        assert_eq!(kept(text), "Subject: Fwd: Invoice 7\n\n---------- Forwarded message ---------\nINVOICE 7\nTotal due: 1,250.00 EUR");
        // A reply with the invoice in its own lines: the quote goes, with the line introducing it.
        let reply = "Here is the invoice: total 99.00 EUR.\n\nOn Tue, Dana schrieb:\n> Old total 12.00 EUR";
        assert_eq!(kept(reply), "Here is the invoice: total 99.00 EUR.\n");
        // Everything quoted (the invoice itself in the quote): nothing is taken away.
        let all_quoted = "FYI\n\n> INVOICE 8\n> Total due: 10.00 EUR";
        assert_eq!(kept(all_quoted), all_quoted);
    }
}
