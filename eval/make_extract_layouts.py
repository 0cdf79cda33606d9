#!/usr/bin/env python3
"""Writes eval/extract-layouts/: an Extract set of invoices laid out the way documents arrive
rather than the way the other sets write them, in the case format of eval/extract-extra
(`countersign-cli eval extract --cases eval/extract-layouts`). Written after the table readers it
measures were built and before they were run on it; its first run (lines 20 of 25 proposed
right, 2 of 23 with the code before those readers) led to two changes (a merged total row ends
a table; the rows' arithmetic outweighs a header word), so it is a development set now, not a
held-out one. Each document is a real invoice of the demo fixture (its lines, its
account, its dates), so the expected values are the fixture's own.

Kinds: a table broken by a page (foot, next page's head, the header again); a fixed-width print
whose columns are set apart by spaces; a real Word table (w:tbl) with a merged total row; a
German invoice (German headers no field label says, "17. März 2026", "1.200,00 €"); a French one
(pipes, "3 février 2026", "1 200,00 €", abbreviated headers); an HTML table with a colspan total
and a <br> in a cell; a Markdown table whose headers name no field. Scans (no OCR yet) are not in
it. Deterministic; stdlib only. Run: python3 eval/make_extract_layouts.py
"""

import zipfile
from decimal import Decimal
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

from make_extract_extra import CONTENT_TYPES, RELS, ROOT, fresh_dir, invoice_case, invoice_pool, pick, write_cases

OUT = ROOT / "eval" / "extract-layouts"
SEED = 20261207
MONTHS_DE = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
             "November", "Dezember"]
MONTHS_FR = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
             "novembre", "décembre"]
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]


def money(x, style):
    s = f"{Decimal(x):,.2f}"
    if style == "de":
        return s.replace(",", "X").replace(".", ",").replace("X", ".") + " €"
    if style == "fr":
        return s.replace(",", "\u202f").replace(".", ",") + " €"
    return s


def day(iso, style):
    y, m, d = (int(p) for p in iso.split("-"))
    return {"de": f"{d}. {MONTHS_DE[m - 1]} {y}", "fr": f"{d} {MONTHS_FR[m - 1]} {y}",
            "us": f"{m:02d}/{d:02d}/{y}", "en": f"{MONTHS_EN[m - 1]} {d}, {y}"}[style]


def qty(q):
    q = Decimal(q)
    return str(int(q)) if q == q.to_integral_value() else f"{q:.2f}"


def padded(cells, widths, right):
    return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()


def page_broken(inv, acc, lines):
    head = ["Description", "Qty", "Unit price", "Amount"]
    rows_ = [f"{l['description']} ({l['product_code']}) | {qty(l['quantity'])} | {money(l['unit_price'], 'en')} EUR"
             f" | {money(l['amount'], 'en')} EUR" for l in lines]
    cut = max(1, len(rows_) // 2)
    total = sum(Decimal(l["amount"]) for l in lines)
    return "\n".join([
        f"INVOICE {inv['number']}", "", f"Bill to: {acc['name']}", f"{acc['billing_city']}, {acc['billing_country']}", "",
        f"Invoice date: {day(inv['issue_date'], 'en')}", f"Payment due: {day(inv['due_date'], 'en')}", "",
        " | ".join(head), *rows_[:cut], "", "Northwind Supplies · Page 1 of 2", "\f",
        f"Invoice {inv['number']} (continued)", "", " | ".join(head), *rows_[cut:], "",
        f"Total due: {money(total, 'en')} EUR", "", "Northwind Supplies · Page 2 of 2", ""])


def fixed_width(inv, acc, lines):
    head = ["Code", "Description", "Qty", "Price", "Ext. price"]
    body = [[l["product_code"], l["description"], qty(l["quantity"]), money(l["unit_price"], "en"),
             money(l["amount"], "en")] for l in lines]
    widths = [max(len(r[i]) for r in [head] + body) for i in range(5)]
    right = [False, False, True, True, True]
    total = sum(Decimal(l["amount"]) for l in lines)
    return "\n".join([
        "NORTHWIND SUPPLIES INC.                         INVOICE", "",
        f"Invoice No.: {inv['number']}                 Date: {day(inv['issue_date'], 'us')}",
        f"Sold to: {acc['name']}", f"Terms: due {day(inv['due_date'], 'us')}", "",
        padded(head, widths, right), "-" * (sum(widths) + 8), *(padded(r, widths, right) for r in body),
        "-" * (sum(widths) + 8), f"TOTAL USD {money(total, 'en')}", ""])


def german(inv, acc, lines):
    head = ["Pos.", "Bezeichnung", "Anzahl", "Einzelpreis", "Gesamtpreis"]
    body = [[str(n), f"{l['description']} ({l['product_code']})", qty(l["quantity"]), money(l["unit_price"], "de"),
             money(l["amount"], "de")] for n, l in enumerate(lines, 1)]
    widths = [max(len(r[i]) for r in [head] + body) for i in range(5)]
    right = [True, False, True, True, True]
    total = sum(Decimal(l["amount"]) for l in lines)
    return "\n".join([
        "RECHNUNG", "", f"Rechnungsnummer: {inv['number']}", f"Kunde: {acc['name']}",
        f"Rechnungsdatum: {day(inv['issue_date'], 'de')}", f"Zahlbar bis: {day(inv['due_date'], 'de')}", "",
        padded(head, widths, right), *(padded(r, widths, right) for r in body), "",
        f"Rechnungsbetrag: {money(total, 'de')}", "", "Bitte überweisen Sie den Betrag ohne Abzug.", ""])


def french(inv, acc, lines):
    total = sum(Decimal(l["amount"]) for l in lines)
    return "\n".join([
        f"FACTURE N° {inv['number']}", "", f"Client : {acc['name']}", f"Date de facture : {day(inv['issue_date'], 'fr')}",
        f"Échéance : {day(inv['due_date'], 'fr')}", "", "Désignation | Qté | P.U. | Montant",
        *(f"{l['description']} ({l['product_code']}) | {qty(l['quantity'])} | {money(l['unit_price'], 'fr')} | "
          f"{money(l['amount'], 'fr')}" for l in lines), "", f"Total à payer : {money(total, 'fr')}", ""])


def html_colspan(inv, acc, lines):
    total = sum(Decimal(l["amount"]) for l in lines)
    cells = "".join(
        f"<tr><td>{l['description']}<br><small>{l['product_code']}</small></td><td>{qty(l['quantity'])}</td>"
        f"<td>£{money(l['unit_price'], 'en')}</td><td>£{money(l['amount'], 'en')}</td></tr>" for l in lines)
    return (f"<html><body><h1>Invoice {inv['number']}</h1><p>Bill to: {acc['name']}</p>"
            f"<p>Invoice date: {day(inv['issue_date'], 'en')}</p><p>Due date: {day(inv['due_date'], 'en')}</p>"
            "<table><tr><th>Description</th><th>Qty</th><th>Unit price</th><th>Amount</th></tr>"
            f"{cells}<tr><td colspan=\"3\">Total</td><td>£{money(total, 'en')}</td></tr></table></body></html>\n")


def markdown_unnamed(inv, acc, lines):
    total = sum(Decimal(l["amount"]) for l in lines)
    return "\n".join([
        f"# Invoice {inv['number']}", "", f"**Customer:** {acc['name']}", f"**Issued:** {inv['issue_date']}",
        f"**Due:** {inv['due_date']}", "", "| Service | Units | Rate | Charge |", "|---|---:|---:|---:|",
        *(f"| {l['description']} ({l['product_code']}) | {qty(l['quantity'])} | ${money(l['unit_price'], 'en')} |"
          f" ${money(l['amount'], 'en')} |" for l in lines), "", f"**Amount due:** ${money(total, 'en')}", ""])


def word_table(path, inv, acc, lines):
    p = lambda t: f'<w:p><w:r><w:t xml:space="preserve">{xml_escape(t)}</w:t></w:r></w:p>'
    cell = lambda t, span=1: ("<w:tc>" + (f'<w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>' if span > 1 else "")
                             + p(t) + "</w:tc>")
    row = lambda cs: "<w:tr>" + "".join(cs) + "</w:tr>"
    total = sum(Decimal(l["amount"]) for l in lines)
    table = ("<w:tbl>" + row([cell(h) for h in ["Description", "Qty", "Unit price", "Amount"]])
             + "".join(row([cell(f"{l['description']} ({l['product_code']})"), cell(qty(l["quantity"])),
                            cell(f"{money(l['unit_price'], 'en')} GBP"), cell(f"{money(l['amount'], 'en')} GBP")])
                       for l in lines)
             + row([cell("Total", 3), cell(f"{money(total, 'en')} GBP")]) + "</w:tbl>")
    body = "".join(p(t) for t in [f"INVOICE {inv['number']}", f"Bill to: {acc['name']}",
                                  f"Invoice date: {day(inv['issue_date'], 'en')}",
                                  f"Due date: {day(inv['due_date'], 'en')}"]) + table + p("Thank you for your business.")
    document = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                f"<w:body>{body}</w:body></w:document>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in [("[Content_Types].xml", CONTENT_TYPES), ("_rels/.rels", RELS),
                           ("word/document.xml", document)]:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            z.writestr(info, text.encode("utf-8"))


KINDS = [("txt", "EUR", 5, page_broken), ("txt", "USD", 3, fixed_width), ("docx", "GBP", 3, word_table),
         ("txt", "EUR", 4, german), ("txt", "EUR", 3, french), ("html", "GBP", 3, html_colspan),
         ("md", "USD", 3, markdown_unnamed)]


def main():
    accounts, lines_of, pool = invoice_pool(SEED, ("extract-extra",))
    fresh_dir(OUT)
    cases, used = [], set()
    for fmt, cur, want, write in KINDS:
        inv = pick(pool, used, lines_of, want, lambda i: i["currency_code"] == cur)
        acc, lines = accounts[inv["account"]], lines_of[inv["id"]]
        name = f"{inv['number']}.{fmt}"
        if fmt == "docx":
            write(OUT / name, inv, acc, lines)
        else:
            (OUT / name).write_text(write(inv, acc, lines), encoding="utf-8")
        cases.append(invoice_case(name, inv, lines, "cara", False, None))
    write_cases(OUT, cases)
    print(f"{len(cases)} documents written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
