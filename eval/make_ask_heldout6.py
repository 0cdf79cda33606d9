#!/usr/bin/env python3
"""Writes eval/ask-heldout6.jsonl: a sixth set of Ask cases kept apart, written at the start of a
round (2026-12-07) before any change to the reader and before any result of it was seen — its
first run is the measure the closing note reports; never tuned to. Wordings chosen to differ from
every other set: 'other than', 'apart from', 'non-', number words with a scale, named quarters of
last year, month ranges, parents' fields, possessives of other users, politeness, capitals, a typo.
Run: python3 eval/make_ask_heldout6.py
"""

from demo_fixture import CLOSED, UNPAID, acc, acc_of, account, by_name, contact, inv, invoice, line, note, num, opps, top, write_ask_cases

GENCO = by_name["Genco Group"]
ava_opps = opps("ava")


cases = [
    # negation
    ("ava", "accounts other than customers", "account", [a for a in account if a["type"] != "customer"]),
    ("ava", "contacts apart from the CEOs", "contact", [c for c in contact if c["title"] != "CEO"]),
    ("ava", "non-software accounts in Canada", "account",
     [a for a in account if a["industry"] != "software" and a["billing_country"] == "Canada"]),
    ("cara", "invoices that are not in US dollars", "invoice", [i for i in invoice if i["currency_code"] != "USD"]),
    ("ava", "Konten, die nicht in Deutschland sind", "account", [a for a in account if a["billing_country"] != "Germany"]),
    ("ava", "opportunités sauf celles en négociation", "opportunity", [o for o in ava_opps if o["stage"] != "negotiation"]),
    ("ava", "cuentas excepto las de Madrid", "account", [a for a in account if a["billing_city"] != "Madrid"]),
    # blank / not blank
    ("ava", "deals that have a next step", "opportunity", [o for o in ava_opps if o["next_step"]]),
    ("cara", "invoices with a PO number", "invoice", [i for i in invoice if i["po_number"]]),
    ("ava", "Chancen ohne nächsten Schritt im Jahr 2026", "opportunity",
     [o for o in ava_opps if not o["next_step"] and o["close_date"].startswith("2026")]),
    # superlatives and top N
    ("ava", "the account with the highest credit limit", "account", top(account, lambda a: num(a["credit_limit"]), 1, True)),
    ("ava", "the earliest closing deal", "opportunity", top(ava_opps, lambda o: o["close_date"], 1, False)),
    ("cara", "bottom 3 invoices by total", "invoice", top(invoice, lambda i: num(i["total"]), 3, False)),
    ("ava", "the most recent note", "note", top(note, lambda n: n["written_at"], 1, True)),
    ("cara", "la factura más alta", "invoice", top(invoice, lambda i: num(i["total"]), 1, True)),
    ("ava", "die größte Verkaufschance", "opportunity", top(ava_opps, lambda o: num(o["amount"]), 1, True)),
    # numbers
    ("ava", "deals over two hundred thousand", "opportunity", [o for o in ava_opps if num(o["amount"]) > 200000]),
    ("ava", "accounts with between 1 and 2 million in revenue", "account",
     [a for a in account if 1_000_000 <= num(a["annual_revenue"]) <= 2_000_000]),
    ("cara", "invoices under 1.5k", "invoice", [i for i in invoice if num(i["total"]) < 1500]),
    ("cara", "lines with more than a dozen units", "invoice_line", [x for x in line if num(x["quantity"]) > 12]),
    ("ava", "comptes de plus de mille employés", "account", [a for a in account if num(a["employees"]) > 1000]),
    # dates
    ("cara", "invoices issued in Q1 last year", "invoice", [i for i in invoice if "2025-01-01" <= i["issue_date"] <= "2025-03-31"]),
    ("ava", "deals closing from February to April 2026", "opportunity",
     [o for o in ava_opps if "2026-02-01" <= o["close_date"] <= "2026-04-30"]),
    ("cara", "invoices due this month", "invoice", [i for i in invoice if i["due_date"].startswith("2026-12")]),
    ("cara", "facturas emitidas en el primer trimestre de 2026", "invoice",
     [i for i in invoice if "2026-01-01" <= i["issue_date"] <= "2026-03-31"]),
    ("cara", "factures payées en novembre 2025", "invoice",
     [i for i in invoice if i["paid_date"].startswith("2025-11")]),
    # the object from the head noun, conditions through parents
    ("cara", "invoices of accounts in Germany", "invoice", [i for i in invoice if acc_of(i, "billing_country", "Germany")]),
    ("ava", "contacts at education accounts", "contact", [c for c in contact if acc_of(c, "industry", "education")]),
    ("ava", "deals of hot accounts", "opportunity", [o for o in ava_opps if acc_of(o, "rating", "hot")]),
    ("cara", "lines on Genco Group's invoices", "invoice_line", [x for x in line if inv[x["invoice"]]["account"] == GENCO]),
    ("ava", "Notizen zu Kunden in Paris", "note",
     [n for n in note if acc_of(n, "type", "customer") and acc_of(n, "billing_city", "Paris")]),
    # kinds no issue names
    ("ava", "Eve's accounts", "account", [a for a in account if a["owner"] == "eve"]),
    ("ava", "could you please show me the warm accounts in Austin", "account",
     [a for a in account if a["rating"] == "warm" and a["billing_city"] == "Austin"]),
    ("cara", "OVERDUE INVOICES IN POUNDS", "invoice",
     [i for i in invoice if i["status"] == "overdue" and i["currency_code"] == "GBP"]),
    ("cara", "invocies in draft", "invoice", [i for i in invoice if i["status"] == "draft"]),
    ("ava", "contacts named Khan", "contact", [c for c in contact if c["last_name"] == "Khan"]),
    ("cara", "invoice INV-2025-00001", "invoice", [i for i in invoice if i["number"] == "INV-2025-00001"]),
    # what cannot be said yet
    ("cara", "the median invoice total", "invoice", None),
    ("ava", "which deals have a margin higher than their probability?", "opportunity", None),
    ("ava", "and the ones in Berlin?", "account", None),
]

if __name__ == "__main__":
    for user, question, obj, expected in cases:
        if expected is not None and not expected:
            raise SystemExit(f"no expected rows: {question}")
    write_ask_cases("ask-heldout6", cases, ("highest", "earliest", "bottom", "most recent", "más alta", "größte"))
