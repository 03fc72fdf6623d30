"""An MCP client of the official Python SDK (PyPI `mcp`): its streamable-HTTP transport and ClientSession, with the
access token signin hands out (`SIGNIN_ACCESS_TOKEN`, as `signin exec --resource URL -- ...` sets it). Initializes,
lists the tools and, where the server has them (the project's test server does), calls `add` with 2 and 3 and
`server_name`; prints one JSON line: {"tools", "sum", "server"} (the last two only where called).

Usage: mcp_client.py URL
"""
import asyncio
import json
import os
import sys

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str) -> None:
    headers = {"Authorization": "Bearer " + os.environ["SIGNIN_ACCESS_TOKEN"]}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                names = sorted(t.name for t in tools.tools)
                text = lambda r: "".join(getattr(c, "text", "") for c in r.content)
                out = {"tools": names}
                # The project's test server's tools, where the server has them (any other MCP server: its tools listed).
                if "add" in names:
                    out["sum"] = text(await session.call_tool("add", {"a": 2, "b": 3}))
                if "server_name" in names:
                    out["server"] = text(await session.call_tool("server_name", {}))
                print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
