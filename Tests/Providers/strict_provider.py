"""A small, strict OpenID provider for signin's tests: the faults a real provider cannot show on demand.

Strict where real providers are: PKCE S256 required and checked, redirect URI matched exactly (port included),
codes one-use (a replayed code revokes what it issued), refresh tokens rotated and one-use, revocation (RFC 7009),
device authorization (RFC 8628). Faults are set per client ID through POST /_control/<client_id> (JSON), and
counters read from GET /_stats/<client_id>, so tests running at once do not disturb each other.

Provider-wide variants, for a provider started for one test: STRICT_DISCOVERY is JSON merged into the discovery
document (a null removes a member; "{issuer}" in a string becomes the issuer), and STRICT_AS_METADATA=1 serves
RFC 8414 metadata (with the revocation endpoint) at /.well-known/oauth-authorization-server; STRICT_AS_METADATA=hybrid
serves there an RFC 8414 document naming openid among its scopes with no jwks_uri or userinfo_endpoint (its OpenID
document has both).

DPoP (RFC 9449): a token request with a proof gets DPoP-bound tokens (the refresh token then refreshes only with a
proof of the same key; the access token reaches /userinfo only as `Authorization: DPoP` with a proof naming it);
replayed proofs are refused. Switches `dpop_required` (no proof, no token) and `dpop_nonce` (the server's nonce
must be in the proof). Discovery lists `dpop_signing_alg_values_supported` only when STRICT_DISCOVERY says so.

Prints `READY <port>` once listening on 127.0.0.1 (port chosen by the OS); exits when standard input closes.
"""
import base64
import hashlib
import json
import os
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from harness import LoopbackServer, self_signed_context, serve_until_stdin_closes

LOCK = threading.Lock()
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # signs tokens the JWKS does not vouch for
SECRET = "strict-secret"


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def int_bytes(n: int, length: int | None = None) -> bytes:
    return n.to_bytes(length or (n.bit_length() + 7) // 8, "big")


def jwks() -> dict:
    rn = RSA_KEY.public_key().public_numbers()
    en = EC_KEY.public_key().public_numbers()
    return {"keys": [
        {"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig", "n": b64u(int_bytes(rn.n)), "e": b64u(int_bytes(rn.e))},
        {"kty": "EC", "kid": "ec-1", "crv": "P-256", "use": "sig", "x": b64u(int_bytes(en.x, 32)), "y": b64u(int_bytes(en.y, 32))},
    ]}


def sign(claims: dict, alg: str = "RS256", kid: str | None = None, key=None, typ: str = "JWT") -> str:
    header = {"alg": alg, "typ": typ, "kid": kid or ("rsa-1" if alg == "RS256" else "ec-1")}
    signing_input = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())
    if alg == "RS256":
        sig = (key or RSA_KEY).sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    else:
        r, s = decode_dss_signature(EC_KEY.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        sig = int_bytes(r, 32) + int_bytes(s, 32)
    return signing_input + "." + b64u(sig)


def verify_es256(public_key, data: bytes, raw: bytes) -> None:
    """Checks a JWS ES256 signature (raw r||s); raises when it does not match."""
    public_key.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")), data, ec.ECDSA(hashes.SHA256()))


def verify(token: str):
    """The claims of a JWT this provider signed (RS256 or ES256), or None."""
    try:
        h, c, sig = token.split(".")
        header = json.loads(base64.urlsafe_b64decode(h + "==="))
        raw = base64.urlsafe_b64decode(sig + "===")
        data = (h + "." + c).encode()
        if header.get("alg") == "RS256":
            RSA_KEY.public_key().verify(raw, data, padding.PKCS1v15(), hashes.SHA256())
        elif header.get("alg") == "ES256":
            verify_es256(EC_KEY.public_key(), data, raw)
        else:
            return None
        return json.loads(base64.urlsafe_b64decode(c + "==="))
    except Exception:
        return None


class Client:
    """Per-client state and fault switches."""

    def __init__(self, client_id: str):
        self.client_id = client_id
        self.control: dict = {}
        self.issued_id_tokens: list = []  # every ID token issued, for `idjag_session_ended_now`
        self.ended_id_tokens: set = set()  # ID tokens of a session that ended (a new sign-in's are taken)
        self.codes: dict = {}        # code -> grant info
        self.refresh: dict = {}      # refresh token -> info (valid)
        self.access: dict = {}       # access token -> sub
        self.access_jkt: dict = {}   # access token -> the DPoP key thumbprint it is bound to
        self.access_aud: dict = {}   # access token -> the resource or audience it is for alone (RFC 8707, 8693)
        self.devices: dict = {}      # device_code -> state
        self.stats = {"token_requests": 0, "refreshes": 0, "code_exchanges": 0, "revocations": 0, "device_polls": 0,
                      "authorize_requests": 0, "last_refresh_auth": None, "refreshes_by_sub": {},
                      "refreshes_in_flight": 0, "max_refreshes_in_flight": 0}

    def c(self, key, default=None):
        return self.control.get(key, default)


CLIENTS: dict[str, Client] = {}
DPOP_JTIS: set = set()       # every DPoP proof's jti seen: a replayed proof is refused (RFC 9449 11.1)
DPOP_NONCE = "n-" + secrets.token_urlsafe(12)
DOCUMENTS: dict[str, dict] = {}  # client ID metadata documents hosted here (PUT /_documents/NAME), by their URL
PUSHED: dict[str, dict] = {}  # request_uri -> the pushed authorization request (RFC 9126)


def client(cid: str) -> Client:
    with LOCK:
        if cid not in CLIENTS:
            CLIENTS[cid] = Client(cid)
        return CLIENTS[cid]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def issuer(self) -> str:
        scheme = "https" if os.environ.get("STRICT_TLS") else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_port}"

    # -- helpers
    def send(self, status: int, body=b"", ctype="application/json", headers=None):
        if getattr(self, "form_answer", False) and isinstance(body, dict):
            # A GitHub-style OAuth app's token endpoint: a form-encoded answer (whatever Accept says), no ID token.
            body = urllib.parse.urlencode({k: v for k, v in body.items() if k != "id_token"})
            ctype = "application/x-www-form-urlencoded; charset=utf-8"
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def oauth_error(self, code: str, status: int = 400, description: str | None = None):
        body = {"error": code}
        if description:
            body["error_description"] = description
        self.send(status, body)

    def form(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode() if n else ""
        return {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}

    def client_auth(self, f: dict) -> tuple[str | None, str]:
        """Returns (client_id, method). A secret, when sent, must be right."""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            cid, _, sec = base64.b64decode(auth[6:]).decode().partition(":")
            cid = urllib.parse.unquote(cid)
            # "basic_raw": the secret is compared as sent, not form-decoded (django-oidc-provider does so).
            if not client(cid).c("basic_raw"):
                sec = urllib.parse.unquote(sec)
            return (cid if sec == client(cid).c("secret", SECRET) else None), "basic"
        if "client_secret" in f:
            cid = f.get("client_id", "")
            return (cid if f["client_secret"] == client(cid).c("secret", SECRET) else None), "post"
        return f.get("client_id"), "none"

    def fault(self, cl: Client, name: str) -> bool:
        """Applies a configured fault for endpoint `name`; True when the response was taken over."""
        f = cl.c(f"{name}_fault")
        if not f:
            return False
        if cl.c(f"{name}_fault_once"):
            cl.control.pop(f"{name}_fault", None)
        if f == "slow":
            time.sleep(float(cl.c("slow_seconds", 40)))
            self.send(503, {"error": "temporarily_unavailable"})
        elif f == "drop":
            # A promised body that never comes in full: the connection drops mid-body.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "500")
            self.end_headers()
            self.wfile.write(b'{"access_token": "partial')
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
        elif f == "garbage":
            self.send(200, b"\x00\xffnot json at all<html>", "text/html")
        elif f == "redirect":
            self.send(302, b"", "text/plain", headers={"Location": "http://203.0.113.7/steal"})
        elif f == "empty400":
            self.send(400, b"")
        elif f == "error_beside_token":
            # The HTTP-200 error style of GitHub-style servers: an error named beside a token-shaped answer.
            self.send(200, {"access_token": "beside-an-error-" + secrets.token_urlsafe(8), "token_type": "Bearer", "expires_in": 3600,
                            "error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."})
        elif f.isdigit():
            # A 429 may say how long to wait (control "retry_after": seconds, or an HTTP date).
            extra = {"Retry-After": str(cl.c("retry_after"))} if f == "429" and cl.c("retry_after") is not None else None
            self.send(int(f), {"error": "server_error" if f.startswith("5") else ("invalid_grant" if f == "400" else "slow_down")}, headers=extra)
        else:
            self.oauth_error(f, description=cl.c("error_description"))
        return True

    def id_token(self, cl: Client, sub: str, nonce: str | None) -> str:
        now = int(time.time()) + int(cl.c("clock_offset", 0))
        claims = {"iss": self.issuer, "aud": cl.client_id, "azp": cl.client_id, "sub": sub, "iat": now, "exp": now + int(cl.c("id_ttl", 3600)),
                  "name": "Alice Example" if sub == "alice" else sub.capitalize() + " Example", "email": f"{sub}@example.org",
                  "email_verified": True}
        if cl.c("id_token_without_profile"):
            # As providers that give the profile at userinfo only (signin then asks there).
            for k in ("name", "email", "email_verified"):
                claims.pop(k, None)
        if nonce is not None:
            claims["nonce"] = nonce
        claims.update(cl.c("id_token_claims", {}))
        key = OTHER_KEY if cl.c("id_token_bad_key") else None
        token = sign(claims, cl.c("id_token_alg", "RS256"), key=key)
        cl.issued_id_tokens.append(token)
        return token

    def dpop(self, cl: Client, path: str, access_token: str | None = None):
        """Checks the request's DPoP proof (RFC 9449 4.3) for `path`: returns (thumbprint, None), (None, None) when
        there is no proof, or (None, error body) for a proof that is refused. Client switches: `dpop_nonce` (the
        server's nonce is required: `use_dpop_nonce` with a DPoP-Nonce header until it is in the proof)."""
        proof = self.headers.get("DPoP")
        if proof is None:
            return None, None
        def refuse(why):
            with LOCK:
                cl.stats["dpop_refused"] = cl.stats.get("dpop_refused", 0) + 1
                cl.stats["dpop_last_refusal"] = why
            return None, {"error": "invalid_dpop_proof", "error_description": why}
        try:
            h, c, sig = proof.split(".")
            header = json.loads(base64.urlsafe_b64decode(h + "==="))
            claims = json.loads(base64.urlsafe_b64decode(c + "==="))
            raw = base64.urlsafe_b64decode(sig + "===")
        except Exception:
            return refuse("the proof is not a JWT")
        jwk = header.get("jwk") or {}
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256" or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256" or "d" in jwk:
            return refuse("typ, alg or jwk")
        try:
            x = int.from_bytes(base64.urlsafe_b64decode(jwk["x"] + "==="), "big")
            y = int.from_bytes(base64.urlsafe_b64decode(jwk["y"] + "==="), "big")
            verify_es256(ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key(), (h + "." + c).encode(), raw)
        except Exception:
            return refuse("signature")
        if claims.get("htm") != self.command or claims.get("htu") != self.issuer + path:
            return refuse("htm or htu")
        if abs(time.time() - float(claims.get("iat", 0))) > 60:
            return refuse("iat")
        if access_token is not None and claims.get("ath") != b64u(hashlib.sha256(access_token.encode()).digest()):
            return refuse("ath")
        if cl.c("dpop_nonce") and claims.get("nonce") != DPOP_NONCE:
            with LOCK:
                cl.stats["dpop_nonce_challenges"] = cl.stats.get("dpop_nonce_challenges", 0) + 1
            return None, "nonce"
        with LOCK:
            jti = claims.get("jti")
            replayed = not jti or jti in DPOP_JTIS
            if replayed:
                cl.stats["dpop_replays"] = cl.stats.get("dpop_replays", 0) + 1
            else:
                DPOP_JTIS.add(jti)
                cl.stats["dpop_proofs"] = cl.stats.get("dpop_proofs", 0) + 1
        if replayed:
            return refuse("replayed jti")
        members = json.dumps({"crv": "P-256", "kty": "EC", "x": jwk["x"], "y": jwk["y"]}, separators=(",", ":"), sort_keys=True)
        return b64u(hashlib.sha256(members.encode()).digest()), None

    def dpop_refusal(self, error):
        """Sends what `dpop` refused: the nonce challenge, or the invalid proof."""
        if error == "nonce":
            return self.send(400, {"error": "use_dpop_nonce", "error_description": "a nonce is required"}, headers={"DPoP-Nonce": DPOP_NONCE})
        return self.send(400, error)

    def issue(self, cl: Client, sub: str, nonce: str | None, scope: str, with_id_token: bool, family: str, jkt: str | None = None,
              resources: list | None = None, audience: str | None = None) -> dict:
        at = "at-" + secrets.token_urlsafe(24)
        if cl.c("jwt_access_tokens"):
            # A JWT access token (RFC 9068) whose aud names what it is for: the API, else the client.
            now = int(time.time())
            at = sign({"iss": self.issuer, "sub": sub, "aud": audience or cl.client_id, "client_id": cl.client_id, "iat": now,
                       "exp": now + int(cl.c("access_ttl", 3600)), "jti": secrets.token_urlsafe(12)})
        rt = "rt-" + secrets.token_urlsafe(24)
        cl.access[at] = sub
        if audience:
            cl.access_aud[at] = audience
        cl.refresh[rt] = {"sub": sub, "scope": scope, "family": family, "jkt": jkt, "resources": resources or []}
        if jkt:
            cl.access_jkt[at] = jkt
            # What an attacker who copied the grant would hold (the DPoP tests try it without the key).
            cl.stats["copied_refresh_token"] = rt
        body = {"access_token": at, "token_type": "DPoP" if jkt else cl.c("token_type", "Bearer"), "expires_in": int(cl.c("access_ttl", 3600)),
                "refresh_token": rt, "scope": cl.c("granted_scope", scope)}
        if cl.c("no_expiry"):
            # A GitHub OAuth app without expiring tokens: the access token lives until revoked, no refresh token.
            body.pop("expires_in")
            body.pop("refresh_token")
        if with_id_token:
            body["id_token"] = self.id_token(cl, sub, nonce)
        return body

    # -- routes
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
        if u.path == "/.well-known/openid-configuration":
            doc = {
                "issuer": self.issuer, "authorization_endpoint": self.issuer + "/authorize",
                "token_endpoint": self.issuer + "/token", "jwks_uri": self.issuer + "/jwks",
                "revocation_endpoint": self.issuer + "/revoke", "userinfo_endpoint": self.issuer + "/userinfo",
                "device_authorization_endpoint": self.issuer + "/device",
                "code_challenge_methods_supported": ["S256"], "response_types_supported": ["code"],
                "id_token_signing_alg_values_supported": ["RS256", "ES256"],
                "grant_types_supported": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code",
                                          "urn:ietf:params:oauth:grant-type:token-exchange"],
                "registration_endpoint": self.issuer + "/register"}
            for k, v in json.loads(os.environ.get("STRICT_DISCOVERY", "{}")).items():
                if v is None:
                    doc.pop(k, None)
                else:
                    doc[k] = v.replace("{issuer}", self.issuer) if isinstance(v, str) else v
            return self.send(200, doc)
        if u.path == "/.well-known/oauth-authorization-server" and os.environ.get("STRICT_AS_METADATA") == "hybrid":
            # An authorization server that is also an OpenID provider, whose RFC 8414 document lists openid among its
            # scopes but has no jwks_uri or userinfo_endpoint (RFC 8414 makes them optional): its OpenID document has them.
            cl = client("_metadata")
            cl.stats["fetches"] = cl.stats.get("fetches", 0) + 1
            return self.send(200, {"issuer": self.issuer, "token_endpoint": self.issuer + "/token", "authorization_endpoint": self.issuer + "/authorize",
                                   "registration_endpoint": self.issuer + "/register", "code_challenge_methods_supported": ["S256"],
                                   "response_types_supported": ["code"], "scopes_supported": ["openid", "email", "profile"]})
        if u.path == "/.well-known/oauth-authorization-server" and os.environ.get("STRICT_AS_METADATA"):
            cl = client("_metadata")
            cl.stats["fetches"] = cl.stats.get("fetches", 0) + 1
            return self.send(200, {"issuer": self.issuer, "token_endpoint": self.issuer + "/token",
                                   "authorization_endpoint": self.issuer + "/authorize",
                                   "revocation_endpoint": self.issuer + "/revoke"})
        if u.path.startswith("/.well-known/oauth-protected-resource/"):
            # RFC 9728 3.1: the metadata of the API at the rest of the path. /api/elsewhere claims another resource.
            api = u.path[len("/.well-known/oauth-protected-resource"):]
            st = client("_api").stats
            with LOCK:
                st["metadata_fetches"] = st.get("metadata_fetches", 0) + 1
            if not api.startswith("/api/"):
                return self.send(404, {"error": "not_found"})
            resource = self.issuer + api if api != "/api/elsewhere" else "https://elsewhere.example.test/api"
            # POST /_control/_api {"authorization_server": URL}: the APIs name another server from then on.
            server = client("_api").c("authorization_server", self.issuer)
            return self.send(200, {"resource": resource, "authorization_servers": [server],
                                   "scopes_supported": ["openid", "email", "profile"], "bearer_methods_supported": ["header"]})
        if u.path.startswith("/api/"):
            # The API: a token issued for it alone (its `aud`), else 401 saying where its metadata is.
            auth = self.headers.get("Authorization", "")
            at = auth[7:] if auth.startswith("Bearer ") else ""
            resource = self.issuer + u.path
            for cl in list(CLIENTS.values()):
                if at in cl.access and cl.access_aud.get(at) == resource:
                    return self.send(200, {"api": u.path, "sub": cl.access[at]})
            meta = self.issuer + "/.well-known/oauth-protected-resource" + u.path
            return self.send(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": f'Bearer resource_metadata="{meta}"'})
        if u.path.startswith("/documents/"):
            doc = DOCUMENTS.get(self.issuer + u.path)
            return self.send(200, doc) if doc else self.send(404, {"error": "not_found"})
        if u.path == "/jwks":
            return self.send(200, jwks())
        if u.path.startswith("/_stats/"):
            return self.send(200, client(u.path[8:]).stats)
        if u.path == "/authorize":
            if "resource" in q:
                q["resource"] = urllib.parse.parse_qs(u.query)["resource"]
            return self.authorize(q, {})
        if u.path == "/_introspect":
            # For the tests (RFC 7662's answer, without its authentication): whom an access token is for.
            for cl in list(CLIENTS.values()):
                if q.get("token") in cl.access:
                    t = q["token"]
                    return self.send(200, {"active": True, "sub": cl.access[t], "aud": cl.access_aud.get(t, cl.client_id)})
            return self.send(200, {"active": False})
        if u.path.startswith("/v1/projects/") and "/" not in u.path[len("/v1/projects/"):]:
            return self.resource_manager(u.path[len("/v1/projects/"):])
        if u.path == "/user":
            # A GitHub-style profile API: `login`, a numeric `id`, `name`, `email`, for a valid bearer token.
            auth = self.headers.get("Authorization", "")
            at = auth[7:] if auth.startswith("Bearer ") else ""
            for cl in list(CLIENTS.values()):
                if at in cl.access:
                    sub = cl.access[at]
                    return self.send(200, {"login": sub, "id": 4242, "name": sub.capitalize() + " Hubber", "email": f"{sub}@example.org",
                                           "avatar_url": "https://avatars.example/u/4242"})
            return self.send(401, {"message": "Bad credentials"})
        if u.path == "/userinfo":
            auth = self.headers.get("Authorization", "")
            at = auth[5:] if auth.startswith("DPoP ") else auth[7:]
            for cl in list(CLIENTS.values()):
                if at in cl.access and at in cl.access_jkt:
                    # A DPoP-bound token: only with `Authorization: DPoP` and a proof of its key naming it.
                    jkt, refusal = self.dpop(cl, "/userinfo", access_token=at)
                    if not auth.startswith("DPoP ") or jkt != cl.access_jkt[at]:
                        return self.send(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": 'DPoP error="invalid_token"'})
                if at in cl.access:
                    sub = cl.access[at]
                    with LOCK:
                        cl.stats["userinfo_ok"] = cl.stats.get("userinfo_ok", 0) + 1
                    return self.send(200, {"sub": sub, "name": sub.capitalize() + " Example", "email": f"{sub}@example.org",
                                           "email_verified": True, "address": {"country": "NL"}, "updated_at": 1700000000})
            return self.send(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        self.send(404, {"error": "not_found"})

    def do_POST(self):
        u = urllib.parse.urlparse(self.path)
        if u.path.startswith("/api/mcp"):
            # The API as a minimal MCP server (one JSON answer per request; 202 for the rest): a token issued for it
            # alone (its `aud`), else 401 saying where its metadata is; a request's answer names whom the token is for.
            n = int(self.headers.get("Content-Length") or 0)
            message = json.loads(self.rfile.read(n) or b"{}")
            auth = self.headers.get("Authorization", "")
            at = auth[7:] if auth.startswith("Bearer ") else ""
            resource = self.issuer + u.path
            for cl in list(CLIENTS.values()):
                if at in cl.access and cl.access_aud.get(at) == resource:
                    if "id" not in message:
                        return self.send(202, b"")
                    result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "strict", "version": "1"}} \
                        if message.get("method") == "initialize" else {"sub": cl.access[at], "client_id": cl.client_id}
                    return self.send(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})
            meta = self.issuer + "/.well-known/oauth-protected-resource" + u.path
            return self.send(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": f'Bearer resource_metadata="{meta}"'})
        if u.path.startswith("/_documents/"):
            n = int(self.headers.get("Content-Length") or 0)
            with LOCK:
                DOCUMENTS[self.issuer + "/documents/" + u.path[len("/_documents/"):]] = json.loads(self.rfile.read(n) or b"{}")
            return self.send(200, {"ok": True})
        if u.path.startswith("/_control/"):
            n = int(self.headers.get("Content-Length") or 0)
            cl = client(u.path[10:])
            with LOCK:
                cl.control.update(json.loads(self.rfile.read(n) or b"{}"))
                # The person's session at the IdP ends now: the ID tokens issued so far are refused in an ID-JAG
                # exchange; a new sign-in's are taken.
                if cl.control.pop("idjag_session_ended_now", False):
                    cl.ended_id_tokens = set(cl.issued_id_tokens)
            return self.send(200, {"ok": True})
        if u.path == "/register":
            return self.register()
        if u.path == "/authorize":
            q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
            if "resource" in q:
                q["resource"] = urllib.parse.parse_qs(u.query)["resource"]
            return self.authorize(q, self.form())
        if u.path.startswith("/v1/projects/-/serviceAccounts/"):
            return self.iam_credentials(u.path[len("/v1/projects/-/serviceAccounts/"):])
        f = self.form()
        if u.path == "/par":
            return self.pushed_authorization(f)
        if u.path == "/v1/token":
            return self.google_sts(f)
        if u.path == "/token":
            return self.token(f)
        if u.path == "/revoke":
            return self.revoke(f)
        if u.path == "/device":
            return self.device(f)
        if u.path == "/device/approve":
            return self.device_approve(f)
        self.send(404, {"error": "not_found"})

    # -- Google's APIs, as stand-ins: the IAM Service Account Credentials API and the Cloud Resource Manager.
    def bearer_client(self):
        """The client whose access token the request carries (and its sub), or (None, None)."""
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return None, None
        at = auth[7:]
        with LOCK:
            for cl in CLIENTS.values():
                if at in cl.access:
                    return cl, cl.access[at]
        return None, None

    def google_error(self, code: int, status: str, message: str):
        self.send(code, {"error": {"code": code, "status": status, "message": message}})

    def iam_credentials(self, rest: str):
        """generateAccessToken / generateIdToken. Per client: `sa_allowed` lists the service accounts its users
        may impersonate (and use as delegates); `sa_missing` those that do not exist."""
        email, _, method = rest.partition(":")
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        cl, sub = self.bearer_client()
        if cl is None:
            return self.google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        with LOCK:
            cl.stats["iam_calls"] = cl.stats.get("iam_calls", 0) + 1
            cl.stats["iam_last_delegates"] = body.get("delegates") or []
        chain = [d.rpartition("/")[2] for d in body.get("delegates") or []] + [email]
        for account in chain:
            if account in cl.c("sa_missing", []):
                return self.google_error(404, "NOT_FOUND", f"Service account {account} not found.")
            if account not in cl.c("sa_allowed", []):
                return self.google_error(403, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
        if method == "generateAccessToken":
            lifetime = int(str(body.get("lifetime", "3600s")).rstrip("s"))
            at = "sa-at-" + secrets.token_urlsafe(24) + cl.c("sa_token_suffix", "")
            with LOCK:
                cl.access[at] = email
                cl.stats["sa_scopes"] = body.get("scope", [])
            expire = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + lifetime))
            return self.send(200, {"accessToken": at, "expireTime": expire})
        if method == "generateIdToken":
            now = int(time.time())
            claims = {"iss": "https://accounts.google.com", "aud": body.get("audience"), "sub": "1" + hashlib.sha256(email.encode()).hexdigest()[:20],
                      "azp": email, "iat": now, "exp": now + 3600}
            if body.get("includeEmail"):
                claims.update({"email": email, "email_verified": True})
            return self.send(200, {"token": sign(claims)})
        return self.google_error(404, "NOT_FOUND", "unknown method")

    def google_sts(self, f: dict):
        """Google's Security Token Service (RFC 8693 token exchange), as workload and workforce identity federation
        use it: an ID token of this provider (its signature checked, unexpired) for a federated access token. Per
        client (the token's audience): `sts_audiences` lists the pool providers that trust it; the federated token
        works at the IAM stand-in as the person's. Counted in `sts_exchanges`, the last form in `sts_last`."""
        if f.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
            return self.oauth_error("unsupported_grant_type", description="grant_type must be token-exchange")
        if f.get("subject_token_type") not in ("urn:ietf:params:oauth:token-type:id_token", "urn:ietf:params:oauth:token-type:jwt"):
            return self.oauth_error("invalid_request", description="Invalid subject_token_type")
        claims = verify(f.get("subject_token", ""))
        if claims is None:
            return self.oauth_error("invalid_grant", description="The ID Token signature could not be verified")
        cl = client(str(claims.get("aud", "")))
        with LOCK:
            cl.stats["sts_exchanges"] = cl.stats.get("sts_exchanges", 0) + 1
            cl.stats["sts_last"] = {k: v for k, v in f.items() if k != "subject_token"}
        if float(claims.get("exp", 0)) < time.time():
            return self.oauth_error("invalid_grant", description="ID Token has expired")
        if f.get("audience") not in cl.c("sts_audiences", []):
            return self.oauth_error("invalid_target", description="The target service indicated by the \"audience\" parameters is invalid. This might either be because the pool or provider is disabled or deleted or because it doesn't exist.")
        at = "fed-" + secrets.token_urlsafe(24)
        with LOCK:
            cl.access[at] = "principal://" + f["audience"].lstrip("/") + "/subject/" + str(claims.get("sub"))
        self.send(200, {"access_token": at, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer",
                        "expires_in": int(cl.c("sts_expires_in", 3600))})

    def resource_manager(self, project_id: str):
        """v1/projects/{id}: the number is `project_number` of the caller's client (default 424242)."""
        cl, _ = self.bearer_client()
        if cl is None:
            return self.google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        with LOCK:
            cl.stats["rm_calls"] = cl.stats.get("rm_calls", 0) + 1
        if project_id not in cl.c("projects", [project_id]):
            return self.google_error(403, "PERMISSION_DENIED", f"The caller does not have permission on project {project_id}")
        self.send(200, {"projectId": project_id, "projectNumber": str(cl.c("project_number", "424242")), "lifecycleState": "ACTIVE"})

    def discovery_says(self, key: str):
        return json.loads(os.environ.get("STRICT_DISCOVERY", "{}")).get(key)

    def pushed_authorization(self, f: dict):
        """RFC 9126: the authorization request's parameters, authenticated as at the token endpoint, kept for 90 s
        under a request_uri that /authorize then takes (once). Per client: `par_error` refuses with that error.
        Listed in discovery only when STRICT_DISCOVERY names the endpoint."""
        cid, method = self.client_auth(f)
        if cid is None or (f.get("client_id") and f["client_id"] != cid):
            return self.oauth_error("invalid_client", 401)
        cl = client(cid)
        with LOCK:
            cl.stats["par_requests"] = cl.stats.get("par_requests", 0) + 1
            cl.stats["par_auth"] = method
        if cl.c("par_error"):
            return self.oauth_error(cl.c("par_error"), description="refused by the test's control")
        if "request_uri" in f:
            return self.oauth_error("invalid_request", description="request_uri may not be pushed")
        params = {k: v for k, v in f.items() if k not in ("client_secret",)}
        params["client_id"] = cid
        uri = "urn:ietf:params:oauth:request_uri:" + secrets.token_urlsafe(18)
        with LOCK:
            PUSHED[uri] = {"params": params, "expires": time.time() + 90}
        self.send(201, {"request_uri": uri, "expires_in": 90})

    def register(self):
        """RFC 7591 dynamic registration of a public native client; its redirect URI is matched exactly, port included
        (as glewlwyd does), and its resources are those any client may ask for."""
        n = int(self.headers.get("Content-Length") or 0)
        try:
            meta = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.send(400, {"error": "invalid_client_metadata"})
        uris = meta.get("redirect_uris") or []
        if len(uris) != 1 or meta.get("token_endpoint_auth_method") != "none":
            return self.send(400, {"error": "invalid_client_metadata", "error_description": "one loopback redirect URI and token_endpoint_auth_method none"})
        ru = urllib.parse.urlparse(uris[0])
        if ru.scheme != "http" or ru.hostname != "127.0.0.1" or not ru.port:
            return self.send(400, {"error": "invalid_redirect_uri"})
        cid = "dyn-" + secrets.token_urlsafe(8)
        cl = client(cid)
        cl.control.update({"fixed_port": ru.port, "redirect_path": ru.path, "registered": True})
        st = client("_api").stats
        with LOCK:
            st["registrations"] = st.get("registrations", 0) + 1
        return self.send(201, {"client_id": cid, "client_id_issued_at": int(time.time()), "redirect_uris": uris,
                               "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                               "client_name": meta.get("client_name", "")})

    def authorize(self, q: dict, form: dict):
        if "request_uri" in q:
            with LOCK:
                pushed = PUSHED.pop(q["request_uri"], None)
            if pushed is None or pushed["expires"] < time.time() or pushed["params"].get("client_id") != q.get("client_id"):
                return self.send(400, "request_uri unknown, used or expired", "text/plain")
            # As idpyoidc validates the URL before swapping in the pushed request: response_type must be there
            # (RFC 9101 5 lets a client repeat the OAuth parameters beside request_uri), and what is repeated must
            # be what was pushed; nothing else of the request may be on the URL.
            if set(q) - {"client_id", "request_uri", "response_type", "scope", "redirect_uri", "prompt"}:
                return self.send(400, "with request_uri, only client_id, response_type, scope, redirect_uri and prompt may be in the URL", "text/plain")
            # idpyoidc 5 reads prompt from the URL too: a pushed prompt must be repeated there, the same.
            if pushed["params"].get("prompt") and q.get("prompt") != pushed["params"].get("prompt"):
                return self.send(400, "consent in prompt", "text/plain")
            if q.get("response_type") != "code":
                return self.send(400, "response_type missing beside request_uri", "text/plain")
            # idpyoidc 5 checks redirect_uri too before it restores the pushed request (400 "Missing required
            # attribute 'redirect_uri'"), and it must be the pushed one.
            if q.get("redirect_uri") != pushed["params"].get("redirect_uri"):
                return self.send(400, "Missing required attribute 'redirect_uri'", "text/plain")
            if "scope" in q and q["scope"] != pushed["params"].get("scope"):
                return self.send(400, "the URL's scope is not the pushed one", "text/plain")
            url_keys = sorted(q)
            q = pushed["params"]
            st = client(q["client_id"]).stats
            with LOCK:
                st["authorize_pushed"] = st.get("authorize_pushed", 0) + 1
                st["authorize_url_keys"] = url_keys
        elif self.discovery_says("require_pushed_authorization_requests"):
            return self.send(400, "pushed authorization request required", "text/plain")
        cl = client(q.get("client_id", ""))
        if q.get("client_id", "").startswith(("https://", "http://")):
            # A client ID metadata document (draft-ietf-oauth-client-id-metadata-document): the client_id is its URL;
            # the document must name itself, and list the redirect URI (a loopback one with any port).
            doc = DOCUMENTS.get(q["client_id"])
            if doc is None or doc.get("client_id") != q["client_id"]:
                return self.send(400, "client_id metadata document not found or not naming itself", "text/plain")
            ru = urllib.parse.urlparse(q.get("redirect_uri", ""))
            listed = [urllib.parse.urlparse(u) for u in doc.get("redirect_uris", [])]
            if not any(l.scheme == ru.scheme and l.hostname == ru.hostname and l.path == ru.path for l in listed):
                return self.send(400, "redirect_uri not in the client's metadata document", "text/plain")
            st = client("_api").stats
            with LOCK:
                st["documents_used"] = st.get("documents_used", 0) + 1
        cl.stats["authorize_requests"] += 1
        redirect = q.get("redirect_uri", "")
        ru = urllib.parse.urlparse(redirect)
        # A loopback redirect only; the port may vary (RFC 8252 7.3), the path must be the registered one.
        hosts = ("127.0.0.1", "::1", "localhost") if cl.c("allow_localhost") else ("127.0.0.1", "::1")
        if cl.c("only_localhost"):  # registered as http://localhost only (Cognito)
            hosts = ("localhost",)
        if ru.scheme != "http" or ru.hostname not in hosts or ru.path != cl.c("redirect_path", "/callback"):
            return self.send(400, "redirect_uri not registered", "text/plain")
        if cl.c("fixed_port") and ru.port != int(cl.c("fixed_port")):
            return self.send(400, "redirect_uri port not registered", "text/plain")
        if q.get("code_challenge_method") != "S256" or len(q.get("code_challenge", "")) != 43:
            return self.send(400, "PKCE S256 required", "text/plain")
        # OpenID Core 11, as certified providers (oidcop, idpyoidc) enforce it.
        if cl.c("offline_needs_consent") and "offline_access" in q.get("scope", "").split() and "consent" not in q.get("prompt", "").split():
            return self.send(400, "offline_access requires prompt=consent", "text/plain")
        params = {"state": q.get("state", "")}
        if cl.c("iss_param", True):
            params["iss"] = cl.c("iss_override", self.issuer)
        if form.get("action") == "deny" or cl.c("deny"):
            # "deny_error": how this provider says the person refused (LemonLDAP::NG: consent_required).
            params["error"] = cl.c("deny_error", "access_denied")
        else:
            sub = form.get("sub") or cl.c("sub", "alice")
            code = "code-" + secrets.token_urlsafe(24)
            resources = q.get("resource") if isinstance(q.get("resource"), list) else ([q["resource"]] if q.get("resource") else [])
            cl.stats["authorize_resources"] = resources
            cl.codes[code] = {"sub": sub, "redirect_uri": redirect, "challenge": q.get("code_challenge"), "nonce": q.get("nonce"),
                              "scope": q.get("scope", "openid"), "used": False, "family": code, "resources": resources}
            params["code"] = code
        location = cl.c("redirect_override", redirect) + "?" + urllib.parse.urlencode(params)
        self.send(302, b"", "text/plain", {"Location": location})

    def token(self, f: dict):
        cid, method = self.client_auth(f)
        if cid is None:
            return self.oauth_error("invalid_client", 401)
        cl = client(cid)
        with LOCK:
            cl.stats["token_requests"] += 1
        grant = f.get("grant_type")
        if grant == "refresh_token":
            with LOCK:
                cl.stats["refreshes"] += 1
                cl.stats["last_refresh_auth"] = method
        if self.fault(cl, "token"):
            return
        self.form_answer = bool(cl.c("form_answer"))
        if cl.c("token_error_200"):
            # GitHub answers a refused code with HTTP 200 and an error in the body.
            return self.send(200, {"error": cl.c("token_error_200"), "error_description": "The code passed is incorrect or expired."})
        jkt, refusal = self.dpop(cl, "/token")
        if refusal is not None:
            return self.dpop_refusal(refusal)
        if jkt is None and cl.c("dpop_required"):
            return self.send(400, {"error": "invalid_dpop_proof", "error_description": "a DPoP proof is required"})
        refreshed = None
        with LOCK:
            if grant == "authorization_code":
                cl.stats["code_exchanges"] += 1
                g = cl.codes.get(f.get("code", ""))
                if g is None:
                    return self.send(403, {"error": "invalid_code"})
                if g["used"]:
                    # A replayed code: refuse, and revoke what it issued.
                    for rt, info in list(cl.refresh.items()):
                        if info["family"] == g["family"]:
                            del cl.refresh[rt]
                    return self.send(403, {"error": "invalid_code"})
                g["used"] = True
                if f.get("redirect_uri") != g["redirect_uri"]:
                    return self.oauth_error("invalid_grant", description="redirect_uri does not match")
                verifier = f.get("code_verifier", "")
                expected = b64u(hashlib.sha256(verifier.encode()).digest())
                cl.stats["verifier_matched"] = 43 <= len(verifier) <= 128 and expected == g["challenge"]
                if not cl.c("ignore_pkce") and not cl.stats["verifier_matched"]:
                    return self.send(403, {"error": "invalid_code"})
                # RFC 8707 2.2: a code exchange that names one of the grant's resources gets a token for it alone.
                asked = f.get("resource")
                if asked is not None and asked not in (g.get("resources") or []):
                    return self.oauth_error("invalid_target", description="the resource was not asked for at authorization")
                cl.stats["exchange_resource"] = asked
                return self.send(200, self.issue(cl, g["sub"], g["nonce"], g["scope"], True, g["family"], jkt, g.get("resources"), asked))
            if grant == "refresh_token":
                rt = f.get("refresh_token", "")
                info = cl.refresh.get(rt)
                if info is None:
                    return self.send(400, b"") if cl.c("dead_refresh_empty") else self.oauth_error("invalid_grant")
                if info.get("jkt") and info["jkt"] != jkt:
                    # A refresh token bound to a key is worth nothing without a proof of that key (RFC 9449 5).
                    cl.stats["dpop_unbound_refreshes"] = cl.stats.get("dpop_unbound_refreshes", 0) + 1
                    return self.send(400, {"error": "invalid_dpop_proof", "error_description": "the refresh token is bound to another key"})
                resource = f.get("resource")
                if resource is not None and resource not in info.get("resources", []) and not cl.c("any_resource"):
                    # RFC 8707 2: a resource the grant was not asked for (glewlwyd's rule too).
                    cl.stats["refused_resources"] = cl.stats.get("refused_resources", 0) + 1
                    return self.oauth_error("invalid_target", description="the resource was not asked for at sign-in")
                if resource is not None:
                    cl.stats["resource_refreshes"] = cl.stats.get("resource_refreshes", 0) + 1
                if cl.c("rotate", True):
                    del cl.refresh[rt]
                # ignore_resource: a provider without RFC 8707 (Keycloak, Okta, Entra ID, Google): the grant's token.
                body = self.issue(cl, cl.c("refresh_sub", info["sub"]), None, info["scope"], bool(cl.c("id_token_on_refresh", False)), info["family"],
                                  info.get("jkt"), info.get("resources"), None if cl.c("ignore_resource") else resource)
                if not cl.c("rotate", True):
                    del cl.refresh[body["refresh_token"]]
                    body.pop("refresh_token")
                refreshed = body
                by_sub = cl.stats["refreshes_by_sub"]
                by_sub[info["sub"]] = by_sub.get(info["sub"], 0) + 1
                cl.stats["refreshes_in_flight"] += 1
                cl.stats["max_refreshes_in_flight"] = max(cl.stats["max_refreshes_in_flight"], cl.stats["refreshes_in_flight"])
            if grant == "urn:ietf:params:oauth:grant-type:token-exchange" and f.get("requested_token_type") == "urn:ietf:params:oauth:token-type:id-jag":
                # The enterprise IdP of MCP's enterprise-managed authorization: the person's ID token (this client's,
                # issued here, unexpired) traded for an ID-JAG for one authorization server (`audience`) and one MCP
                # server (`resource`), as its policy allows (`idjag_refused`: audiences refused; `idjag_clients`: the
                # client_id this client has at each audience, default "ema-client"). What it was sent is recorded.
                record = {k: v for k, v in f.items() if k not in ("subject_token", "client_secret", "client_assertion")}
                record["auth"] = method
                cl.stats.setdefault("idjag_requests", []).append(record)
                if f.get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
                    return self.oauth_error("invalid_request", description="subject_token_type must be an ID token")
                claims = verify(f.get("subject_token", ""))
                if cl.c("idjag_session_ended") or f.get("subject_token") in cl.ended_id_tokens:
                    claims = None  # the person's session at the IdP ended: no ID token of theirs is taken
                if not claims or claims.get("iss") != self.issuer or claims.get("aud") != cl.client_id or claims.get("exp", 0) < time.time():
                    return self.oauth_error("invalid_grant", description="the subject token is not a live ID token of this client")
                audience, resource = f.get("audience"), f.get("resource")
                if not audience or not resource:
                    return self.oauth_error("invalid_request", description="audience and resource are required")
                if audience in cl.c("idjag_refused", []) or resource in cl.c("idjag_refused", []):
                    cl.stats["idjag_refused"] = cl.stats.get("idjag_refused", 0) + 1
                    return self.oauth_error("invalid_target", description="the policy does not let this person reach that server")
                now = int(time.time())
                assertion = {"iss": self.issuer, "sub": claims["sub"], "aud": audience, "resource": resource,
                             "client_id": cl.c("idjag_clients", {}).get(audience, "ema-client"), "jti": secrets.token_urlsafe(16),
                             "iat": now, "exp": now + int(cl.c("idjag_ttl", 300)), "scope": f.get("scope") or "mcp"}
                cl.stats["idjag_issued"] = cl.stats.get("idjag_issued", 0) + 1
                return self.send(200, {"access_token": sign(assertion, typ=cl.c("idjag_typ", "oauth-id-jag+jwt")), "token_type": "N_A",
                                       "issued_token_type": cl.c("idjag_issued_type", "urn:ietf:params:oauth:token-type:id-jag"), "expires_in": 300})
            if grant == "urn:ietf:params:oauth:grant-type:token-exchange":
                # RFC 8693, as idpyoidc's helper answers it: an access token for the audience, no refresh token.
                cl.stats["exchanges"] = cl.stats.get("exchanges", 0) + 1
                subject = f.get("subject_token", "")
                if f.get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" or subject not in cl.access:
                    return self.oauth_error("invalid_request", description="subject_token is not an access token issued here")
                if cl.access_jkt.get(subject) and cl.access_jkt[subject] != jkt:
                    return self.send(400, {"error": "invalid_dpop_proof", "error_description": "the subject token is bound to another key"})
                audience = f.get("audience") or f.get("resource")
                if not audience or audience in cl.c("refused_audiences", []) or "refused" in audience:
                    cl.stats["refused_exchanges"] = cl.stats.get("refused_exchanges", 0) + 1
                    return self.oauth_error("invalid_target", description="this audience is not served to this client")
                xt = "xt-" + secrets.token_urlsafe(24)
                cl.access[xt] = cl.access[subject]
                cl.access_aud[xt] = audience
                if jkt:
                    cl.access_jkt[xt] = jkt
                return self.send(200, {"access_token": xt, "issued_token_type": cl.c("exchange_issued_type", "urn:ietf:params:oauth:token-type:access_token"),
                                       "token_type": "DPoP" if jkt else "Bearer", "expires_in": int(cl.c("exchange_ttl", 1800))})
            if grant == "urn:ietf:params:oauth:grant-type:device_code":
                cl.stats["device_polls"] += 1
                d = cl.devices.get(f.get("device_code", ""))
                if d is None:
                    return self.oauth_error("invalid_grant")
                if time.time() > d["expires"]:
                    return self.oauth_error("expired_token")
                if d["slow_down"] > 0:
                    d["slow_down"] -= 1
                    return self.oauth_error("slow_down")
                if d["state"] == "denied":
                    return self.oauth_error("access_denied")
                if d["state"] != "approved":
                    return self.oauth_error("authorization_pending")
                del cl.devices[f["device_code"]]
                return self.send(200, self.issue(cl, d["sub"], None, d["scope"], True, f["device_code"], jkt))
        if grant == "refresh_token" and refreshed is not None:
            # Rotated already (the old refresh token is spent); the answer may be slow to arrive.
            time.sleep(float(cl.c("refresh_delay", 0)))
            # refresh_hold: the answer waits until a test lifts the hold (bounded, so a failing test cannot hang).
            held_until = time.monotonic() + 30
            while cl.c("refresh_hold", False) and time.monotonic() < held_until:
                time.sleep(0.01)
            with LOCK:
                cl.stats["refreshes_in_flight"] -= 1
            return self.send(200, refreshed)
        self.oauth_error("unsupported_grant_type")

    def revoke(self, f: dict):
        cid, _ = self.client_auth(f)
        if cid is None:
            return self.oauth_error("invalid_client", 401)
        cl = client(cid)
        cl.stats["revocations"] += 1
        if self.fault(cl, "revoke"):
            return
        jkt, refusal = self.dpop(cl, "/revoke")
        if refusal is not None:
            return self.dpop_refusal(refusal)
        if jkt:
            cl.stats["dpop_revocations"] = cl.stats.get("dpop_revocations", 0) + 1
        with LOCK:
            tok = f.get("token", "")
            info = cl.refresh.pop(tok, None)
            if info:
                for rt, other in list(cl.refresh.items()):
                    if other["family"] == info["family"]:
                        del cl.refresh[rt]
            cl.access.pop(tok, None)
        self.send(200, b"")

    def device(self, f: dict):
        cid, _ = self.client_auth(f)
        if cid is None:
            return self.oauth_error("invalid_client", 401)
        cl = client(cid)
        if self.fault(cl, "device"):
            return
        if "restricted" in f.get("scope", ""):
            return self.oauth_error("invalid_scope")
        dc = "dc-" + secrets.token_urlsafe(16)
        uc = "%04d-%04d" % (secrets.randbelow(10000), secrets.randbelow(10000))
        with LOCK:
            cl.devices[dc] = {"user_code": uc, "state": "pending", "sub": "alice", "scope": f.get("scope", "openid"),
                              "slow_down": int(cl.c("device_slow_down", 0)),
                              "expires": time.time() + int(cl.c("device_expires_in", 600))}
        self.send(200, {"device_code": dc, "user_code": uc, "verification_uri": self.issuer + "/device/verify",
                        "verification_uri_complete": self.issuer + "/device/verify?user_code=" + uc,
                        "expires_in": int(cl.c("device_expires_in", 600)), "interval": int(cl.c("device_interval", 1))})

    def device_approve(self, f: dict):
        """The person on the other device: approve or deny a user code."""
        with LOCK:
            for cl in CLIENTS.values():
                for d in cl.devices.values():
                    if d["user_code"] == f.get("user_code"):
                        d["state"] = "denied" if f.get("action") == "deny" else "approved"
                        d["sub"] = f.get("sub", "alice")
                        return self.send(200, {"ok": True})
        self.send(404, {"error": "unknown user_code"})


def main():
    server = LoopbackServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if os.environ.get("STRICT_TLS"):
        # STRICT_TLS_CERT_OUT: for a test that trusts this certificate explicitly.
        context = self_signed_context(RSA_KEY, os.environ.get("STRICT_TLS_CERT_OUT"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    serve_until_stdin_closes(server)


if __name__ == "__main__":
    main()
