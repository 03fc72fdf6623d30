#!/usr/bin/env python3
"""A browser for tests and the demo, started by signin as `$BROWSER`.

Returns at once (the work goes on in a detached child), as a real browser launcher does. The child follows the
sign-in like a browser: it submits the provider's consent form, follows the redirects to signin's loopback
listener and reads the page it ends on. STANDIN_MODE is a comma-separated list of steps:
  junk   first send hostile requests to the listener (unknown paths, bad methods, huge and binary requests,
         an idle connection that is never finished)
  forge  first send a callback with a valid-looking code and a wrong state
  otheruser  first approve this very request as "mallory" and deliver that code, with the right state, from
         another local user (uid $STANDIN_OTHER_UID, default 65534, through setpriv + curl)
  rebind first deliver a code approved as "mallory", with the right state, under a foreign Host header (what a
         web page reaching the listener through DNS rebinding sends)
  allow  consent as $STANDIN_SUB (default alice)      deny  press "deny"      none  do nothing
  visit  open the page with a GET and follow its redirects (a server that approves on sight)
With $STANDIN_CALLBACK_HOST (say "[::1]", a browser that resolved localhost to IPv6), the callback of `otheruser` and
`allow` goes to the listener under that host instead of the one the redirect names.
The outcome is appended to $STANDIN_LOG as one JSON line: {"status", "url", "page"}. The descriptors the
browser command was started with are logged first ({"step": "fds"}), before anything else opens one.
"""
import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

from harness import launch_detached


def log(entry: dict) -> None:
    path = os.environ.get("STANDIN_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def raw_request(host: str, port: int, data: bytes, keep_open: bool = False):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(data)
    if keep_open:
        return s  # an idle client the listener must not wait for
    try:
        s.shutdown(socket.SHUT_WR)
        s.recv(65536)
    except OSError:
        pass
    s.close()
    return None


def junk(redirect: str) -> list:
    u = urllib.parse.urlparse(redirect)
    host, port = u.hostname, u.port
    idle = [raw_request(host, port, b"GET /callback?state=", keep_open=True)]
    for data in [
        b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST " + u.path.encode() + b"?code=x&state=y HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        b"GET /" + b"A" * 20000 + b" HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\n" + b"X-H: v\r\n" * 5000 + b"\r\n",
        bytes(range(256)) * 4,
        b"GET " + u.path.encode() + b"?state=%zz%00&code=%ff HTTP/1.1\r\n\r\n",
        b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\n\r\n",
        b"\r\n\r\n",
    ]:
        try:
            raw_request(host, port, data)
        except OSError:
            pass
    return idle


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(url: str, data: bytes | None = None) -> tuple[int, str, str]:
    """Follows redirects like a browser (POST becomes GET after 302/303); returns (status, final url, body)."""
    opener = urllib.request.build_opener(NoRedirect)
    for _ in range(10):
        req = urllib.request.Request(url, data=data)
        try:
            with opener.open(req, timeout=20) as r:
                return r.status, url, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            if e.code in (301, 302, 303, 307) and e.headers.get("Location"):
                url = urllib.parse.urljoin(url, e.headers["Location"])
                data = None
                continue
            return e.code, url, e.read().decode("utf-8", "replace")
    return 0, url, "too many redirects"


def approve_without_following(url: str, sub: str) -> str:
    """Consents as `sub` at the provider and returns where it redirects (the callback with code and state)."""
    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(url, data=urllib.parse.urlencode({"sub": sub}).encode())
    try:
        opener.open(req, timeout=20)
    except urllib.error.HTTPError as e:
        return e.headers.get("Location", "")
    return ""


def to_callback_host(callback: str) -> str:
    """`callback` under $STANDIN_CALLBACK_HOST, when it is set."""
    host = os.environ.get("STANDIN_CALLBACK_HOST")
    if not host:
        return callback
    u = urllib.parse.urlparse(callback)
    return u._replace(netloc=f"{host}:{u.port}").geturl()


def other_user(url: str) -> dict:
    callback = to_callback_host(approve_without_following(url, "mallory"))
    uid = os.environ.get("STANDIN_OTHER_UID", "65534")
    r = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "curl", "-s", "-o", "/dev/null",
                        "-w", "%{http_code}", "--max-time", "10", callback], capture_output=True, text=True)
    return {"step": "otheruser", "curl_exit": r.returncode, "http": r.stdout}


def rebind(url: str) -> dict:
    callback = urllib.parse.urlparse(approve_without_following(url, "mallory"))
    s = socket.create_connection((callback.hostname, callback.port), timeout=10)
    s.sendall(f"GET {callback.path}?{callback.query} HTTP/1.1\r\nHost: rebind.example:{callback.port}\r\n\r\n".encode())
    answer = b""
    while chunk := s.recv(65536):
        answer += chunk
    s.close()
    return {"step": "rebind", "status_line": answer.split(b"\r\n", 1)[0].decode()}


def work(url: str) -> None:
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))
    redirect = q.get("redirect_uri", "")
    steps = os.environ.get("STANDIN_MODE", "allow").split(",")
    keep = []
    try:
        if "junk" in steps:
            keep += junk(redirect)
        if "otheruser" in steps:
            log(other_user(url))
        if "rebind" in steps:
            log(rebind(url))
        if "forge" in steps:
            status, final, body = fetch(redirect + "?" + urllib.parse.urlencode({"code": "attacker-code", "state": "forged-state"}))
            log({"step": "forge", "status": status, "url": final, "page": body})
        if "deny" in steps:
            status, final, body = fetch(url, urllib.parse.urlencode({"action": "deny"}).encode())
        elif "visit" in steps:
            # A page that approves on sight (the MCP SDK's test provider): a plain GET, as a browser opens it.
            status, final, body = fetch(url)
        elif "allow" in steps:
            sub = os.environ.get("STANDIN_SUB", "alice")
            if os.environ.get("STANDIN_CALLBACK_HOST"):
                status, final, body = fetch(to_callback_host(approve_without_following(url, sub)))
            else:
                status, final, body = fetch(url, urllib.parse.urlencode({"sub": sub}).encode())
        else:
            return
        text = re.sub(r"<[^>]+>", " ", body)
        log({"step": "final", "status": status, "url": final, "page": " ".join(text.split())})
    except Exception as e:  # noqa: BLE001
        log({"step": "error", "error": repr(e)})
    finally:
        for s in keep:
            if s:
                s.close()


def descriptors() -> dict:
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            fds[name] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass  # the descriptor listdir itself used, closed by now
    return fds


def main() -> None:
    log({"step": "fds", "fds": descriptors(), "url": sys.argv[-1]})
    launch_detached(work)


if __name__ == "__main__":
    main()
