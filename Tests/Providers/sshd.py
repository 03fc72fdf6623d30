"""Debian's OpenSSH server for the tests, never the system's: on 127.0.0.1 at a port the OS chooses, with its own
host key, one authorized key, and the session environment the test gives (a HOME and XDG folders of the "remote"
side, a PATH with the signin under test).

Usage: sshd.py FOLDER [NAME=VALUE...]. Makes FOLDER/host_key, FOLDER/client_key (the user's key, authorized) and
FOLDER/known_hosts, prints `READY <port>`, and runs `sshd -i` for each connection (inetd style, so the port is
the OS's choice). Every sshd it started is killed when standard input closes.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import ctypes

from reap import end_left_behind

# A subreaper: what sshd's sessions leave behind (a forwarded command, a stray shell) is ended with this process.
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER

folder = sys.argv[1]
env = sys.argv[2:]
os.makedirs(folder, exist_ok=True)
os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation folder (Debian makes it at service start)
for name in ("host_key", "client_key"):
    if not os.path.exists(f"{folder}/{name}"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{folder}/{name}"], check=True)
with open(f"{folder}/authorized_keys", "w") as f:
    f.write(open(f"{folder}/client_key.pub").read())
os.chmod(f"{folder}/authorized_keys", 0o600)
config = f"{folder}/sshd_config"
with open(config, "w") as f:
    f.write(f"""HostKey {folder}/host_key
AuthorizedKeysFile {folder}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
PermitUserEnvironment no
LogLevel ERROR
""" + ("SetEnv " + " ".join(env) + "\n" if env else ""))

# sshd -i processes end with their connection: reaped by the kernel (nothing here waits for them).
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(16)
port = server.getsockname()[1]
host_pub = open(f"{folder}/host_key.pub").read().split()
with open(f"{folder}/known_hosts", "w") as f:
    f.write(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")


def accept():
    while True:
        conn, _ = server.accept()
        subprocess.Popen(["/usr/sbin/sshd", "-i", "-f", config], stdin=conn.fileno(), stdout=conn.fileno(), stderr=subprocess.DEVNULL)
        conn.close()


threading.Thread(target=accept, daemon=True).start()
print(f"READY {port}", flush=True)
try:
    sys.stdin.read()
finally:
    end_left_behind()
    os._exit(0)
