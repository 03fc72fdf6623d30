"""A token server for Debian's docker-registry (distribution 2.8 token authentication), as Google's registries
work: the user name is `oauth2accesstoken` and the password an access token, which this server checks against the
test provider's userinfo endpoint before issuing a registry token (a JWT whose header carries an `x5c` chain to
the root certificate the registry is configured with).

Usage: registry_token_server.py ISSUER ROOT_CERT_OUT. Writes the root certificate (PEM) to ROOT_CERT_OUT, prints
`READY <port>`, serves GET /token and GET /_stats, and exits when standard input closes.
"""
import base64
import datetime
import json
import secrets
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from harness import LoopbackServer, serve_until_stdin_closes

ISSUER, ROOT_OUT = sys.argv[1], sys.argv[2]
TOKEN_ISSUER = "signin-test-token-server"
STATS = {"issued": 0, "refused": 0, "anonymous": 0, "scopes": []}
LOCK = threading.Lock()


def certificate(subject: str, key, issuer_name, issuer_key, ca: bool):
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
         .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    return b.sign(issuer_key, hashes.SHA256())


ROOT_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ROOT_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "signin test registry root")])
ROOT = certificate("signin test registry root", ROOT_KEY, ROOT_NAME, ROOT_KEY, True)
LEAF_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
LEAF = certificate("signin test token signer", LEAF_KEY, ROOT_NAME, ROOT_KEY, False)
with open(ROOT_OUT, "wb") as f:
    f.write(ROOT.public_bytes(serialization.Encoding.PEM))


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def registry_token(sub: str, service: str, scopes: list[str]) -> str:
    header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(LEAF.public_bytes(serialization.Encoding.DER)).decode()]}
    access = []
    for s in scopes:
        kind, _, rest = s.partition(":")
        name, _, actions = rest.rpartition(":")
        access.append({"type": kind, "name": name, "actions": [a for a in actions.split(",") if a]})
    now = int(time.time())
    claims = {"iss": TOKEN_ISSUER, "sub": sub, "aud": service, "exp": now + 300, "nbf": now - 10, "iat": now,
              "jti": secrets.token_hex(8), "access": access}
    signing_input = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())
    return signing_input + "." + b64u(LEAF_KEY.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256()))


def person(access_token: str) -> str | None:
    """The sub the provider's userinfo endpoint gives for this access token, or None."""
    req = urllib.request.Request(ISSUER + "/userinfo", headers={"Authorization": "Bearer " + access_token})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read()).get("sub")
    except Exception:
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status: int, body: dict):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        if u.path == "/_stats":
            with LOCK:
                return self.send(200, STATS)
        if u.path != "/token":
            return self.send(404, {"error": "not found"})
        q = urllib.parse.parse_qs(u.query)
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            with LOCK:
                STATS["anonymous"] += 1
            return self.send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]})
        user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        sub = person(password) if user == "oauth2accesstoken" else None
        if sub is None:
            with LOCK:
                STATS["refused"] += 1
            return self.send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "the password is not a valid access token"}]})
        scopes = q.get("scope", [])
        with LOCK:
            STATS["issued"] += 1
            STATS["scopes"] += scopes
        token = registry_token(sub, q.get("service", [""])[0], scopes)
        self.send(200, {"token": token, "access_token": token, "expires_in": 300})


if __name__ == "__main__":
    serve_until_stdin_closes(LoopbackServer(("127.0.0.1", 0), Handler))
