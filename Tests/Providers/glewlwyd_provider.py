"""glewlwyd (Debian's OpenID provider, which offers DPoP and PAR), started for signin's tests on loopback.

A state folder of its own (SQLite database from the package's schema), a free port chosen by the OS and handed
to glewlwyd, then set up through its admin API: an OIDC plugin instance `oidc` (RS256 ID tokens, PKCE, refresh,
device flow, revocation, DPoP allowed, PAR allowed; GLEWLWYD_DPOP_NONCE=1 makes a DPoP nonce mandatory), a user
`alice` (password `alice-password`), and clients registered on demand.

Prints `READY <port> <control_port>` once glewlwyd answers; the control port (127.0.0.1, chosen by the OS, not
glewlwyd's) takes POST /client with JSON {"client_id", "redirect_uri"[, "client_secret"]} and registers that client
(confidential, with client_secret_basic, when a secret is given). Exits (and stops glewlwyd) when
standard input closes.
"""
import gzip
import http.cookiejar
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
import datetime

SCHEMA = "/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz"
USER, PASSWORD = "alice", "alice-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Admin:
    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.call("POST", "/auth/", {"username": "admin", "password": "password"})

    def call(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            raise SystemExit(f"glewlwyd {method} {path}: HTTP {e.code} {e.read()[:300]!r}")


def key_and_cert():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "signin-tests")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
    return (key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode(),
            cert.public_bytes(serialization.Encoding.PEM).decode())


def main():
    work = tempfile.mkdtemp(prefix="signin-glewlwyd-")
    db = os.path.join(work, "glewlwyd.db")
    con = sqlite3.connect(db)
    con.executescript(gzip.open(SCHEMA, "rt").read())
    con.commit()
    con.close()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    conf = os.path.join(work, "glewlwyd.conf")
    with open(conf, "w") as f:
        f.write(f'''port={port}
bind_address="127.0.0.1"
external_url="{base}"
login_url="login.html"
api_prefix="api"
allow_origin="*"
log_mode="console"
log_level="ERROR"
cookie_secure=0
cookie_same_site="empty"
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
add_x_frame_option_header_deny=true
max_post_size=16778240
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
hash_algorithm="SHA512"
database =
{{
  type = "sqlite3"
  path = "{db}"
}};
''')
    proc = subprocess.Popen(["glewlwyd", f"--config-file={conf}"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "log"), "w"))
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/api/", timeout=1)
            break
        except urllib.error.HTTPError:
            break
        except Exception:
            if proc.poll() is not None:
                raise SystemExit("glewlwyd ended: " + open(os.path.join(work, "log")).read()[-2000:])
            time.sleep(0.05)
    admin = Admin(base + "/api")
    key, cert = key_and_cert()
    params = {
        "iss": base + "/api/oidc", "jwt-type": "rsa", "jwt-key-size": "256", "key": key, "cert": cert,
        "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600, "refresh-token-rolling": True,
        "allow-non-oidc": False, "auth-type-code-enabled": True, "auth-type-refresh-enabled": True, "auth-type-device-enabled": True,
        "auth-type-token-enabled": False, "auth-type-id-token-enabled": True, "auth-type-client-enabled": False,
        "auth-type-password-enabled": False, "pkce-allowed": True, "pkce-method-plain-allowed": False,
        "introspection-revocation-allowed": True, "introspection-revocation-allow-target-client": True,
        "oauth-dpop-allowed": True, "oauth-dpop-iat-duration": 60, "oauth-dpop-iat-gap-duration": 5,
        "oauth-par-allowed": True, "oauth-par-required": False, "oauth-par-request_uri-prefix": "urn:ietf:params:oauth:request_uri:",
        "oauth-par-duration": 90,
    }
    if os.environ.get("GLEWLWYD_RESOURCES"):
        # RFC 8707: these resources may be asked for with the openid scope; glewlwyd then sets `aud` to the one asked.
        params.update({"resource-allowed": True, "resource-scope": {"openid": os.environ["GLEWLWYD_RESOURCES"].split(",")},
                       "resource-client-property": "", "resource-scope-and-client-property": False})
    if os.environ.get("GLEWLWYD_DPOP_NONCE"):
        params.update({"oauth-dpop-nonce-mandatory": True, "oauth-dpop-nonce-counter": 5})
    admin.call("POST", "/mod/plugin/", {"module": "oidc", "name": "oidc", "display_name": "oidc", "enabled": True, "parameters": params})
    admin.call("POST", "/user/", {"username": USER, "name": "Alice Example", "email": "alice@example.org", "password": PASSWORD,
                                  "enabled": True, "scope": ["g_profile", "openid"]})

    class Control(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            client = {"client_id": body["client_id"], "client_name": body["client_id"], "confidential": "client_secret" in body,
                      "enabled": True, "redirect_uri": [body["redirect_uri"]], "scope": ["openid"],
                      "authorization_type": ["code", "refresh_token", "delete_token", "device_authorization"]}
            if "client_secret" in body:
                client.update({"client_secret": body["client_secret"], "token_endpoint_auth_method": ["client_secret_basic"]})
            admin.call("POST", "/client/", client)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    control = ThreadingHTTPServer(("127.0.0.1", 0), Control)
    threading.Thread(target=control.serve_forever, daemon=True).start()
    print(f"READY {port} {control.server_address[1]}", flush=True)
    sys.stdin.read()
    proc.terminate()
    proc.wait()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
