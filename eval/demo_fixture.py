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


def top(rows, key, n, reverse):
    """The first n rows by key; refuses a tie across the cut (the answer would be a choice)."""
    ranked = sorted(rows, key=key, reverse=reverse)
    if len(ranked) > n and key(ranked[n - 1]) == key(ranked[n]):
        raise SystemExit(f"a tie at the cut: {key(ranked[n])}")
    return ranked[:n]


def acc_of(r, key, value):
    """Whether the account of record `r` has `value` in `key`."""
    return acc[r["account"]][key] == value


def with_ties(rows, key, n, reverse):
    """The first n rows by key and every row tying with the n-th (SQL's WITH TIES): what Ask
    shows for a count that cuts through equal values."""
    ranked = sorted(rows, key=key, reverse=reverse)
    cut = key(ranked[n - 1])
    return [r for r in ranked if (key(r) >= cut if reverse else key(r) <= cut)]


def write_ask_cases(name, cases, ordered_by, unordered=(), empty=()):
    """Writes eval/<name>.jsonl from (user, question, object, expected rows or None for a
    refusal); a question with one of the words `ordered_by` expects its rows in order, but for
    the case numbers in `unordered` (rows tying at a cut); the case numbers in `empty` expect
    no row or a refusal."""
    import json

    out = ROOT / "eval" / f"{name}.jsonl"
    with open(out, "w") as f:
        for n, (user, question, obj, expected) in enumerate(cases, 1):
            case = {"id": f"{name}-{n:02d}", "user": user, "question": question, "object": obj}
            if n in empty:
                case["expect_refusal_or_empty"] = True
            elif expected is None:
                case["expect_refusal"] = True
            else:
                ordered = any(w in question for w in ordered_by) and n not in unordered
                ids = [r["id"] for r in expected]
                case.update({"expected_ids": ids if ordered else sorted(ids), "ordered": ordered})
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {out}")
