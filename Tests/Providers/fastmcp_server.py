"""fastmcp 4.1.6 (PyPI `fastmcp`, software no one here wrote) as an MCP server with enterprise-managed authorization on:
its `OAuthProxy` with `IdentityAssertion(trusted_issuers=[IDP])`, so its token endpoint takes the RFC 7523 jwt-bearer
grant carrying an ID-JAG the IdP at issuer IDP signed (its JWKS found by OpenID discovery), and mints its own access
token for the asserted subject; clients register themselves (RFC 7591, public clients, `none`). The upstream
provider of the proxy's browser sign-in is the IdP too (never used here). One tool, `add`.

`GET /_clients` lists the client IDs its registration endpoint gave out (read from its answers), in order.

Usage: fastmcp_server.py IDP. Prints `READY <port> <mcp url>` and runs until standard input closes."""
import asyncio
import json
import socket
import sys

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.auth import IdentityAssertion, OAuthProxy
from fastmcp.server.auth.providers.jwt import JWTVerifier


def bound():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock, sock.getsockname()[1]


CLIENTS = []


def recording_registrations(app):
    """The app, with `GET /_clients` answered here and the client ID of each registration answer noted."""
    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/_clients":
            body = json.dumps(CLIENTS).encode()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] != "http" or scope["path"] != "/register":
            return await app(scope, receive, send)
        chunks = []

        async def noting(message):
            if message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    try:
                        CLIENTS.append(json.loads(b"".join(chunks))["client_id"])
                    except (ValueError, KeyError):
                        pass
            await send(message)
        await app(scope, receive, noting)
    return wrapped


async def main():
    idp = sys.argv[1]
    sock, port = bound()
    base = f"http://127.0.0.1:{port}"
    auth = OAuthProxy(upstream_authorization_endpoint=idp + "/authorize", upstream_token_endpoint=idp + "/token",
                      upstream_client_id="fastmcp-upstream", upstream_client_secret="fastmcp-upstream-secret",
                      token_verifier=JWTVerifier(jwks_uri=idp + "/jwks", issuer=idp), base_url=base,
                      identity_assertion=IdentityAssertion(trusted_issuers=[idp]), jwt_signing_key="fastmcp-test-signing-key-0123456789",
                      require_authorization_consent=False)
    server = FastMCP("fast", auth=auth)

    @server.tool
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    app = recording_registrations(server.http_app(path="/mcp"))
    uv = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    task = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started:
        await asyncio.sleep(0.01)
    print("READY", port, base + "/mcp", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    uv.should_exit = True
    await asyncio.gather(task, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())
