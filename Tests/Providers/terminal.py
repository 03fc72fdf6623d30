"""Runs a program on a pseudo-terminal and plays a person at it, for the tests that need a real terminal (a hidden
prompt, Ctrl-C, a question asked only on a terminal).

Usage: terminal.py STEP... -- PROGRAM [ARGS...]

Steps, in order:
  wait:TEXT    wait until TEXT appears in what the program wrote since the last answer (at most 30 s)
  iwait:TEXT   the same, ignoring case
  hidden       wait until the terminal's echo is off (a hidden prompt turns it off after writing itself, which
               flushes what was typed ahead); at most 20 s; the echo's state is reported as echo_during
  send:TEXT    type TEXT and Enter
  ctrl-c       type Ctrl-C

Then it reads to the program's end (EOF, or 20 s), waits for it (at most 20 s more, then kills it: a program still
running is a failure to report, not a hang) and prints one JSON object: output, exit (nil when signaled or killed),
signaled, killed, echo_during (nil without a `hidden` step), echo_after.
"""
import json
import os
import pty
import select
import sys
import termios
import time

split = sys.argv.index("--")
steps, argv = sys.argv[1:split], sys.argv[split + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)

out = b""
mark = 0
eof = False


def read_for(seconds, until=None):
    """Reads what the program writes for at most `seconds`, or until `until(out)` holds or the terminal ends."""
    global out, eof
    deadline = time.time() + seconds
    while not eof and (until is None or not until(out)) and time.time() < deadline:
        if select.select([fd], [], [], max(0.0, min(0.5, deadline - time.time())))[0]:
            try:
                chunk = os.read(fd, 1024)
            except OSError:
                chunk = b""
            if not chunk:
                eof = True
            out += chunk


def echo_on():
    return bool(termios.tcgetattr(fd)[3] & termios.ECHO)


echo_during = None
for step in steps:
    if step.startswith("wait:"):
        text, start = step[5:].encode(), mark
        read_for(30, lambda o: text in o[start:])
    elif step.startswith("iwait:"):
        text, start = step[6:].lower().encode(), mark
        read_for(30, lambda o: text in o[start:].lower())
    elif step == "hidden":
        deadline = time.time() + 20
        while echo_on() and time.time() < deadline:
            read_for(0.01)
        echo_during = echo_on()
    elif step.startswith("send:"):
        os.write(fd, step[5:].encode() + b"\n")
        mark = len(out)
    elif step == "ctrl-c":
        os.write(fd, b"\x03")
        mark = len(out)
    else:
        sys.exit(f"terminal.py: unknown step {step}")

read_for(20)
killed = False
deadline = time.time() + 20
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.time() > deadline:
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        killed = True
        break
    read_for(0.05)
try:
    echo_after = echo_on()
except termios.error:
    echo_after = None
print(json.dumps({
    "output": out.decode(errors="replace"),
    "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) and not killed else None,
    "signaled": os.WIFSIGNALED(status),
    "killed": killed,
    "echo_during": echo_during,
    "echo_after": echo_after,
}))
