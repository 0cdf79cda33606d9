#!/usr/bin/env python3
"""Writes eval/extract-pdfs/: an Extract set of invoices as PDFs whose text layer places each
cell by its position, as PDF printers and office suites do, in the case format of
eval/extract-extra (`countersign-cli eval extract --cases eval/extract-pdfs`). Written before the
positional PDF layout it measures, and run once on the code before it (the figures are in the
issue note). Each document is a real invoice of the demo fixture, so the expected values are the
fixture's own.

Kinds: columns placed by x with the numbers right-aligned and no separator characters; a table
across two pages (the header repeated, "Page 1 of 2"); a German invoice (German headers, "17. März
2026", "1.200,00 €"); a French one with labels above their values and two label/value pairs side
by side; a content stream drawn out of reading order (lines first, the head last); two address
blocks side by side and an empty discount cell in some rows; a page whose text is rotated 90°;
a fixed-width Courier print; words drawn one by one with no space characters between them.
Stdlib only; the PDFs use the standard Helvetica and Courier fonts (WinAnsiEncoding).
Deterministic. Run: python3 eval/make_extract_pdfs.py
"""

from decimal import Decimal

from make_extract_extra import ROOT, fresh_dir, invoice_case, invoice_pool, pick, write_cases
from make_extract_layouts import day, money, qty

OUT = ROOT / "eval" / "extract-pdfs"
SEED = 20261208
W, H = 595, 842

# The standard fonts' advance widths (per 1000) for ASCII 32–126, from their Adobe font metrics;
# other characters (accented letters, €, ·) are taken as 556, 1000 for the dash.
HELVETICA = [278, 278, 355, 556, 556, 889, 667, 222, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556,
             556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278,
             500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
             556, 222, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500,
             278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584]
HELVETICA_BOLD = [278, 333, 474, 556, 556, 889, 722, 278, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556,
                  556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778,
                  722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333,
                  278, 333, 584, 556, 278, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
                  611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584]


def width(text, size, font):
    if font == "F3":
        return 0.6 * size * len(text)
    table = HELVETICA_BOLD if font == "F2" else HELVETICA
    return sum(table[ord(c) - 32] if 32 <= ord(c) <= 126 else (1000 if c == "—" else 556) for c in text) * size / 1000


def pdf_string(text):
    out = []
    for b in text.encode("cp1252"):
        if b in b"()\\":
            out.append("\\" + chr(b))
        elif b < 32 or b > 126:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return "(" + "".join(out) + ")"


class Page:
    def __init__(self, rotated=False):
        self.ops, self.rotated = [], rotated

    def text(self, x, y, s, size=9, font="F1", right=False):
        if right:
            x -= width(s, size, font)
        if self.rotated:  # the content turned 90°: (x, y) → (820 - y, x)
            m = f"0 1 -1 0 {820 - y:.2f} {x:.2f}"
        else:
            m = f"1 0 0 1 {x:.2f} {y:.2f}"
        self.ops.append(f"BT /{font} {size} Tf {m} Tm {pdf_string(s)} Tj ET")

    def words(self, x, y, s, size=9, font="F1"):
        """Each word drawn on its own, no space character anywhere."""
        for w in s.split(" "):
            self.text(x, y, w, size, font)
            x += width(w + " ", size, font)


def write_pdf(path, pages):
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", None]
    fonts = {"F1": "Helvetica", "F2": "Helvetica-Bold", "F3": "Courier"}
    font_ids = {}
    for k, name in fonts.items():
        objs.append(f"<< /Type /Font /Subtype /Type1 /BaseFont /{name} /Encoding /WinAnsiEncoding >>")
        font_ids[k] = len(objs)
    res = "<< /Font << " + " ".join(f"/{k} {i} 0 R" for k, i in font_ids.items()) + " >> >>"
    kids = []
    for p in pages:
        stream = "\n".join(p.ops).encode("latin-1")
        objs.append(f"<< /Length {len(stream)} >>\nstream\n".encode("latin-1") + stream + b"\nendstream")
        content = len(objs)
        box = f"0 0 {H} {H}" if p.rotated else f"0 0 {W} {H}"  # a turned page is as wide as it is tall
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [{box}] /Resources {res} "
                    f"/Contents {content} 0 R >>")
        kids.append(len(objs))
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    path.write_bytes(pdf_file(objs))


def pdf_file(objs):
    """A PDF of `objs` (str or bytes; object 1 the catalog) with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, o in enumerate(objs, 1):
        offsets.append(len(out))
        body = o if isinstance(o, bytes) else o.encode("latin-1")
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def total_of(lines):
    return sum(Decimal(l["amount"]) for l in lines)


# Columns: (header, x, right-aligned, cell of a line).
def columns_en(cur):
    return [("Description", 50, False, lambda l: f"{l['description']} ({l['product_code']})"),
            ("Qty", 330, True, lambda l: qty(l["quantity"])),
            ("Unit price", 430, True, lambda l: money(l["unit_price"], "en")),
            (f"Amount ({cur})", 545, True, lambda l: money(l["amount"], "en"))]


def table(page, y, cols, lines, size=9, font="F1", bold="F2"):
    for head, x, right, _ in cols:
        page.text(x, y, head, size, bold, right)
    y -= 16
    for l in lines:
        for _, x, right, cell in cols:
            s = cell(l)
            if s:
                page.text(x, y, s, size, font, right)
        y -= 14
    return y


def positioned(inv, acc, lines):
    p = Page()
    p.text(50, 780, f"INVOICE {inv['number']}", 16, "F2")
    p.text(50, 740, "Bill to:", 9, "F2")
    p.text(50, 726, acc["name"])
    p.text(50, 712, f"{acc['billing_city']}, {acc['billing_country']}")
    p.text(360, 740, "Invoice date:", 9, "F2")
    p.text(440, 740, day(inv["issue_date"], "en"))
    p.text(360, 726, "Due date:", 9, "F2")
    p.text(440, 726, day(inv["due_date"], "en"))
    y = table(p, 660, columns_en(inv["currency_code"]), lines)
    p.text(430, y - 10, "Total due", 10, "F2", True)
    p.text(545, y - 10, f"{money(total_of(lines), 'en')} {inv['currency_code']}", 10, "F2", True)
    p.text(50, 60, "Northwind Supplies · IBAN DE89 3704 0044 0532 0130 00", 7)
    return [p]


def two_pages(inv, acc, lines):
    cut = max(1, len(lines) // 2)
    cols = columns_en(inv["currency_code"])
    p1, p2 = Page(), Page()
    p1.text(50, 780, "INVOICE", 16, "F2")
    p1.text(50, 760, f"Invoice number: {inv['number']}")
    p1.text(50, 746, f"Customer: {acc['name']}")
    p1.text(50, 732, f"Date of issue: {day(inv['issue_date'], 'en')}")
    p1.text(50, 718, f"Payment due: {day(inv['due_date'], 'en')}")
    table(p1, 660, cols, lines[:cut])
    p1.text(50, 40, "Page 1 of 2", 8)
    p2.text(50, 780, f"Invoice {inv['number']} (continued)", 10, "F2")
    y = table(p2, 740, cols, lines[cut:])
    p2.text(430, y - 10, "Amount due", 10, "F2", True)
    p2.text(545, y - 10, f"{money(total_of(lines), 'en')} {inv['currency_code']}", 10, "F2", True)
    p2.text(50, 40, "Page 2 of 2", 8)
    return [p1, p2]


def german(inv, acc, lines):
    p = Page()
    cols = [("Pos.", 50, False, None), ("Bezeichnung", 80, False, None), ("Menge", 330, True, None),
            ("Einzelpreis", 430, True, None), ("Gesamt", 545, True, None)]
    p.text(50, 780, "RECHNUNG", 16, "F2")
    p.text(50, 750, f"Rechnungsnummer: {inv['number']}")
    p.text(50, 736, f"Kunde: {acc['name']}")
    p.text(50, 722, f"Rechnungsdatum: {day(inv['issue_date'], 'de')}")
    p.text(50, 708, f"Zahlbar bis: {day(inv['due_date'], 'de')}")
    y = 650
    for head, x, right, _ in cols:
        p.text(x, y, head, 9, "F2", right)
    for n, l in enumerate(lines, 1):
        y -= 14
        cells = [str(n), f"{l['description']} ({l['product_code']})", qty(l["quantity"]),
                 money(l["unit_price"], "de"), money(l["amount"], "de")]
        for (_, x, right, _), s in zip(cols, cells):
            p.text(x, y, s, 9, "F1", right)
    p.text(430, y - 24, "Rechnungsbetrag", 10, "F2", True)
    p.text(545, y - 24, money(total_of(lines), "de"), 10, "F2", True)
    p.text(50, 60, "Bitte überweisen Sie den Betrag ohne Abzug.", 8)
    return [p]


def french_above(inv, acc, lines):
    p = Page()
    fr = lambda x: money(x, "fr").replace("\u202f", " ")  # noqa: E731 (WinAnsi has no narrow space)
    p.text(50, 780, f"FACTURE N° {inv['number']}", 16, "F2")
    p.text(50, 740, "Client", 8, "F2")
    p.text(50, 727, acc["name"])
    p.text(300, 740, "Date de facture", 8, "F2")
    p.text(430, 740, "Échéance", 8, "F2")
    p.text(300, 727, day(inv["issue_date"], "fr"))
    p.text(430, 727, day(inv["due_date"], "fr"))
    cols = [("Désignation", 50, False, lambda l: f"{l['description']} ({l['product_code']})"),
            ("Qté", 330, True, lambda l: qty(l["quantity"])),
            ("P.U. HT", 430, True, lambda l: fr(l["unit_price"])),
            ("Montant HT", 545, True, lambda l: fr(l["amount"]))]
    y = table(p, 660, cols, lines)
    p.text(430, y - 10, "Total à payer", 10, "F2", True)
    p.text(545, y - 10, fr(total_of(lines)), 10, "F2", True)
    return [p]


def out_of_order(inv, acc, lines):
    [p] = positioned(inv, acc, lines)
    # The same page with its drawing order turned around: the footer and the lines first,
    # the title last — the order a PDF made by layering leaves in the content stream.
    p.ops.reverse()
    return [p]


def side_by_side(inv, acc, lines):
    p = Page()
    p.text(50, 780, f"Invoice {inv['number']}", 16, "F2")
    p.text(50, 750, "Bill to", 9, "F2")
    p.text(300, 750, "Ship to", 9, "F2")
    p.text(50, 736, acc["name"])
    p.text(300, 736, f"{acc['name']} — Receiving dock")
    p.text(50, 722, f"{acc['billing_city']}, {acc['billing_country']}")
    p.text(300, 722, "Gate 4, Warehouse district")
    p.text(50, 690, f"Issued: {day(inv['issue_date'], 'en')}")
    p.text(300, 690, f"Due by: {day(inv['due_date'], 'en')}")
    cols = [("Item", 50, False, lambda l: f"{l['description']} ({l['product_code']})"),
            ("Quantity", 300, True, lambda l: qty(l["quantity"])),
            ("Price", 380, True, lambda l: money(l["unit_price"], "en")),
            ("Discount", 450, True, lambda l: ""),
            ("Line total", 545, True, lambda l: money(l["amount"], "en"))]
    y = table(p, 640, cols, lines)
    p.text(450, y - 10, "Total", 10, "F2", True)
    p.text(545, y - 10, f"{inv['currency_code']} {money(total_of(lines), 'en')}", 10, "F2", True)
    return [p]


def rotated(inv, acc, lines):
    [flat] = positioned(inv, acc, lines)
    p = Page(rotated=True)
    p.ops = []
    # Drawn again through the rotated page: the same calls, each turned 90°.
    for op in flat.ops:
        parts = op.split(" Tm ")[0].split()
        x, y = float(parts[-2]), float(parts[-1])
        rest = op.split(" Tm ", 1)[1]
        head = " ".join(parts[:-6])
        p.ops.append(f"{head} 0 1 -1 0 {820 - y:.2f} {x:.2f} Tm {rest}")
    return [p]


def courier(inv, acc, lines):
    p = Page()
    rows_ = [[l["product_code"], l["description"], qty(l["quantity"]), money(l["unit_price"], "en"),
              money(l["amount"], "en")] for l in lines]
    head = ["CODE", "DESCRIPTION", "QTY", "PRICE", "EXT PRICE"]
    widths = [max(len(r[i]) for r in [head] + rows_) for i in range(5)]
    right = [False, False, True, True, True]
    fmt = lambda cells: "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right))  # noqa
    text = [f"NORTHWIND SUPPLIES INC.                 INVOICE {inv['number']}", "",
            f"SOLD TO: {acc['name']}", f"INVOICE DATE: {day(inv['issue_date'], 'en')}",
            f"DUE DATE: {day(inv['due_date'], 'en')}", "", fmt(head), "-" * len(fmt(head)),
            *(fmt(r) for r in rows_), "-" * len(fmt(head)),
            f"TOTAL {inv['currency_code']} {money(total_of(lines), 'en')}"]
    y = 780
    for line in text:
        # Each run of the line drawn on its own at its column, as print drivers do.
        x = 40
        for chunk in line.split("  "):
            if chunk.strip():
                p.text(x + width(chunk[:len(chunk) - len(chunk.lstrip())], 8, "F3"), y, chunk.strip(), 8, "F3")
            x += width(chunk + "  ", 8, "F3")
        y -= 12
    return [p]


def no_spaces(inv, acc, lines):
    p = Page()
    p.words(50, 780, f"Invoice {inv['number']}", 16, "F2")
    p.words(50, 750, f"Customer: {acc['name']}")
    p.words(50, 736, f"Invoice date: {day(inv['issue_date'], 'en')}")
    p.words(50, 722, f"Payment due: {day(inv['due_date'], 'en')}")
    y = 660
    cols = columns_en(inv["currency_code"])
    for head, x, right, _ in cols:
        p.words(x - (width(head, 9, "F2") if right else 0), y, head, 9, "F2")
    for l in lines:
        y -= 14
        for _, x, right, cell in cols:
            s = cell(l)
            p.words(x - (width(s, 9, "F1") if right else 0), y, s)
    p.words(300, y - 24, f"Total due: {money(total_of(lines), 'en')} {inv['currency_code']}", 10, "F2")
    return [p]


KINDS = [("EUR", 4, positioned), ("USD", 8, two_pages), ("EUR", 5, german), ("EUR", 3, french_above),
         ("GBP", 4, out_of_order), ("USD", 3, side_by_side), ("EUR", 4, rotated), ("USD", 5, courier),
         ("GBP", 3, no_spaces)]


def main():
    accounts, lines_of, pool = invoice_pool(SEED, ("extract-extra", "extract-layouts"))
    fresh_dir(OUT)
    cases, used = [], set()
    for cur, want, write in KINDS:
        inv = pick(pool, used, lines_of, want, lambda i: i["currency_code"] == cur)
        acc, lines = accounts[inv["account"]], lines_of[inv["id"]]
        name = f"{inv['number']}.pdf"
        write_pdf(OUT / name, write(inv, acc, lines))
        cases.append(invoice_case(name, inv, lines, "cara", False, None))
    write_cases(OUT, cases)
    print(f"{len(cases)} documents written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
