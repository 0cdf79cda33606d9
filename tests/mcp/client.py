"""A real MCP client — the official Python SDK (`mcp` from PyPI) — driving
`countersign-cli mcp` over stdio as one user, printing the session as a transcript and
checking what it must show: the tools, a query with the user's permissions, a summary (when
the workspace has a model), a proposal that writes nothing, and a refused tool.

    python client.py CLI WORKSPACE USER [--summarize]
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def show(label, value):
    text = json.dumps(value, ensure_ascii=False)
    print(f"{label} {text if len(text) <= 600 else text[:600] + ' …'}", flush=True)


def result_of(r):
    text = "".join(c.text for c in r.content if c.type == "text")
    return r.is_error, (r.structured_content if r.structured_content is not None else json.loads(text))


async def main(cli, workspace, user, summarize):
    params = StdioServerParameters(command=cli, args=["--workspace", workspace, "--as", user, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            show("→ initialize ←", {"server": init.server_info.name, "version": init.server_info.version,
                                     "protocol": init.protocol_version, "instructions": init.instructions})
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            show("→ tools/list ←", names)

            async def call(name, arguments):
                show(f"→ tools/call {name}", arguments)
                r = await session.call_tool(name, arguments)
                is_error, value = result_of(r)
                show("  ← error" if is_error else "  ←", value)
                return is_error, value

            is_error, described = await call("describe_objects", {"object": "opportunity"})
            fields = [f["key"] for f in described["objects"][0]["fields"]]
            assert not is_error and "margin_pct" not in fields, fields
            is_error, rows = await call("query_records", {"object": "opportunity", "fields": ["name", "stage", "amount", "account"],
                                                          "filters": {"field": "stage", "op": "eq", "value": "negotiation"},
                                                          "sort": [{"field": "amount", "direction": "desc"}], "limit": 5})
            assert not is_error and rows["records"], rows
            biggest = rows["records"][0]["id"]
            is_error, e = await call("query_records", {"object": "opportunity", "fields": ["margin_pct"]})
            assert is_error and e["code"] == "record.invalid_value", e
            if summarize:
                # The summary is of the biggest deal's account. The 0.5B model writes nothing
                # the kernel's checks accept for some single opportunities (it loops on a word
                # when it cannot copy digits), and a typed `contract` refusal is then the right
                # answer; its account summaries pass. A second try is taken only after such a
                # refusal; any other error, or a refusal twice, fails the test.
                account = rows["records"][0]["account"]
                for attempt in (1, 2):
                    is_error, summary = await call("summarize_record", {"object": "account", "id": account})
                    if not (is_error and summary.get("code") == "contract"):
                        break
                assert not is_error and summary["sentences"], summary
                # Each citation is a record's field, or a rollup with the set it is computed
                # over, whose filter lists that set's rows through query_records.
                cites = [c for s in summary["sentences"] for c in s["cites"]]
                for c in cites:
                    assert ("rollup" in c and {"object", "filter", "operation"} <= c["set"].keys()) or (
                        c["object"] and c["id"] and c["field"]), c
                sets = [c["set"] for c in cites if "rollup" in c]
                if sets:
                    is_error, rows = await call("query_records", {"object": sets[0]["object"], "filters": sets[0]["filter"]})
                    assert not is_error and rows["records"], rows
            is_error, proposal = await call("propose_update", {"object": "opportunity", "id": biggest,
                                                               "values": {"next_step": "Send the revised terms"},
                                                               "rationale": "asked for in the call"})
            assert not is_error and proposal["state"] == "open", proposal
            is_error, e = await call("propose_record", {"object": "opportunity", "values": {"name": "x"}})
            assert is_error and e["code"] == "permission", e
            print("transcript: ok", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], "--summarize" in sys.argv[4:]))
