"""A stdio MCP client of the official Python SDK (PyPI `mcp`: `stdio_client` and `ClientSession`), as Claude Desktop
or an IDE is one: it launches a command (`signin mcp URL ...`) and speaks JSON-RPC over its standard input and
output. Runs one scenario against whatever MCP server that command reaches, and prints one JSON line of what it saw.

Usage: mcp_stdio_client.py SCENARIO COMMAND [ARGS...]
  basic     initialize, list the tools, call add(2, 3)          -> {"tools", "sum", "version"}
  progress  call steps(5) with a progress callback              -> {"progress": [1..5], "result"}
  sampling  call ask("hi"): the server asks the client to sample on the call's stream (answered "sampled: hi");
            call later(): the server logs and asks to sample on its own stream; waits for the log message
                                                                -> {"asked", "log", "later"}
  big       call big(1048576)                                   -> {"length"}
  many      200 calls of add(i, 1), each checked                -> {"calls", "wrong"}
  slow      call slow(MS) (MS from $SLOW_MS, default 200)       -> {"result"}
  renew     call add(1, 1); end every session at the server (POST $MCP_CONTROL/_end_sessions); call add(2, 2)
                                                                -> {"first", "second"}
  modern    as the SDK's own client in its default mode: `server/discover` first (MCP 2026-07-28), the initialize
            handshake when the server answers anything but -32022; then list the tools and call add(2, 3) and
            regional("eu-west ü")                                -> {"version", "sum", "region"}, or {"error"}
  elicit    declares URL-mode elicitation; a page the command offers (`elicitation/create`, mode url) is opened with
            the browser stand-in ($ELICIT_BROWSER) and accepted; then as basic  -> {"offered", "sum"}
  stepup    make the server require `admin` (POST $MCP_CONTROL/_require); call add(2, 3)  -> {"sum"}
The command's standard error goes to this script's standard error. With MCP_CLIENT_DEFAULT_ENV=1 the command gets the
SDK's default environment (HOME LOGNAME PATH SHELL TERM USER only), as Claude Desktop and the IDEs start it; otherwise
this script's whole environment.
"""
import asyncio
import json
import os
import subprocess
import sys

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def main(scenario: str, command: str, args: list) -> None:
    logs: list = []
    logged = asyncio.Event()

    sampled_background = asyncio.Event()

    async def sampling(context, params):
        prompt = "".join(getattr(m.content, "text", "") for m in params.messages)
        if prompt == "background":
            sampled_background.set()
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="sampled: " + prompt), model="test")

    offered: list = []

    async def elicitation(context, params):
        if getattr(params, "mode", None) == "url":
            offered.append(params.url)
            subprocess.Popen([sys.executable, os.environ["ELICIT_BROWSER"], params.url], stdin=subprocess.DEVNULL)
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="decline")

    async def logging(params):
        logs.append(params.data)
        logged.set()

    default = os.environ.get("MCP_CLIENT_DEFAULT_ENV") == "1"
    server = StdioServerParameters(command=command, args=args, env=None if default else dict(os.environ))
    async with stdio_client(server) as streams:
        read, write = streams[0], streams[1]
        callbacks = {"elicitation_callback": elicitation} if scenario == "elicit" else {}
        async with ClientSession(read, write, sampling_callback=sampling, logging_callback=logging, **callbacks) as session:
            out: dict = {}
            if scenario == "modern":
                try:
                    await session.discover()
                except MCPError as e:
                    if e.code == UNSUPPORTED_PROTOCOL_VERSION:
                        print(json.dumps({"error": e.code, "message": str(e), "data": e.error.data}), flush=True)
                        return
                    await session.initialize()
                except RuntimeError as e:
                    print(json.dumps({"error": "runtime", "message": str(e)}), flush=True)
                    return
                try:
                    await session.list_tools()
                    out = {"version": session.protocol_version, "sum": text(await session.call_tool("add", {"a": 2, "b": 3})),
                           "region": text(await session.call_tool("regional", {"region": "eu-west \u00fc"}))}
                except MCPError as e:
                    out = {"error": e.code, "message": str(e), "data": e.error.data, "version": session.protocol_version}
                print(json.dumps(out), flush=True)
                return
            init = await session.initialize()
            if scenario == "elicit":
                out = {"offered": offered, "sum": text(await session.call_tool("add", {"a": 2, "b": 3}))}
            elif scenario == "basic":
                tools = await session.list_tools()
                out = {"tools": sorted(t.name for t in tools.tools), "sum": text(await session.call_tool("add", {"a": 2, "b": 3})),
                       "version": init.protocol_version}
            elif scenario == "progress":
                seen: list = []

                async def progress(p, total, message):
                    seen.append(p)
                out = {"result": text(await session.call_tool("steps", {"n": 5}, progress_callback=progress)), "progress": seen}
            elif scenario == "sampling":
                asked = text(await session.call_tool("ask", {"prompt": "hi"}))
                later = text(await session.call_tool("later", {}))
                await asyncio.wait_for(logged.wait(), 20)
                await asyncio.wait_for(sampled_background.wait(), 20)
                out = {"asked": asked, "later": later, "log": logs[0], "sampled_background": True}
            elif scenario == "big":
                out = {"length": len(text(await session.call_tool("big", {"size": 1 << 20})))}
            elif scenario == "many":
                wrong = 0
                for i in range(200):
                    if text(await session.call_tool("add", {"a": i, "b": 1})) != str(i + 1):
                        wrong += 1
                out = {"calls": 200, "wrong": wrong}
            elif scenario in ("renew", "stepup"):
                import urllib.request
                first = text(await session.call_tool("add", {"a": 1, "b": 1}))
                path, body = ("/_end_sessions", b"") if scenario == "renew" else ("/_require", b'["admin"]')
                await asyncio.to_thread(urllib.request.urlopen, urllib.request.Request(os.environ["MCP_CONTROL"] + path, data=body, method="POST"))
                out = {"first": first, "second": text(await session.call_tool("add", {"a": 2, "b": 2}))}
            elif scenario == "slow":
                out = {"result": text(await session.call_tool("slow", {"ms": int(os.environ.get("SLOW_MS", "200"))}))}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
