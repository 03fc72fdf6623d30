"""An OpenID provider no one here wrote: idpyoidc's OP (IdentityPython, from PyPI), on 127.0.0.1 at a free port, with
token exchange (RFC 8693) through idpyoidc's own helper. A thin HTTP front only routes requests to idpyoidc's
endpoints; idpyoidc checks the requests and makes the answers (the ID token, PKCE, client authentication, the
exchange's policy). The person is "diana" (idpyoidc's NoAuthn: no login page).

Prints `READY <port>`; runs until its standard input closes. `POST /_client` with {"client_id", "client_secret",
"redirect_uri", "audiences"} registers a client that may exchange its access tokens for those audiences (any other
audience: idpyoidc's `invalid_target`). `GET /_stats` counts the exchanges idpyoidc answered and the pushed
requests. With IDPYOIDC_PAR=1, idpyoidc's own pushed authorization endpoint (RFC 9126) is served at /par and named in
its discovery document.
"""
import copy
import json
import os
import shutil
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

from harness import serve_until_stdin_closes
from idpyoidc.server import Server
from idpyoidc.server.configure import DEFAULT_EXTENDED_CONF, OPConfiguration

EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS = "urn:ietf:params:oauth:token-type:access_token"


def main():
    work = tempfile.mkdtemp(prefix="signin-idpyoidc-")
    httpd = HTTPServer(("127.0.0.1", 0), None)
    issuer = f"http://127.0.0.1:{httpd.server_address[1]}"
    conf = copy.deepcopy(DEFAULT_EXTENDED_CONF)
    conf["issuer"] = issuer
    conf["base_url"] = issuer
    conf["authentication"] = {"anon": {"acr": "urn:oasis:names:tc:SAML:2.0:ac:classes:InternetProtocolPassword",
                                       "class": "idpyoidc.server.user_authn.user.NoAuthn", "kwargs": {"user": "diana"}}}
    conf["userinfo"] = {"class": "idpyoidc.server.user_info.UserInfo",
                        "kwargs": {"db": {"diana": {"sub": "diana", "name": "Diana Krall", "email": "diana@example.org", "email_verified": True}}}}
    conf["add_on"].pop("claims", None)
    # An access token may be exchanged for another (idpyoidc's grant usage rules), as its own tests configure it.
    rules = conf["authz"]["kwargs"]["grant_config"]["usage_rules"]
    rules["access_token"] = {"supports_minting": ["access_token"], "expires_in": 3600}
    # The token endpoint has idpyoidc's token exchange helper; its discovery document says so too.
    conf["preference"]["grant_types_supported"] = ["authorization_code", "refresh_token", EXCHANGE]
    if os.environ.get("IDPYOIDC_PAR"):
        conf["endpoint"]["pushed_authorization"] = {
            "path": "par", "class": "idpyoidc.server.oauth2.pushed_authorization.PushedAuthorization",
            "kwargs": {"client_authn_method": ["client_secret_post", "client_secret_basic"]}}
    server = Server(OPConfiguration(conf=conf, base_path=work), cwd=work)
    context = server.context
    context.map_supported_to_preferred()
    endpoints = {name: server.get_endpoint(name) for name in ("provider_config", "authorization", "token", "userinfo")}
    if os.environ.get("IDPYOIDC_PAR"):
        endpoints["pushed_authorization"] = server.get_endpoint("pushed_authorization")
    stats = {"exchanges": 0, "refused_exchanges": 0, "pushed": 0, "authorize_url_keys": []}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send(self, status, body, ctype="application/json", headers=None):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def http_info(self):
            return {"headers": {k.lower(): v for k, v in self.headers.items()}, "method": self.command, "url": issuer + self.path}

        def answer(self, name, request):
            ep = endpoints[name]
            parsed = ep.parse_request(request, http_info=self.http_info())
            if isinstance(parsed, dict) and "error" in parsed and not hasattr(parsed, "verify"):
                return self.send(400, json.dumps(parsed))
            try:
                if "error" in parsed:
                    return self.send(400, parsed.to_json())
            except TypeError:
                pass
            args = ep.process_request(parsed, http_info=self.http_info())
            if name == "pushed_authorization" and "http_response" in args:
                # idpyoidc hands the pushed request's answer to the web layer as it is (its own example servers
                # write it as JSON): 201 with the request_uri (RFC 9126 2.2).
                return self.send(201, json.dumps(args["http_response"]))
            out = ep.do_response(request=parsed, **args)
            body = out["response"]
            if name == "authorization":
                return self.send(302, b"", "text/plain", {"Location": body})
            status = 400 if "error" in json.loads(body) else 200
            if name == "token" and parsed.get("grant_type") == EXCHANGE:
                with lock:
                    stats["exchanges" if status == 200 else "refused_exchanges"] += 1
            headers = dict(out.get("http_headers", []))
            headers.pop("Content-type", None)
            return self.send(status, body, headers=headers)

        def do_GET(self):
            u = urllib.parse.urlparse(self.path)
            q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query).items()}
            if u.path == "/.well-known/openid-configuration":
                args = endpoints["provider_config"].process_request()
                return self.send(200, endpoints["provider_config"].do_response(**args)["response"])
            if u.path == urllib.parse.urlparse(context.provider_info["jwks_uri"]).path:
                return self.send(200, json.dumps(server.keyjar.export_jwks(issuer_id="")))
            if u.path == "/_stats":
                with lock:
                    return self.send(200, json.dumps(stats))
            if u.path == urllib.parse.urlparse(context.provider_info["authorization_endpoint"]).path:
                with lock:
                    stats["authorize_url_keys"] = sorted(q)
                return self.answer("authorization", q)
            if u.path == urllib.parse.urlparse(context.provider_info["userinfo_endpoint"]).path:
                return self.answer("userinfo", {})
            self.send(404, json.dumps({"error": "not_found"}))

        def do_POST(self):
            u = urllib.parse.urlparse(self.path)
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n).decode() if n else ""
            if u.path == "/_client":
                c = json.loads(body)
                context.cdb[c["client_id"]] = {
                    "client_id": c["client_id"], "client_secret": c["client_secret"], "client_salt": "salted",
                    "redirect_uris": [(c["redirect_uri"], None)], "token_endpoint_auth_method": "client_secret_basic",
                    "grant_types_supported": ["authorization_code", "refresh_token", EXCHANGE],
                    "response_types": ["code"], "allowed_scopes": ["openid", "profile", "email", "offline_access"],
                    "token_exchange": {
                        "subject_token_types_supported": [ACCESS], "requested_token_types_supported": [ACCESS],
                        "default_requested_token_type": ACCESS,
                        "policy": {"": {"function": "idpyoidc.server.oauth2.token_helper.validate_token_exchange_policy",
                                        "kwargs": {"scope": ["openid", "profile", "email"], "audience": c.get("audiences", [])}}},
                    },
                }
                return self.send(200, "{}")
            if u.path == urllib.parse.urlparse(context.provider_info["authorization_endpoint"]).path:
                q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query).items()}
                with lock:
                    stats["authorize_url_keys"] = sorted(q)
                return self.answer("authorization", q)
            if u.path == urllib.parse.urlparse(context.provider_info["token_endpoint"]).path:
                return self.answer("token", body)
            if "pushed_authorization" in endpoints and u.path == "/par":
                with lock:
                    stats["pushed"] += 1
                return self.answer("pushed_authorization", body)
            self.send(404, json.dumps({"error": "not_found"}))

    httpd.RequestHandlerClass = Handler
    serve_until_stdin_closes(httpd, cleanup=lambda: shutil.rmtree(work, ignore_errors=True))


if __name__ == "__main__":
    main()
