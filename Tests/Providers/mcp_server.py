"""The Model Context Protocol's own Python SDK (PyPI `mcp`) as a test server, software no one here wrote: its
authorization-server routes (`create_auth_routes`: RFC 8414 metadata, /authorize, /token, /register, /revoke; the
SDK's handlers check PKCE, redirect URIs, client authentication and registered scopes) over a minimal in-memory
provider, and its MCP server (`MCPServer` with `AuthSettings` and a token verifier: RFC 9728 metadata, 401 and 403
challenges naming it, tokens checked for the server they were issued for), on 127.0.0.1 at ports the OS chooses.
The provider approves every authorization at once (no login page), for the subject "carol". It has no OpenID: no
ID token, no JWKS, no userinfo.

Usage: mcp_server.py [--split] [--mcp SCOPES]... [--require-resource] [--unlisted SCOPE] [--sse]
  (default)          one server: the authorization server and one MCP server at /mcp, requiring scope `mcp`
  --split            the authorization server alone on its port; each MCP server on a port of its own
  --mcp SCOPES       (with --split, repeatable) an MCP server requiring these comma-separated scopes
  --require-resource the token endpoint refuses a code exchange or a refresh without `resource` (RFC 8707 2.2)
  --sse              (without --split) the MCP server speaks the legacy HTTP+SSE transport (2024-11-05) at /sse
  --resumable        (without --split) its streams are resumable (an event store, retry 100 ms): `interrupted(ms)`
                     closes its call's stream before it answers
  --modern-only      (without --split) the MCP endpoint serves MCP 2026-07-28 alone (stateless deployments): a
                     request whose MCP-Protocol-Version is not 2026-07-28 (an initialize, say) is 400 with the JSON-RPC
                     error -32022 naming `supported`
  --legacy-only      (without --split) the MCP endpoint serves 2025-11-25 and earlier alone: a 2026-07-28 request is
                     400 "Missing session ID", as an SDK of the handshake era answers one
  --public           (without --split) the MCP server takes no token at all (a public server)
  --api-key KEY      (without --split, with --public) the MCP server wants `X-Api-Key: KEY`, else 401 with
                     `WWW-Authenticate: ApiKey` and no protected resource metadata
  --identity-assertion IDP  (without --split) the authorization server takes ID-JAGs from the enterprise IdP at
                     issuer IDP (MCP's enterprise-managed authorization: the RFC 7523 jwt-bearer grant, advertised as the
                     id-jag grant profile): the assertion's signature (the IdP's JWKS), `typ` oauth-id-jag+jwt, `aud`
                     this issuer, `client_id` the authenticated client, `exp`, and a `jti` never seen before are
                     checked; the access token is for the assertion's `resource`. The confidential client "ema-client"
                     (secret "ema-secret", client_secret_post or client_secret_basic) is registered from the start.
                     `GET /_stats` counts `idjag_redeemed` and `idjag_refused` (with the reasons)
  --foreign-endpoint (with --sse) the `endpoint` event names the message URL on another origin (`localhost` for
                     127.0.0.1: the same server under another name), as a server luring the client's token elsewhere
  --tls CERT_OUT     (without --split) over TLS with a fresh self-signed certificate for 127.0.0.1, written in PEM to
                     CERT_OUT (a company CA no client trusts unless told to); the issuer and the MCP URL are https
  --host NAME        (with --tls) the server is named NAME in its URLs and certificate (a company name that resolves
                     only through the company's proxy: connect_proxy.py); it still listens on 127.0.0.1
  --unlisted SCOPE   the authorization server's metadata does not list SCOPE in `scopes_supported` (its registration
                     still takes it): a client registered from the list does not cover a step-up to it
Prints `READY <port> <mcp url>...` (the authorization server's port, then each MCP server's URL) and runs until
standard input closes. `GET /_stats` on the authorization server's port: registrations, token requests and the
`resource` each carried, and the last authorization request's `resource` and scopes. `POST /_require` with a JSON
list of scopes: every MCP server requires those too from then on (403 `insufficient_scope` naming them: a step-up).
`POST /_forget`: every access token issued so far ends (the next request with one gets 401 invalid_token).
`POST /_restart`: as a development server restarted with its registrations in memory: every client, code and token
is forgotten (a refresh then gets `invalid_client`), and every MCP session ends (404).
`POST /_misbehave` with a JSON object (without --split), as a server a review attacked with:
  "calls": "401"           every `tools/call` is answered 401 invalid_token (after the session started)
  "calls": "new-scope"     every `tools/call` is answered 403 insufficient_scope naming a scope it never named before
  "calls": "write-admin"   a `tools/call` of `write` with a token without `admin` is 403 insufficient_scope naming
                           "admin" alone (and any other call with a token without `mcp`: 403 naming "mcp"): a read
                           tool and a write tool
  "refresh": "invalid_client"  every refresh is refused 401 invalid_client
  "ttl": N                 access tokens issued from now on live N seconds (3600 otherwise)
  "redirect": "same"       every POST to the MCP endpoint is 307 to `/mcp?moved=1` (counted in `moved`);
  "redirect": "other"      ... to `http://localhost:PORT/mcp?moved=1`, another origin
  "stream": "retry0"       the session's GET stream says `retry: 0` and ends at once, every time
  "stream": "alternate"    the session's GET stream is 401 and 200 (ended at once) by turns
`GET /_stats` counts `stream_gets` (GET requests to the MCP endpoint).
`POST /_end_sessions`: every MCP session ends (the next request naming one gets 404). A tool called with `"a": 500`
(without --split) is answered HTTP 500 in plain text, as a server failing one call.
`GET /_stats` also lists, for each request to an MCP endpoint, its method, session id and protocol version header
(`mcp_requests`), counts the GETs of a metadata document under `/.well-known/` (`metadata_gets`), and what the
background work of the `later` tool heard back (`background`).

Tools besides `add` and `server_name`: `steps(n)` reports n progress notifications, then answers; `big(size)`
answers a text of `size` bytes; `slow(ms)` answers after ms milliseconds; `ask(prompt)` asks the client to sample
(a server request on the call's stream) and answers with its text; `later()` answers at once, then, on the
session's own stream (GET), sends a log message and asks the client to sample, keeping the answer in `background`.
"""
import asyncio
import json
import secrets
import socket
import sys
import time
import urllib.parse

from typing import Annotated

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl, Field
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from mcp.server.auth.provider import AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken, TokenError, construct_redirect_uri
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage, TextContent
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SCOPES = ["mcp", "admin"] + [f"s{i}" for i in range(1, 9)]
STATS = {"registrations": 0, "token_requests": [], "authorize": None, "refreshes": 0, "mcp_requests": [], "background": []}
SERVERS: list = []
# Scopes every MCP server requires from now on, besides its own (`POST /_require` with a JSON list): a token without
# them gets 403 insufficient_scope naming them all (RFC 6750 3.1), which a client answers by stepping up.
EXTRA_REQUIRED: list = []
# --identity-assertion: the enterprise IdP's issuer, this authorization server's issuer, the ID-JAG ids seen.
IDP: list = []
ISSUER: list = []
SEEN_JTI: set = set()


class Provider:
    """Clients, codes and tokens in memory (the SDK's `OAuthAuthorizationServerProvider`)."""

    def __init__(self):
        self.clients, self.codes, self.refresh, self.access = {}, {}, {}, {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, info: OAuthClientInformationFull):
        STATS["registrations"] += 1
        self.clients[info.client_id] = info

    async def authorize(self, client, params: AuthorizationParams):
        STATS["authorize"] = {"resource": params.resource, "scopes": params.scopes}
        STATS["authorizations"] = STATS.get("authorizations", 0) + 1
        code = "code-" + secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
                                             code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
                                             redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                                             resource=params.resource, subject="carol")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, code):
        return self.codes.get(code)

    def issue(self, client_id, scopes, resource, subject):
        at, rt = "mcp-at-" + secrets.token_urlsafe(20), "mcp-rt-" + secrets.token_urlsafe(20)
        ttl = int(MISBEHAVE.get("ttl", 3600))
        self.access[at] = AccessToken(token=at, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + ttl, resource=resource, subject=subject)
        self.refresh[rt] = RefreshToken(token=rt, client_id=client_id, scopes=scopes, resource=resource, subject=subject)
        return OAuthToken(access_token=at, expires_in=ttl, scope=" ".join(scopes), refresh_token=rt)

    async def exchange_authorization_code(self, client, code: AuthorizationCode):
        if self.codes.pop(code.code, None) is None:
            raise TokenError("invalid_grant", "the code was used")
        return self.issue(client.client_id, code.scopes, code.resource, code.subject)

    async def load_refresh_token(self, client, token):
        return self.refresh.get(token)

    async def exchange_refresh_token(self, client, refresh: RefreshToken, scopes):
        STATS["refreshes"] += 1
        del self.refresh[refresh.token]  # one use: rotated
        return self.issue(client.client_id, scopes, refresh.resource, refresh.subject)

    async def load_access_token(self, token):
        t = self.access.get(token)
        return t if t and (t.expires_at or 0) > time.time() else None

    async def exchange_identity_assertion(self, client, params):
        """The RFC 7523 jwt-bearer grant with an ID-JAG (SEP-990), checked as the SDK's docstring lists."""
        import jwt as pyjwt

        def refuse(reason):
            STATS.setdefault("idjag_refusals", []).append(reason)
            STATS["idjag_refused"] = STATS.get("idjag_refused", 0) + 1
            return TokenError("invalid_grant", reason)
        try:
            header = pyjwt.get_unverified_header(params.assertion)
            if header.get("typ") != "oauth-id-jag+jwt":
                raise refuse("typ is not oauth-id-jag+jwt")
            key = pyjwt.PyJWKClient(IDP[0] + "/jwks").get_signing_key_from_jwt(params.assertion)
            claims = pyjwt.decode(params.assertion, key.key, algorithms=["RS256"], audience=ISSUER[0], issuer=IDP[0],
                                  options={"require": ["exp", "sub", "jti", "aud", "iss"]})
        except TokenError:
            raise
        except Exception as e:  # noqa: BLE001 - the reason is the test's to read
            raise refuse(f"the assertion does not verify: {e}")
        if claims.get("client_id") != client.client_id:
            raise refuse("client_id does not name the authenticated client")
        if claims["jti"] in SEEN_JTI:
            raise refuse("replayed jti")
        SEEN_JTI.add(claims["jti"])
        STATS["idjag_redeemed"] = STATS.get("idjag_redeemed", 0) + 1
        token = self.issue(client.client_id, (claims.get("scope") or "mcp").split(), claims.get("resource"), claims["sub"])
        return OAuthToken(access_token=token.access_token, expires_in=token.expires_in, scope=token.scope)

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class Verifier:
    """The MCP servers' token verifier: the authorization server's own records (as introspection would answer)."""

    def __init__(self, provider):
        self.provider = provider

    async def verify_token(self, token):
        return await self.provider.load_access_token(token)


async def read_body(receive) -> bytes:
    """A request's whole body, as ASGI hands it in parts."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def replaying(body: bytes, receive):
    """An ASGI `receive` that hands the app `body` (already read) and then whatever comes next: the real disconnect,
    when it comes (a streamed answer listens for it)."""
    sent = False

    async def replay():
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}
    return replay


def watching_tokens(app, require_resource):
    """Notes what each token request carried (and, with --require-resource, refuses one without `resource`)."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/token" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body = await read_body(receive)
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items()}
        STATS["token_requests"].append({"grant_type": form.get("grant_type"), "resource": form.get("resource")})
        if require_resource and form.get("grant_type") in ("authorization_code", "refresh_token") and not form.get("resource"):
            await JSONResponse({"error": "invalid_target", "error_description": "resource is required (RFC 8707 2.2)"}, status_code=400)(scope, receive, send)
            return
        await app(scope, replaying(body, receive), send)
    return wrapped


def unlisting(app, hidden):
    """The RFC 8414 document without the scopes `hidden` in `scopes_supported`."""
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or not hidden or not scope["path"].startswith("/.well-known/oauth-authorization-server"):
            return await app(scope, receive, send)
        parts = []

        async def capture(message):
            if message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if not message.get("more_body"):
                    doc = json.loads(b"".join(parts))
                    doc["scopes_supported"] = [s for s in doc.get("scopes_supported", []) if s not in hidden]
                    await JSONResponse(doc)(scope, receive, send)
        await app(scope, receive, capture)
    return wrapped


def requiring_more(app, url, base_scopes, provider):
    """403 `insufficient_scope` for a valid token that lacks a scope of `EXTRA_REQUIRED`, as the SDK's own middleware
    answers for its required scopes (with `scope` and `resource_metadata` in the challenge)."""
    metadata = url.split("/mcp")[0] + "/.well-known/oauth-protected-resource/mcp"

    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and EXTRA_REQUIRED:
            auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
            token = await provider.load_access_token(auth[7:]) if auth.startswith("Bearer ") else None
            if token is not None and not set(EXTRA_REQUIRED) <= set(token.scopes):
                needed = " ".join(sorted(set(base_scopes) | set(EXTRA_REQUIRED)))
                challenge = f'Bearer error="insufficient_scope", scope="{needed}", resource_metadata="{metadata}", error_description="Required scope: {needed}"'
                await JSONResponse({"error": "insufficient_scope"}, status_code=403, headers={"WWW-Authenticate": challenge})(scope, receive, send)
                return
        await app(scope, receive, send)
    return wrapped


async def forget(request):
    """Every access token ends now (as a server restarted without them would): the next request with one is 401."""
    PROVIDER_REF[0].access.clear()
    return JSONResponse({"ok": True})


PROVIDER_REF: list = []


async def require(request):
    EXTRA_REQUIRED[:] = json.loads(await request.body())
    return JSONResponse({"ok": True})


class MemoryEventStore:
    """The SDK's `EventStore` in memory (resumable streams, MCP 2025-11-25): every event kept with its stream, so a
    client that reconnects with `Last-Event-ID` gets what came after."""

    def __init__(self):
        self.events = []  # (event id, stream id, message)

    async def store_event(self, stream_id, message):
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        from mcp.server.streamable_http import EventMessage
        found = next((i for i, e in enumerate(self.events) if e[0] == last_event_id), None)
        if found is None:
            return None
        stream = self.events[found][1]
        for event_id, s, message in self.events[found + 1:]:
            if s == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


def add_tools(server, name):
    SERVERS.append(server)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    @server.tool()
    def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
        """Answers with its region (MCP 2026-07-28 mirrors it in the `Mcp-Param-Region` header, which the server checks)."""
        return "region " + region

    @server.tool()
    def write(text: str) -> str:
        """Writes a note (with `/_misbehave` "write-admin", it needs the scope `admin`)."""
        return "written: " + text

    @server.tool()
    def server_name() -> str:
        """Which MCP server answered."""
        return name

    @server.tool()
    async def steps(n: int, ctx: Context) -> str:
        """Reports n progress notifications, then answers."""
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1}")
        return f"{n} steps"

    @server.tool()
    def big(size: int) -> str:
        """A text of `size` bytes."""
        return "x" * size

    @server.tool()
    async def slow(ms: int) -> int:
        """Answers after ms milliseconds."""
        await asyncio.sleep(ms / 1000)
        return ms

    @server.tool()
    async def ask(prompt: str, ctx: Context) -> str:
        """Asks the client to sample, on this call's stream."""
        r = await ctx.session.create_message([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=10,
                                             related_request_id=ctx.request_id)
        return r.content.text

    @server.tool()
    async def interrupted(ms: int, ctx: Context) -> int:
        """Closes this call's stream at once (with --resumable, its priming event gave an id), then answers after ms
        milliseconds: the client resumes the stream with Last-Event-ID to get the answer."""
        await ctx.close_sse_stream()
        await asyncio.sleep(ms / 1000)
        return ms

    @server.tool()
    async def later(ctx: Context) -> str:
        """Answers now; then, on the session's own stream, a log message and a sampling request."""
        session = ctx.session

        async def background():
            await asyncio.sleep(0.2)
            try:
                await session.send_log_message("info", "from the background")
                r = await session.create_message([SamplingMessage(role="user", content=TextContent(type="text", text="background"))], max_tokens=10)
                STATS["background"].append(r.content.text)
            except Exception as e:  # noqa: BLE001 - the test reads what happened
                STATS["background"].append(f"error: {e!r}")
        asyncio.get_running_loop().create_task(background())
        return "later"


def mcp_server(name, issuer, url, scopes, provider):
    server = MCPServer(name, token_verifier=Verifier(provider),
                       auth=AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=scopes, validate_token_resource=True))
    add_tools(server, name)
    return server


def failing_calls(app):
    """A server failing one call: a POST to an MCP endpoint whose message calls a tool with `"a": 500` is answered HTTP 500
    with a plain-text body; every other request goes on as sent."""
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith("/mcp"):
            return await app(scope, receive, send)
        body = await read_body(receive)
        if b'"a":500' in body.replace(b" ", b""):
            return await PlainTextResponse("the tool server is down", status_code=500)(scope, receive, send)
        await app(scope, replaying(body, receive), send)
    return wrapped


def foreign_endpoint(app, port):
    """The HTTP+SSE `endpoint` event rewritten to an absolute URL on `localhost` (another origin than 127.0.0.1)."""
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/sse":
            return await app(scope, receive, send)

        async def rewriting(message):
            if message["type"] == "http.response.body":
                body = message.get("body", b"")
                message = dict(message, body=body.replace(b"data: /messages/", f"data: http://localhost:{port}/messages/".encode()))
            await send(message)
        await app(scope, receive, rewriting)
    return wrapped


MISBEHAVE: dict = {}


async def misbehave(request):
    MISBEHAVE.clear()
    MISBEHAVE.update(json.loads(await request.body()))
    return JSONResponse({"ok": True})


def misbehaving(app, url, provider):
    """The refusals `POST /_misbehave` asks for (see the module's comment)."""
    metadata = url.split("/mcp")[0] + "/.well-known/oauth-protected-resource/mcp"
    named = [0]

    def refusal(status, challenge, error):
        return JSONResponse({"error": error}, status_code=status, headers={"WWW-Authenticate": f'Bearer {challenge}, resource_metadata="{metadata}"'})

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        if scope["path"] == "/token" and MISBEHAVE.get("refresh") == "invalid_client":
            body = await read_body(receive)
            if b"grant_type=refresh_token" in body:
                return await JSONResponse({"error": "invalid_client"}, status_code=401)(scope, receive, send)
            return await app(scope, replaying(body, receive), send)
        if not scope["path"].startswith("/mcp"):
            return await app(scope, receive, send)
        if scope["method"] == "GET":
            STATS["stream_gets"] = STATS.get("stream_gets", 0) + 1
            stream = MISBEHAVE.get("stream")
            if stream == "retry0" or (stream == "alternate" and STATS["stream_gets"] % 2 == 0):
                return await PlainTextResponse("retry: 0\n\n", media_type="text/event-stream")(scope, receive, send)
            if stream == "alternate":
                return await refusal(401, 'error="invalid_token"', "invalid_token")(scope, receive, send)
            return await app(scope, receive, send)
        redirect = MISBEHAVE.get("redirect")
        if scope["method"] == "POST" and redirect and b"moved" not in scope.get("query_string", b""):
            port = url.split(":")[2].split("/")[0]
            where = "/mcp?moved=1" if redirect == "same" else f"http://localhost:{port}/mcp?moved=1"
            return await PlainTextResponse("moved", status_code=307, headers={"Location": where})(scope, receive, send)
        if scope["method"] == "POST" and b"moved" in scope.get("query_string", b""):
            STATS["moved"] = STATS.get("moved", 0) + 1
        if scope["method"] != "POST" or not MISBEHAVE.get("calls"):
            return await app(scope, receive, send)
        body = await read_body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = {}
        calls = MISBEHAVE["calls"]
        if message.get("method") == "tools/call":
            auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
            token = await provider.load_access_token(auth[7:]) if auth.startswith("Bearer ") else None
            held = set(token.scopes) if token else set()
            if calls == "401":
                return await refusal(401, 'error="invalid_token"', "invalid_token")(scope, receive, send)
            if calls == "new-scope":
                named[0] += 1
                return await refusal(403, f'error="insufficient_scope", scope="mcp s{named[0]}"', "insufficient_scope")(scope, receive, send)
            if calls == "write-admin":
                # Each names only the scope it needs (as a server checking one scope per tool does).
                needed = "admin" if message.get("params", {}).get("name") == "write" else "mcp"
                if token is not None and not set(needed.split()) <= held:
                    return await refusal(403, f'error="insufficient_scope", scope="{needed}"', "insufficient_scope")(scope, receive, send)
        await app(scope, replaying(body, receive), send)
    return wrapped


def keyed(app, key):
    """The MCP endpoint wants `X-Api-Key: KEY` (compared in constant time), else 401 naming that scheme, no metadata."""
    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers") or []}
            STATS["api_key_seen"] = STATS.get("api_key_seen", 0) + (1 if "x-api-key" in headers else 0)
            STATS["bearer_seen"] = STATS.get("bearer_seen", 0) + (1 if "authorization" in headers else 0)
            if not secrets.compare_digest(headers.get("x-api-key", ""), key):
                return await JSONResponse({"error": "missing or wrong API key"}, status_code=401,
                                          headers={"WWW-Authenticate": 'ApiKey header="X-Api-Key"'})(scope, receive, send)
        await app(scope, receive, send)
    return wrapped


def one_era(app, modern_only):
    """The MCP endpoint of one era alone (`--modern-only`, `--legacy-only`), as deployments of either serve it."""
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
            return await app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers") or []}
        version = headers.get("mcp-protocol-version")
        if modern_only and version != "2026-07-28" and scope["method"] == "POST":
            body = await read_body(receive)
            try:
                request_id = json.loads(body).get("id")
            except (ValueError, AttributeError):
                request_id = None
            error = {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"], "requested": version}}
            return await JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=400)(scope, receive, send)
        if modern_only and scope["method"] in ("GET", "DELETE"):
            return await PlainTextResponse("method not allowed", status_code=405)(scope, receive, send)
        if not modern_only and version == "2026-07-28":
            error = {"code": -32600, "message": "Bad Request: Missing session ID"}
            return await JSONResponse({"jsonrpc": "2.0", "id": "server-error", "error": error}, status_code=400)(scope, receive, send)
        await app(scope, receive, send)
    return wrapped


def recording(app):
    """Notes each request to an MCP endpoint: its method and the session and protocol headers it carried; and counts
    the requests for a metadata document (`metadata_gets`: RFC 9728's and RFC 8414's)."""
    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith(("/mcp", "/sse", "/messages")):
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers") or []}
            STATS["mcp_requests"].append({"method": scope["method"], "session": headers.get("mcp-session-id"),
                                          "mcp_method": headers.get("mcp-method"), "mcp_name": headers.get("mcp-name"),
                                          "region": headers.get("mcp-param-region"),
                                          "version": headers.get("mcp-protocol-version"), "accept": headers.get("accept"),
                                          "last_event_id": headers.get("last-event-id"), "host": headers.get("host"),
                                          "authorized": "authorization" in headers})
        elif scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
            STATS["metadata_gets"] = STATS.get("metadata_gets", 0) + 1
        await app(scope, receive, send)
    return wrapped


async def restart(request):
    """As a server restarted with everything in memory: clients, codes, tokens and sessions forgotten."""
    p = PROVIDER_REF[0]
    for d in (p.clients, p.codes, p.refresh, p.access):
        d.clear()
    return await end_sessions(request)


async def end_sessions(request):
    for server in SERVERS:
        server.session_manager._server_instances.clear()
    return JSONResponse({"ok": True})


def bound():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    return s, s.getsockname()[1]


def tls_files(cert_out, host_name):
    """A fresh self-signed certificate for 127.0.0.1 (written to `cert_out` for the client told to trust it) and its
    key, as the files uvicorn reads (in a private folder the process removes when it ends)."""
    import atexit
    import datetime
    import ipaddress
    import shutil
    import tempfile
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                                                       + ([x509.DNSName(host_name)] if host_name != "127.0.0.1" else [])), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, folder, True)
    with open(f"{folder}/cert.pem", "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(f"{folder}/key.pem", "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    shutil.copy(f"{folder}/cert.pem", cert_out)
    return {"ssl_certfile": f"{folder}/cert.pem", "ssl_keyfile": f"{folder}/key.pem"}


async def main():
    args = sys.argv[1:]
    split, require_resource = "--split" in args, "--require-resource" in args
    mcps = [args[i + 1].split(",") for i, a in enumerate(args) if a == "--mcp"] or [["mcp"]]
    hidden = [args[i + 1] for i, a in enumerate(args) if a == "--unlisted"]
    legacy = "--sse" in args
    resumable = "--resumable" in args
    provider = Provider()
    as_sock, as_port = bound()
    # With --split the SDK's routes take the issuer as a URL type that spells it with a trailing slash; the MCP
    # servers name it the same way, so that the names match exactly (RFC 8414 3.3).
    tls = args[args.index("--tls") + 1] if "--tls" in args else None
    name = args[args.index("--host") + 1] if "--host" in args else "127.0.0.1"
    issuer = f"{'https' if tls else 'http'}://{name}:{as_port}" + ("/" if split else "")
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=["mcp"])
    stats = Route("/_stats", lambda request: JSONResponse(STATS))
    required = Route("/_require", require, methods=["POST"])
    forgotten = Route("/_forget", forget, methods=["POST"])
    restarted = Route("/_restart", restart, methods=["POST"])
    ended = Route("/_end_sessions", end_sessions, methods=["POST"])
    misbehaved = Route("/_misbehave", misbehave, methods=["POST"])
    PROVIDER_REF.append(provider)
    apps, urls = [], []
    if split:
        auth = Starlette(routes=create_auth_routes(provider, AnyHttpUrl(issuer), client_registration_options=registration,
                                                   revocation_options=RevocationOptions(enabled=True)) + [stats, required, forgotten, restarted, ended])
        apps.append((as_sock, unlisting(watching_tokens(auth, require_resource), hidden)))
        for i, scopes in enumerate(mcps):
            sock, port = bound()
            url = f"http://127.0.0.1:{port}/mcp"
            urls.append(url)
            apps.append((sock, recording(requiring_more(mcp_server(f"mcp-{i + 1}", issuer, url, scopes, provider).streamable_http_app(), url, scopes, provider))))
    else:
        url = issuer + ("/sse" if legacy else "/mcp")
        urls.append(url)
        if "--public" in args:
            server = MCPServer("mcp-1")
        else:
            assertion = "--identity-assertion" in args
            if assertion:
                IDP.append(args[args.index("--identity-assertion") + 1])
                ISSUER.append(issuer)
                provider.clients["ema-client"] = OAuthClientInformationFull(
                    client_id="ema-client", client_secret="ema-secret", token_endpoint_auth_method="client_secret_post",
                    grant_types=["urn:ietf:params:oauth:grant-type:jwt-bearer"], scope="mcp")
            server = MCPServer("mcp-1", auth_server_provider=provider,
                               auth=AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=mcps[0], validate_token_resource=True,
                                                 client_registration_options=registration, revocation_options=RevocationOptions(enabled=True),
                                                 identity_assertion_enabled=assertion))
        add_tools(server, "mcp-1")
        # Under a company name the SDK's DNS rebinding protection (which allows only 127.0.0.1 and localhost) is off.
        named = {"transport_security": TransportSecuritySettings(enable_dns_rebinding_protection=False)} if name != "127.0.0.1" else {}
        app = server.sse_app() if legacy else (server.streamable_http_app(event_store=MemoryEventStore(), retry_interval=100, **named) if resumable
                                               else server.streamable_http_app(**named))
        app.router.routes.extend([stats, required, forgotten, restarted, ended, misbehaved])
        if "--foreign-endpoint" in args:
            app = foreign_endpoint(app, as_port)
        app = misbehaving(app, url, provider)
        if "--api-key" in args:
            app = keyed(app, args[args.index("--api-key") + 1])
        if "--modern-only" in args or "--legacy-only" in args:
            app = one_era(app, "--modern-only" in args)
        apps.append((as_sock, recording(failing_calls(unlisting(watching_tokens(requiring_more(app, url, mcps[0], provider), require_resource), hidden)))))
    certificate = tls_files(tls, name) if tls else {}
    servers = [uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on", **certificate)) for _, app in apps]
    tasks = [asyncio.create_task(s.serve(sockets=[sock])) for s, (sock, _) in zip(servers, apps)]
    while not all(s.started for s in servers):
        await asyncio.sleep(0.01)
    print("READY", as_port, *urls, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for s in servers:
        s.should_exit = True
    await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())
