"""A stand-in Kubernetes API server for the kubectl exec-plugin test: HTTPS with a throwaway self-signed
certificate, answers GET /version, and records each request's Authorization header.

Prints `READY <port>`; exits when standard input closes. GET /_seen answers the recorded headers (a JSON list).
"""
import json
import os
import ssl
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import serve_until_stdin_closes

SEEN = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/_seen":
            body = json.dumps(SEEN).encode()
        else:
            SEEN.append(self.headers.get("Authorization", ""))
            if not self.headers.get("Authorization", "").startswith("Bearer "):
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"major": "1", "minor": "99", "gitVersion": "v1.99.0-signin-test", "platform": "linux/amd64"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def context():
    import datetime
    import ipaddress
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
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    folder = tempfile.mkdtemp()
    with open(f"{folder}/cert.pem", "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(f"{folder}/key.pem", "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    if os.environ.get("KUBE_CERT_OUT"):
        with open(os.environ["KUBE_CERT_OUT"], "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(f"{folder}/cert.pem", f"{folder}/key.pem")
    return ctx


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context().wrap_socket(server.socket, server_side=True)
    serve_until_stdin_closes(server)
