#!/usr/bin/env python3
"""A browser for signin's tests against glewlwyd (glewlwyd_provider.py), started by signin as `$BROWSER URL`.

Returns at once, as a browser launcher does; a detached child signs in as glewlwyd's web pages would: a session
for alice through glewlwyd's login API, the client's scope granted, then the authorization URL (pushed or not),
whose redirect carries the code to signin's loopback listener. The outcome is appended to $STANDIN_LOG as JSON.
"""
import http.cookiejar
import json
import urllib.error
import urllib.parse
import urllib.request

from browser_standin import log
from harness import launch_detached


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def work(url: str) -> None:
    u = urllib.parse.urlparse(url)
    base = f"{u.scheme}://{u.netloc}/api"
    client_id = urllib.parse.parse_qs(u.query)["client_id"][0]
    jar = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    opener = urllib.request.build_opener(jar, NoRedirect)

    def call(method, path, body):
        req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method, headers={"Content-Type": "application/json"})
        opener.open(req, timeout=10).read()

    try:
        call("POST", "/auth/", {"username": "alice", "password": "alice-password"})
        call("PUT", f"/auth/grant/{urllib.parse.quote(client_id)}", {"scope": "openid"})
        try:
            opener.open(url + "&g_continue", timeout=10)
            log({"status": "no redirect", "url": url})
            return
        except urllib.error.HTTPError as e:
            location = e.headers.get("Location", "")
        page = urllib.request.urlopen(location, timeout=10).read().decode(errors="replace")
        log({"status": "delivered", "url": url, "page": page[:200]})
    except Exception as e:  # noqa: BLE001 - the test reads what went wrong from the log
        log({"status": "error", "url": url, "error": str(e)})


if __name__ == "__main__":
    launch_detached(work)
