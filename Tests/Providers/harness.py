"""What the test providers and browser stand-ins share: how they start and how they end."""
import os
import sys
import threading


def serve_until_stdin_closes(server) -> None:
    """Reports `READY <port>` and serves; exits when standard input closes, so a test that dies never
    leaves a provider behind."""
    print(f"READY {server.server_port}", flush=True)

    def watchdog() -> None:
        try:
            sys.stdin.read()
        finally:
            os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()


def launch_detached(work) -> None:
    """Acts like a browser launcher: returns at once, and runs `work(url)` in a detached child."""
    url = sys.argv[-1]
    if os.fork() != 0:
        return
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        work(url)
    finally:
        os._exit(0)
