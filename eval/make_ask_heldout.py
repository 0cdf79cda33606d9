#!/usr/bin/env python3
"""Writes eval/ask-heldout.jsonl: Ask cases written after the reader's code and before any
further change to it, and never used to change it — a measure kept apart from the sets the code
was fixed against (ask-grammar, ask-other). Wordings, languages and kinds chosen to differ from
those sets. Run: python3 eval/make_ask_heldout.py
"""

import datetime as dt
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from demo_fixture import acc, account, by_name, contact, inv, invoice, line, note, num, opps, top, write_ask_cases  # noqa: E402

today = dt.date.today()
INITECH = by_name["Initech GmbH"]

cases = [
    ("ava", "Every account outside Germany", "account", [a for a in account if a["billing_country"] != "Germany"]),
    ("cara", "invoices excluding the draft ones", "invoice", [i for i in invoice if i["status"] != "draft"]),
    ("ava", "contacts lacking a phone number", "contact", [c for c in contact if not c["phone"]]),
    ("ava", "What's our single largest opportunity?", "opportunity",
     sorted(opps("ava"), key=lambda o: num(o["amount"]), reverse=True)[:1]),
    ("ava", "the ten smallest accounts by employees", "account",
     sorted(account, key=lambda a: int(a["employees"]))[:10]),
    ("cara", "invoices over twelve thousand five hundred", "invoice", [i for i in invoice if num(i["total"]) > 12500]),
    ("cara", "invoices issued in Q4 2025", "invoice", [i for i in invoice if "2025-10-01" <= i["issue_date"] <= "2025-12-31"]),
    ("cara", "Rechnungen von Initech GmbH, die bezahlt sind", "invoice",
     [i for i in invoice if i["account"] == INITECH and i["status"] == "paid"]),
    ("ava", "Kontakte in der Abteilung Finanzen", "contact", [c for c in contact if c["department"] == "finance"]),
    ("ava", "comptes du secteur de la santé sans contacts", "account",
     [a for a in account if a["industry"] == "healthcare" and not any(c["account"] == a["id"] for c in contact)]),
    ("cara", "factures de Initech GmbH", "invoice", [i for i in invoice if i["account"] == INITECH]),
    ("ava", "cuentas del sector minorista", "account", [a for a in account if a["industry"] == "retail"]),
    ("ava", "oportunidades de Initech GmbH", "opportunity", [o for o in opps("ava") if o["account"] == INITECH]),
    ("ava", "accounts rated cold that aren't churned", "account",
     [a for a in account if a["rating"] == "cold" and a["type"] != "churned"]),
    ("ava", "average opportunity amount by stage", "opportunity", None),
    ("cara", "lines of Initech GmbH's invoices", "invoice_line",
     [x for x in line if inv[x["invoice"]]["account"] == INITECH]),
    ("ava", "notes on accounts in Toronto", "note", [n for n in note if acc[n["account"]]["billing_city"] == "Toronto"]),
    ("ava", "opportunities from partners or referrals", "opportunity",
     [o for o in opps("ava") if o["lead_source"] in ("partner", "referral")]),
    ("ava", "accounts with a website in Spain", "account",
     [a for a in account if a["website"] and a["billing_country"] == "Spain"]),
    ("ava", "contacts at Initech GmbH who are not in sales", "contact",
     [c for c in contact if c["account"] == INITECH and c["department"] != "sales"]),
]


if __name__ == "__main__":
    write_ask_cases("ask-heldout", cases, ("largest", "smallest"))
