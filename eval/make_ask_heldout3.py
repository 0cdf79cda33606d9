#!/usr/bin/env python3
"""Writes eval/ask-heldout3.jsonl: a third set of Ask cases kept apart, written after the
changes that the second held-out set's misses led to and before its results with them were
seen — never tuned to. Wordings, languages and kinds chosen to differ from every other set.
Run: python3 eval/make_ask_heldout3.py
"""

import datetime as dt
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from demo_fixture import CLOSED, UNPAID, acc, account, by_name, contact, inv, invoice, line, note, num, opps, top, write_ask_cases  # noqa: E402

today = dt.date.today()
NIMBUS = by_name["Nimbus GmbH"]
TYRELL = by_name["Tyrell Corp"]
ava_opps = opps("ava")
year = today.year

cases = [
    ("ava", "customers in Berlin", "account", [a for a in account if a["type"] == "customer" and a["billing_city"] == "Berlin"]),
    ("ava", "prospects that are not in the US", "account",
     [a for a in account if a["type"] == "prospect" and a["billing_country"] != "United States"]),
    ("cara", "voided invoices", "invoice", [i for i in invoice if i["status"] == "void"]),
    ("cara", "draft invoices in dollars", "invoice", [i for i in invoice if i["status"] == "draft" and i["currency_code"] == "USD"]),
    ("ava", "Which company has the fewest employees?", "account", top(account, lambda a: int(a["employees"]), 1, False)),
    ("ava", "top 5 accounts by annual revenue", "account", top(account, lambda a: num(a["annual_revenue"]), 5, True)),
    ("ava", "deals won this year", "opportunity",
     [o for o in ava_opps if o["stage"] == "closed_won" and o["close_date"].startswith(str(year))]),
    ("ava", "opportunities closing in Q3 2026", "opportunity",
     [o for o in ava_opps if "2026-07-01" <= o["close_date"] <= "2026-09-30"]),
    ("cara", "invoices issued since October 2026", "invoice", [i for i in invoice if i["issue_date"] >= "2026-10-01"]),
    ("cara", "invoices of Nimbus GmbH that are still open", "invoice",
     [i for i in invoice if i["account"] == NIMBUS and i["status"] in UNPAID]),
    ("ava", "contacts at Tyrell Corp", "contact", [c for c in contact if c["account"] == TYRELL]),
    ("ava", "the contacts of accounts rated hot", "contact", [c for c in contact if acc[c["account"]]["rating"] == "hot"]),
    ("ava", "accounts with more than 5 contacts", "account",
     [a for a in account if sum(1 for c in contact if c["account"] == a["id"]) > 5]),
    ("ava", "accounts without notes", "account", [a for a in account if not any(n["account"] == a["id"] for n in note)]),
    ("ava", "Kunden in Deutschland", "account", [a for a in account if a["type"] == "customer" and a["billing_country"] == "Germany"]),
    ("cara", "Rechnungen über 50.000", "invoice", [i for i in invoice if num(i["total"]) > 50000]),
    ("ava", "Verkaufschancen ohne nächsten Schritt", "opportunity", [o for o in ava_opps if not o["next_step"]]),
    ("ava", "les comptes clients à Paris", "account",
     [a for a in account if a["type"] == "customer" and a["billing_city"] == "Paris"]),
    ("cara", "factures impayées", "invoice", [i for i in invoice if i["status"] in UNPAID]),
    ("ava", "opportunités gagnées", "opportunity", [o for o in ava_opps if o["stage"] == "closed_won"]),
    ("ava", "contactos en ventas", "contact", [c for c in contact if c["department"] == "sales"]),
    ("cara", "facturas pagadas en euros", "invoice", [i for i in invoice if i["status"] == "paid" and i["currency_code"] == "EUR"]),
    ("ava", "oportunidades que no están cerradas", "opportunity", [o for o in ava_opps if o["stage"] not in CLOSED]),
    ("ava", "accounts in the software or finance industries", "account",
     [a for a in account if a["industry"] in ("software", "finance")]),
    ("ava", "accounts that are neither hot nor cold", "account", [a for a in account if a["rating"] not in ("hot", "cold")]),
    ("ava", "opportunities with a probability of at least 75", "opportunity",
     [o for o in ava_opps if num(o["probability"]) >= 75]),
    ("ava", "accounts with revenue under 5 million", "account", [a for a in account if num(a["annual_revenue"]) < 5000000]),
    ("cara", "invoice lines for SUB-PRO", "invoice_line", [x for x in line if x["product_code"] == "SUB-PRO"]),
    ("ava", "How many contacts work in engineering?", "contact", [c for c in contact if c["department"] == "engineering"]),
    ("ava", "compare the revenue of Globex Holdings and Acme Labs", "account", None),
]


if __name__ == "__main__":
    write_ask_cases("ask-heldout3", cases, ("fewest", "top 5"))
