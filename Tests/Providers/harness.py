"""What the test providers and browser stand-ins share: how they start and how they end."""
import os
import sys
import threading
from http.server import ThreadingHTTPServer


class LoopbackServer(ThreadingHTTPServer):
    """A threaded HTTP server for the test providers. Its listen backlog is 128, not Python's 5: with many tests
    sharing one provider on a slow run (the sanitizers), a full backlog drops connections, and the client's SYN
    retries (1, 2, 4, 8... s) outlast its timeout."""
    request_queue_size = 128
    daemon_threads = True


def serve_until_stdin_closes(server, cleanup=None) -> None:
    """Reports `READY <port>` and serves; exits when standard input closes, so a test that dies never
    leaves a provider behind. With `cleanup` (a provider's own folder to remove), the server is shut down first and
    `cleanup` runs before this returns."""
    print(f"READY {server.server_port}", flush=True)
    if cleanup is not None:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            sys.stdin.read()
        finally:
            server.shutdown()
            cleanup()
        return

    def watchdog() -> None:
        try:
            sys.stdin.read()
        finally:
            os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()


def launch_detached(work) -> None:
    """Acts like a browser launcher: returns at once, and runs `work(url)` in a detached child.

    The child leads a session of its own. When `$STANDIN_PIDS` names a file, its pid is appended there before the
    launcher returns, so the test that owns the file can end the session (the stand-in and anything it started, a
    Chromium) when the test ends, rather than leave it waiting out a timeout after the run."""
    url = sys.argv[-1]
    child = os.fork()
    if child != 0:
        pids = os.environ.get("STANDIN_PIDS")
        if pids:
            with open(pids, "a") as f:
                f.write(f"{child}\n")
        return
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        work(url)
    finally:
        os._exit(0)


def start_chromium(attempts: int = 3):
    """Headless Chromium under Selenium (Debian's chromium, chromium-driver and python3-selenium), in the temporary
    profile chromedriver makes and removes, driven over a pipe. A browser that did not come up (stop 61's CI: "session
    not created: DevToolsActivePort file doesn't exist", in the port mode used then) is started again, up to
    `attempts` times in all, each failure said on standard error with the end of chromedriver's log: what the tests
    check begins once a page is open."""
    import tempfile
    from selenium import webdriver
    from selenium.common.exceptions import SessionNotCreatedException
    from selenium.webdriver.chrome.service import Service

    for attempt in range(1, attempts + 1):
        options = webdriver.ChromeOptions()
        # --remote-debugging-pipe: chromedriver talks to Chromium over a pipe, not a port Chromium announces in a
        # DevToolsActivePort file, which a start on a loaded machine did not write in time (chromedriver's own advice).
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                    "--remote-debugging-pipe"):
            options.add_argument(arg)
        options.binary_location = "/usr/bin/chromium"
        # chromedriver's own log, read only when the browser did not come up (what it saw of Chromium's start).
        fd, log = tempfile.mkstemp(prefix="chromedriver-", suffix=".log")
        os.close(fd)
        try:
            return webdriver.Chrome(service=Service("/usr/bin/chromedriver", service_args=["--verbose"], log_path=log), options=options)
        except SessionNotCreatedException as e:
            with open(log, errors="replace") as f:
                tail = f.read().splitlines()[-15:]
            print(f"chromium did not start (attempt {attempt} of {attempts}): {e.msg}", file=sys.stderr, flush=True)
            print("  chromedriver: " + "\n  chromedriver: ".join(tail), file=sys.stderr, flush=True)
            if attempt == attempts:
                raise
        finally:
            os.unlink(log)


def self_signed_context(key, cert_out: str | None = None):
    """A TLS server context with a fresh self-signed certificate for 127.0.0.1 under `key`, which no client trusts
    unless told to (`cert_out` receives the certificate in PEM for such a client)."""
    import datetime
    import ipaddress
    import ssl
    import tempfile

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    folder = tempfile.mkdtemp()
    with open(f"{folder}/cert.pem", "wb") as f:
        f.write(pem)
    if cert_out:
        with open(cert_out, "wb") as f:
            f.write(pem)
    with open(f"{folder}/key.pem", "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(f"{folder}/cert.pem", f"{folder}/key.pem")
    finally:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)  # the context holds the key now; nothing stays on disk
    return ctx
