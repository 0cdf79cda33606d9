#!/usr/bin/env python3
"""Writes eval/extract-mail/: invoices as they come by e-mail and from the web, in the case
format of eval/extract-extra (`countersign-cli eval extract --cases eval/extract-mail`). Written
before the changes it led to and run once on the code before them (the figures are in the issue
note). Each document is a real invoice of the demo fixture, so the expected values are the
fixture's own.

Kinds: an invoice forwarded under a reply and quoted messages full of other amounts and dates;
an e-mail whose only body is HTML; a billing portal's saved page (a <div> grid of lines, a <dl>
of the invoice's facts); an HTML table whose first column spans rows (rowspan); a two-page text
invoice with "Carried forward" / "Brought forward" rows; a US invoice whose slash dates are
ambiguous but whose terms (NET 30) and order tell them; an invoice whose amount due is only on
the tear-off slip under a cut line. Stdlib only. Deterministic. Run: python3 eval/make_extract_mail.py
"""

import datetime as dt
from decimal import Decimal

from make_extract_extra import ROOT, fresh_dir, invoice_case, invoice_pool, pick, write_cases
from make_extract_layouts import day, money, qty

OUT = ROOT / "eval" / "extract-mail"
SEED = 20261210


def total_of(lines):
    return sum(Decimal(l["amount"]) for l in lines)


def piped_table(lines, cur):
    head = "Description | Qty | Unit price | Amount"
    return [head] + [f"{l['description']} ({l['product_code']}) | {qty(l['quantity'])} | "
                     f"{money(l['unit_price'], 'en')} {cur} | {money(l['amount'], 'en')} {cur}" for l in lines]


def forwarded(inv, acc, lines):
    cur = inv["currency_code"]
    body = [
        "Hi Cara,", "",
        "can you book the invoice below? Last quarter we paid 4,300.00 for the renewal and the",
        "credit of 950.00 from March 3, 2026 is still open.", "", "Thanks,", "Ben", "",
        "> On Tue, Feb 10, 2026 at 9:12 AM Dana <dana@northwind.example> wrote:",
        "> The quote we agreed was 12,000.00 " + cur + ", valid until April 30, 2026.",
        "> Shipping is 250.00 on top.", ">",
        ">> Earlier: please confirm the PO for 8,750.00.", "",
        "---------- Forwarded message ---------",
        "From: Northwind Billing <billing@northwind.example>",
        f"Date: {day(inv['issue_date'], 'en')}",
        f"Subject: Invoice {inv['number']}", "",
        f"INVOICE {inv['number']}", f"Bill to: {acc['name']}",
        f"Invoice date: {day(inv['issue_date'], 'en')}", f"Due date: {day(inv['due_date'], 'en')}", "",
        *piped_table(lines, cur), "", f"Total due: {money(total_of(lines), 'en')} {cur}", "",
    ]
    return "\r\n".join([
        "From: Ben Ortiz <ben@example.com>", "To: Cara <cara@example.com>",
        f"Subject: Fwd: Invoice {inv['number']}", "Date: Wed, 11 Mar 2026 10:00:00 +0000",
        "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", *body])


def html_only_mail(inv, acc, lines):
    cur = inv["currency_code"]
    rows_ = "".join(f"<tr><td>{l['description']} ({l['product_code']})</td><td>{qty(l['quantity'])}</td>"
                    f"<td>{money(l['unit_price'], 'en')}</td><td>{money(l['amount'], 'en')}</td></tr>" for l in lines)
    html = (f"<html><body><p>Dear customer,</p><p>your invoice <b>{inv['number']}</b> is ready.</p>"
            f"<p>Customer: {acc['name']}<br>Invoice date: {day(inv['issue_date'], 'en')}<br>"
            f"Due date: {day(inv['due_date'], 'en')}</p><table><tr><th>Item</th><th>Qty</th><th>Price ({cur})</th>"
            f"<th>Amount ({cur})</th></tr>{rows_}</table><p><b>Total due: {money(total_of(lines), 'en')} {cur}</b></p>"
            "<p>Kind regards,<br>Northwind Billing</p></body></html>")
    return "\r\n".join([
        "From: Northwind Billing <billing@northwind.example>", "To: Cara <cara@example.com>",
        f"Subject: Your invoice {inv['number']}", "MIME-Version: 1.0",
        "Content-Type: text/html; charset=utf-8", "", html, ""])


def portal_page(inv, acc, lines):
    cur = inv["currency_code"]
    grid = "".join(
        f'<div class="row"><div class="cell">{l["description"]} ({l["product_code"]})</div>'
        f'<div class="cell num">{qty(l["quantity"])}</div><div class="cell num">{money(l["unit_price"], "en")}</div>'
        f'<div class="cell num">{money(l["amount"], "en")}</div></div>' for l in lines)
    return (
        "<!DOCTYPE html><html><head><title>Billing portal</title><style>.row{display:flex}</style></head><body>"
        "<nav><a href='/'>Dashboard</a> <a href='/invoices'>Invoices</a> <a href='/help'>Help</a></nav>"
        f"<h1>Invoice {inv['number']}</h1><dl><dt>Account</dt><dd>{acc['name']}</dd>"
        f"<dt>Issued</dt><dd>{day(inv['issue_date'], 'en')}</dd><dt>Due</dt><dd>{day(inv['due_date'], 'en')}</dd>"
        f"<dt>Currency</dt><dd>{cur}</dd></dl>"
        '<div class="grid"><div class="row head"><div class="cell">Product</div><div class="cell">Units</div>'
        f'<div class="cell">Unit price</div><div class="cell">Line amount</div></div>{grid}</div>'
        f"<dl><dt>Amount due</dt><dd>{money(total_of(lines), 'en')} {cur}</dd></dl>"
        "<footer>© Northwind Supplies · Privacy · Terms</footer></body></html>\n")


def rowspan_table(inv, acc, lines):
    cur = inv["currency_code"]
    body = ""
    for n, l in enumerate(lines):
        group = f'<td rowspan="{len(lines)}">Services</td>' if n == 0 else ""
        body += (f"<tr>{group}<td>{l['description']} ({l['product_code']})</td><td>{qty(l['quantity'])}</td>"
                 f"<td>{money(l['unit_price'], 'en')}</td><td>{money(l['amount'], 'en')}</td></tr>")
    return (f"<html><body><h2>INVOICE {inv['number']}</h2><p>Bill to: {acc['name']}</p>"
            f"<p>Invoice date: {day(inv['issue_date'], 'en')}</p><p>Payment due: {day(inv['due_date'], 'en')}</p>"
            "<table><tr><th>Group</th><th>Description</th><th>Qty</th><th>Unit price</th><th>Amount</th></tr>"
            f"{body}</table><p>Total due: {cur} {money(total_of(lines), 'en')}</p></body></html>\n")


def carried_forward(inv, acc, lines):
    cur = inv["currency_code"]
    cut = max(1, len(lines) // 2)
    carried = sum(Decimal(l["amount"]) for l in lines[:cut])
    table = piped_table(lines, cur)
    return "\n".join([
        f"INVOICE {inv['number']}", f"Customer: {acc['name']}", f"Invoice date: {day(inv['issue_date'], 'en')}",
        f"Payment due: {day(inv['due_date'], 'en')}", "", table[0], *table[1:cut + 1],
        f"Carried forward | | | {money(carried, 'en')} {cur}", "", "Page 1 of 2", "\f",
        f"Invoice {inv['number']} - page 2", "", table[0], f"Brought forward | | | {money(carried, 'en')} {cur}",
        *table[cut + 1:], "", f"Total due: {money(total_of(lines), 'en')} {cur}", "", "Page 2 of 2", ""])


def net_terms(inv, acc, lines):
    cur = inv["currency_code"]
    days = (dt.date.fromisoformat(inv["due_date"]) - dt.date.fromisoformat(inv["issue_date"])).days
    return "\n".join([
        "NORTHWIND SUPPLIES INC.", "", f"Invoice #: {inv['number']}", f"Date: {day(inv['issue_date'], 'us')}",
        f"Terms: NET {days}", f"Due: {day(inv['due_date'], 'us')}", f"Sold to: {acc['name']}", "",
        *piped_table(lines, cur), "", f"Balance due: {money(total_of(lines), 'en')} {cur}", ""])


def tear_off(inv, acc, lines):
    cur = inv["currency_code"]
    table = piped_table(lines, cur)
    return "\n".join([
        f"Invoice {inv['number']}", f"Customer: {acc['name']}", f"Issued: {day(inv['issue_date'], 'en')}",
        f"Due by: {day(inv['due_date'], 'en')}", "", *table, "",
        "Payment by bank transfer within the terms above. Questions? billing@northwind.example", "",
        "- - - - - - - - - - - - - - - - ✂ - - - - - - - - - - - - - - - -",
        "REMITTANCE SLIP — please return with your payment", f"Invoice: {inv['number']}", f"Customer: {acc['name']}",
        f"Amount enclosed: {money(total_of(lines), 'en')} {cur}", ""])


# (currency, lines wanted, writer, extension, needs ambiguous US dates)
KINDS = [("USD", 3, forwarded, "eml", False), ("EUR", 2, html_only_mail, "eml", False),
         ("GBP", 3, portal_page, "html", False), ("EUR", 3, rowspan_table, "html", False),
         ("USD", 6, carried_forward, "txt", False), ("USD", 3, net_terms, "txt", True),
         ("EUR", 2, tear_off, "txt", False)]


def ambiguous_us(inv):
    i, d = dt.date.fromisoformat(inv["issue_date"]), dt.date.fromisoformat(inv["due_date"])
    return i.day <= 12 and d.day <= 12 and i.day != i.month and d.day != d.month


def main():
    accounts, lines_of, pool = invoice_pool(SEED, ("extract-extra", "extract-layouts", "extract-pdfs", "extract-scans"))
    fresh_dir(OUT)
    cases, used = [], set()
    for cur, want, write, ext, us in KINDS:
        inv = pick(pool, used, lines_of, want, lambda i: ambiguous_us(i) if us else i["currency_code"] == cur)
        acc, lines = accounts[inv["account"]], lines_of[inv["id"]]
        name = f"{inv['number']}.{ext}"
        (OUT / name).write_text(write(inv, acc, lines), encoding="utf-8")
        cases.append(invoice_case(name, inv, lines, "cara", False, None))
    write_cases(OUT, cases)
    print(f"{len(cases)} documents written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
