"""AWS STS on loopback for the AWS tests: moto's server (every AWS API aws-cli may ask, `get-caller-identity`
included) behind a front that does what moto does not, as real STS does for AssumeRoleWithWebIdentity:

- the web identity token is verified against its issuer's keys (discovery, then `jwks_uri`): a bad signature or
  an issuer that is not trusted is `InvalidIdentityToken`, an expired token `ExpiredTokenException`;
- a role whose name starts with `untrusted` does not trust the provider: `AccessDenied`;
- every AssumeRoleWithWebIdentity is counted: `GET /_count` answers {"assume": N, "sessions": [...]}.

Usage: aws_sts.py ISSUER [ISSUER...]. Prints `READY <port>`; exits when standard input closes.
"""
import base64
import json
import sys
import threading
import time
import urllib.parse
import urllib.request
from io import BytesIO

import warnings

warnings.filterwarnings("ignore", message=".*authlib.jose.*")
from authlib.jose import JsonWebKey, jwt  # noqa: E402
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

from harness import serve_until_stdin_closes

TRUSTED = sys.argv[1:]
COUNT = {"assume": 0, "sessions": []}
LOCK = threading.Lock()
KEYS = {}


def keys(issuer):
    if issuer not in KEYS:
        with urllib.request.urlopen(issuer.rstrip("/") + "/.well-known/openid-configuration", timeout=5) as r:
            jwks_uri = json.load(r)["jwks_uri"]
        with urllib.request.urlopen(jwks_uri, timeout=5) as r:
            KEYS[issuer] = JsonWebKey.import_key_set(json.load(r))
    return KEYS[issuer]


def error(start, status, code, message):
    body = (f'<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>{code}</Code>'
            f'<Message>{message}</Message></Error><RequestId>signin-test</RequestId></ErrorResponse>').encode()
    start(status, [("Content-Type", "text/xml"), ("Content-Length", str(len(body)))])
    return [body]


def refusal(form):
    """The error STS would answer for this AssumeRoleWithWebIdentity, or None."""
    token = form.get("WebIdentityToken", "")
    try:
        unverified = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "==="))
        issuer = unverified.get("iss", "")
    except Exception:
        return ("400 Bad Request", "InvalidIdentityToken", "The web identity token is not a JWT")
    if issuer not in TRUSTED:
        return ("400 Bad Request", "InvalidIdentityToken", f"No OpenIDConnect provider found in your account for {issuer}")
    try:
        claims = jwt.decode(token, keys(issuer))
    except Exception as e:
        return ("400 Bad Request", "InvalidIdentityToken", f"Couldn't verify the token: {type(e).__name__}")
    if not claims.get("aud"):
        return ("400 Bad Request", "InvalidIdentityToken", "Incorrect token audience")
    if float(claims.get("exp", 0)) < time.time():
        return ("400 Bad Request", "ExpiredTokenException", "Token expired")
    role = form.get("RoleArn", "")
    if role.rsplit("/", 1)[-1].startswith("untrusted"):
        return ("403 Forbidden", "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity")
    return None


def front(moto):
    def app(environ, start):
        if environ.get("PATH_INFO") == "/_count":
            with LOCK:
                body = json.dumps(COUNT).encode()
            start("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = BytesIO(raw)
        form = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode("utf-8", "replace")).items()}
        if environ.get("REQUEST_METHOD") == "POST" and form.get("Action") == "AssumeRoleWithWebIdentity":
            with LOCK:
                COUNT["assume"] += 1
                COUNT["sessions"].append(form.get("RoleSessionName", ""))
            refused = refusal(form)
            if refused:
                return error(start, *refused)
        return moto(environ, start)
    return app


if __name__ == "__main__":
    server = make_server("127.0.0.1", 0, front(DomainDispatcherApplication(create_backend_app)), threaded=True)
    server.server_port = server.port
    serve_until_stdin_closes(server)
