"""Debian's docker-registry (distribution 2.8) on 127.0.0.1 at a port the OS chooses, with token authentication.

Usage: registry.py REALM ROOT_CERT DATA_DIR. Writes the registry's configuration, starts it (it dies with this
process: PR_SET_PDEATHSIG), prints `READY <port>` once the registry says where it listens, and stops it when
standard input closes.
"""
import ctypes
import os
import re
import signal
import subprocess
import sys
import threading

realm, root_cert, data = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(data, exist_ok=True)
config = os.path.join(data, "config.yml")
with open(config, "w") as f:
    f.write(f"""version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: {data}/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:0
auth:
  token:
    realm: {realm}
    service: signin-test-registry
    issuer: signin-test-token-server
    rootcertbundle: {root_cert}
""")


def die_with_parent():
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


registry = subprocess.Popen(["/usr/bin/docker-registry", "serve", config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent, text=True)
port = None
for line in registry.stderr:
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    if m:
        port = int(m.group(1))
        break
if port is None:
    print("FAILED docker-registry did not start", flush=True)
    sys.exit(1)
print(f"READY {port}", flush=True)
# Its log must keep flowing somewhere, or the registry blocks once the pipe is full.
threading.Thread(target=lambda: [None for _ in registry.stderr], daemon=True).start()
try:
    sys.stdin.read()
finally:
    registry.kill()
    registry.wait()
