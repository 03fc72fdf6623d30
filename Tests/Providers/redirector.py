"""An API on loopback for SignInKitURLSession's redirect rules: GET /redirect?to=URL answers 302 to URL;
GET /echo answers the Authorization header it was sent (or "none"); GET /refuse answers 401 with a Bearer
invalid_token challenge and counts the tokens it was shown (GET /_count).

Prints `READY <port>`; exits when standard input closes.
"""
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from harness import LoopbackServer, serve_until_stdin_closes

REFUSED = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/redirect":
            self.answer(302, headers=[("Location", parse_qs(url.query)["to"][0])])
        elif url.path == "/echo":
            self.answer(200, (self.headers.get("Authorization") or "none").encode())
        elif url.path == "/refuse":
            REFUSED.append(self.headers.get("Authorization") or "none")
            self.answer(401, b"refused", headers=[("WWW-Authenticate", 'Bearer error="invalid_token"')])
        elif url.path == "/_count":
            self.answer(200, str(len(REFUSED)).encode())
        else:
            self.answer(404)


if __name__ == "__main__":
    serve_until_stdin_closes(LoopbackServer(("127.0.0.1", 0), Handler))
