"""Another user's listener on a Unix socket, answering every request 200 as an agent would (with a planted token),
and recording each request's first line in a log. Usage: fake_agent.py SOCKET LOG STORE; says READY, then serves
until standard input ends."""
import json
import os
import socket
import sys
import threading

path, log, store = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o666)
s.listen(16)
open(log, "w").close()
print("READY", flush=True)


def serve():
    while True:
        c, _ = s.accept()
        data = c.recv(65536)
        with open(log, "a") as f:
            f.write(data.split(b"\r\n")[0].decode() + "\n")
        body = json.dumps({"protocol": 1, "session": None, "store": store, "id": "x", "socket": path, "ended": True, "token": "planted"}).encode()
        try:
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except OSError:
            pass  # a client that only looked who listens, and hung up
        c.close()


threading.Thread(target=serve, daemon=True).start()
sys.stdin.read()
