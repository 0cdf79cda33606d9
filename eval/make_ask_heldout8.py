#!/usr/bin/env python3
"""Writes eval/ask-heldout8.jsonl: an eighth set of Ask cases kept apart, written (2026-12-08)
after heldout7's fixes and before any run on it — its first run is the measure the closing note
reports; never tuned to. Wordings chosen to differ from every other set: questions with a verb
first, 'who', 'anything', 'ever', mixed languages in one question, a value and its field said
apart, 'at most', ranges in words, 'this year so far', half-year and week phrases, ownership by
'belonging to', counts of related records, and sums and ratios the language cannot say.
Run: python3 eval/make_ask_heldout8.py
"""

import datetime as dt

from demo_fixture import CLOSED, UNPAID, acc, acc_of, account, by_name, contact, inv, invoice, line, note, num, opps, top, with_ties, write_ask_cases

today = dt.date.today()
ava_opps = opps("ava")


cases = [
    # negation
    ("ava", "find deals whose stage is anything but prospecting", "opportunity",
     [o for o in ava_opps if o["stage"] != "prospecting"]),
    ("ava", "accounts not rated hot", "account", [a for a in account if a["rating"] != "hot"]),
    ("ava", "contacts outside the finance department", "contact", [c for c in contact if c["department"] != "finance"]),
    ("ava", "Rechnungen, die nicht storniert sind", "invoice", [i for i in invoice if i["status"] != "void"]),
    ("ava", "cuentas que no son socios", "account", [a for a in account if a["type"] != "partner"]),
    ("ava", "contacts sans rôle de CFO", "contact", [c for c in contact if c["title"] != "CFO"]),
    # blank / not blank
    ("cara", "which invoices have no purchase order?", "invoice", [i for i in invoice if not i["po_number"]]),
    ("cara", "invoices that were never paid", "invoice", [i for i in invoice if not i["paid_date"]]),
    ("ava", "oportunidades sin próximo paso", "opportunity", [o for o in ava_opps if not o["next_step"]]),
    # superlatives and top N
    ("ava", "who has the lowest probability of closing?", "opportunity", None),  # ties at 0: asked or widened
    ("cara", "top three invoices in pounds", "invoice",
     top([i for i in invoice if i["currency_code"] == "GBP"], lambda i: num(i["total"]), 3, True)),
    ("ava", "our newest opportunity", "opportunity", top(ava_opps, lambda o: o["close_date"], 1, True)),
    ("ava", "le compte avec le plus gros chiffre d'affaires", "account",
     top(account, lambda a: num(a["annual_revenue"]), 1, True)),
    ("cara", "die fünf ältesten Rechnungen", "invoice", None),  # ties on the issue date: set below
    # numbers
    ("ava", "accounts with at most 1000 employees", "account", [a for a in account if num(a["employees"]) <= 1000]),
    ("ava", "deals from 50k to 100k", "opportunity", [o for o in ava_opps if 50000 <= num(o["amount"]) <= 100000]),
    ("cara", "invoices of exactly 16800", "invoice", [i for i in invoice if num(i["total"]) == 16800]),
    ("ava", "Konten mit weniger als neunhundert Mitarbeitern", "account", [a for a in account if num(a["employees"]) < 900]),
    ("cara", "factures de moins de mille euros", "invoice",
     [i for i in invoice if num(i["total"]) < 1000 and i["currency_code"] == "EUR"]),
    # dates
    ("cara", "invoices issued this year so far", "invoice", [i for i in invoice if i["issue_date"] >= f"{today.year}-01-01"]),
    ("ava", "deals closing in the first half of 2026", "opportunity",
     [o for o in ava_opps if "2026-01-01" <= o["close_date"] <= "2026-06-30"]),
    ("cara", "invoices due before March 2026", "invoice", [i for i in invoice if i["due_date"] < "2026-03-01"]),
    ("ava", "notes written in 2025", "note", [n for n in note if n["written_at"].startswith("2025")]),
    ("cara", "Rechnungen, die im Mai 2026 fällig waren", "invoice", [i for i in invoice if i["due_date"].startswith("2026-05")]),
    ("ava", "oportunidades que cierran en 2027", "opportunity", None),  # none close in 2027: set below
    # head noun and parents
    ("ava", "contacts belonging to partner accounts", "contact", [c for c in contact if acc_of(c, "type", "partner")]),
    ("cara", "lines on invoices that are overdue", "invoice_line",
     [x for x in line if inv[x["invoice"]]["status"] == "overdue"]),
    ("ava", "notes on Globex Holdings", "note", [n for n in note if n["account"] == by_name["Globex Holdings"]]),
    ("ava", "Kontakte von Konten in Kanada", "contact", [c for c in contact if acc_of(c, "billing_country", "Canada")]),
    ("cara", "factures des comptes de Lyon", "invoice", [i for i in invoice if acc_of(i, "billing_city", "Lyon")]),
    # kinds no issue names
    ("ava", "accounts belonging to Ben", "account", [a for a in account if a["owner"] == "ben"]),
    ("ava", "who are the heads of procurement?", "contact", [c for c in contact if c["title"] == "Head of Procurement"]),
    ("ava", "give me every opportunity in the negotiation stage", "opportunity",
     [o for o in ava_opps if o["stage"] == "negotiation"]),
    ("ava", "accounts with at least 5 opportunities", "account",
     [a for a in account if sum(1 for o in ava_opps if o["account"] == a["id"]) >= 5]),
    ("cara", "invoices in EUR or GBP that are overdue", "invoice",
     [i for i in invoice if i["currency_code"] in ("EUR", "GBP") and i["status"] == "overdue"]),
    ("ava", "manufacturing firms in the US", "account",
     [a for a in account if a["industry"] == "manufacturing" and a["billing_country"] == "United States"]),
    ("ava", "Kontakte in Sales", "contact", [c for c in contact if c["department"] == "sales"]),
    # what cannot be said yet
    ("cara", "what share of invoices are overdue?", "invoice", None),
    ("ava", "how many deals did each rep win?", "opportunity", None),
    ("cara", "invoices paid more than 30 days late", "invoice", None),
]


# Cases whose count may cut through equal values take the WITH TIES reading the kernel gives
# (every record tying at the cut); where there is a tie they are judged unordered. (Corrected
# after the first run: case 14 has no tie at its cut, and judging it unordered failed a right
# answer on `has_more`; the first run's figure in the note counts it as it was.)
TIES = {10}
cases[9] = (cases[9][0], cases[9][1], cases[9][2], with_ties(ava_opps, lambda o: num(o["probability"]), 1, False))
cases[13] = (cases[13][0], cases[13][1], cases[13][2], with_ties(invoice, lambda i: i["issue_date"], 5, False))
# Nothing closes in 2027 in the demo: the honest answer is an empty table or being told so.
EMPTY = {25}

if __name__ == "__main__":
    for user, question, obj, expected in cases:
        if expected is not None and not expected:
            raise SystemExit(f"no expected rows: {question}")
    write_ask_cases(
        "ask-heldout8", cases, ("newest", "top three", "plus gros", "ältesten"), unordered=TIES, empty=EMPTY
    )
