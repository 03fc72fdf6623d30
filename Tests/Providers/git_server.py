"""A git server over smart HTTP for the git credential helper test: `git http-backend` behind HTTP Basic auth
whose password must be an access token the strict provider still accepts (checked at its userinfo endpoint).

Usage: git_server.py PROJECT_ROOT USERINFO_URL. Prints `READY <port>`; exits when standard input closes.
GET /_stats answers {"accepted": N, "refused": N, "users": [...]}.
"""
import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler

from harness import LoopbackServer, serve_until_stdin_closes

ROOT, USERINFO = sys.argv[1], sys.argv[2]
STATS = {"accepted": 0, "refused": 0, "users": []}


def token_accepted(token: str) -> bool:
    req = urllib.request.Request(USERINFO, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status == 200
    except urllib.error.HTTPError:
        return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_git()

    def do_POST(self):
        self.handle_git()

    def handle_git(self):
        if self.path == "/_stats":
            body = json.dumps(STATS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        auth = self.headers.get("Authorization", "")
        user, _, password = base64.b64decode(auth[6:]).decode().partition(":") if auth.startswith("Basic ") else ("", "", "")
        if not password or not token_accepted(password):
            if password:
                STATS["refused"] += 1
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="signin test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        STATS["accepted"] += 1
        STATS["users"].append(user)
        path, _, query = self.path.partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=ROOT, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path, QUERY_STRING=query,
                   REQUEST_METHOD=self.command, CONTENT_TYPE=self.headers.get("Content-Type", ""), REMOTE_USER=user,
                   GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, content = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)


if __name__ == "__main__":
    serve_until_stdin_closes(LoopbackServer(("127.0.0.1", 0), Handler))
