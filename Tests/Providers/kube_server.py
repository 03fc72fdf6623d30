"""A stand-in Kubernetes API server for the kubectl exec-plugin test: HTTPS with a throwaway self-signed
certificate, answers GET /version, and records each request's Authorization header.

Prints `READY <port>`; exits when standard input closes. GET /_seen answers the recorded headers (a JSON list).
"""
import json
from http.server import BaseHTTPRequestHandler

from cryptography.hazmat.primitives.asymmetric import ec

from harness import LoopbackServer, self_signed_context, serve_until_stdin_closes

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


if __name__ == "__main__":
    server = LoopbackServer(("127.0.0.1", 0), Handler)
    server.socket = self_signed_context(ec.generate_private_key(ec.SECP256R1())).wrap_socket(server.socket, server_side=True)
    serve_until_stdin_closes(server)
