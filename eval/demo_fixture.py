"""The demo fixture's records (fixtures/demo/data/*.csv) as the eval-set scripts read them, with
the demo's access rule for opportunities (private to their owner but for ava and cara, who see
all). Imported by the make_ask_*.py scripts beside it."""

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "fixtures" / "demo" / "data"


def rows(obj):
    with open(DATA / f"{obj}.csv", newline="") as f:
        return list(csv.DictReader(f))


account, contact, opportunity, invoice, line, note = (
    rows(o) for o in ["account", "contact", "opportunity", "invoice", "invoice_line", "note"]
)
acc = {a["id"]: a for a in account}
inv = {i["id"]: i for i in invoice}
by_name = {a["name"]: a["id"] for a in account}
UNPAID = {"sent", "overdue"}
CLOSED = {"closed_won", "closed_lost"}


def num(v):
    return float(v or 0)


def opps(user):
    return [o for o in opportunity if user in ("ava", "cara") or o["owner"] == user]
