"""A web page that tries to read signin's metadata server, in headless Chromium: served from another local origin
(as any site the person visits would be), it asks for a token with the Metadata-Flavor header (which needs a CORS
preflight), without it, and in no-cors mode. Prints one JSON object: what each attempt could read.

Usage (with /usr/bin/python3, which has Debian's selenium): metadata_page_probe.py TOKEN_URL
"""
import json
import os
import shutil
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import start_chromium

TOKEN_URL = sys.argv[1]
PAGE = """<!doctype html><title>probe</title><script>
async function attempt(options) {
  try {
    const r = await fetch(%s, options);
    if (r.type === "opaque") return {outcome: "opaque", body: ""};
    return {outcome: "status " + r.status, body: await r.text()};
  } catch (e) { return {outcome: "refused: " + e.name, body: ""}; }
}
(async () => {
  const results = {
    with_header: await attempt({headers: {"Metadata-Flavor": "Google"}}),
    plain: await attempt({}),
    no_cors: await attempt({mode: "no-cors"}),
  };
  document.title = "done";
  document.body.setAttribute("data-results", JSON.stringify(results));
})();
</script>""" % json.dumps(TOKEN_URL)


class Page(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    from selenium.webdriver.support.ui import WebDriverWait

    # Chromium leaves a folder of its own (SingletonSocket) in the temporary folder when it quits: give it one
    # to leave it in, removed afterwards.
    scratch = tempfile.mkdtemp(prefix="signin-probe-")
    os.environ["TMPDIR"] = scratch
    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = start_chromium()
    try:
        driver.set_page_load_timeout(30)
        driver.get(f"http://127.0.0.1:{server.server_port}/")
        WebDriverWait(driver, 30).until(lambda d: d.title == "done")
        print(driver.find_element("tag name", "body").get_attribute("data-results"))
    finally:
        driver.quit()
        server.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
