"""Writes the link order of the static half's cached path (see bench/cached-path-order).

Usage: cached_path_order.py SIGNIN_STATIC_BINARY OUTPUT. The functions come from callgrind runs of the commands the
static half answers from the store, the most frequent first (`token`, then `whoami`, ...), each in the order
callgrind met them, then of `token` and `whoami` answered by a forwarded agent (SIGNIN_AGENT_SOCK); then the data
and read-only symbols a cached `signin token` reads or writes (lackey's memory trace). A name defined more than once
in the binary (a local copy in each object) is kept only when every copy is signin's own: those sit in sections of
their own, so moving them all costs nothing, where a copy in the toolchain's libraries may sit in a section of a
megabyte that the linker would move with it.
"""
import bisect
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, write  # noqa: E402

BINARY, OUTPUT = sys.argv[1], sys.argv[2]
COMMANDS = [["token"], ["whoami"], ["--version"], ["token", "--json"], ["whoami", "--json"], ["id-token"], ["status"],
            ["accounts"], ["--help"], ["help", "token"]]


def symbols(binary):
    """(address, size, type, name) of every symbol, sorted by address."""
    out = subprocess.run(["nm", "-n", "-S", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4:
            found.append((int(p[0], 16), int(p[1], 16), p[2], p[3]))
    return found


def own_definitions(binary):
    """How many times each function name is defined in signin's own objects (beside the binary, `*.build/*.o`)."""
    counts = {}
    objects = glob.glob(os.path.join(os.path.dirname(os.path.realpath(binary)), "*.build", "*.o"))
    for line in subprocess.run(["nm", "--defined-only"] + objects, capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tTwW":
            counts[p[2]] = counts.get(p[2], 0) + 1
    return counts


def valgrind(tool, binary, args, env):
    """Runs `signin ARGS` under valgrind's `tool`; a run that fails ends this script with what signin said."""
    r = subprocess.run(["valgrind"] + tool + [binary] + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"cached-path-order: signin {' '.join(args)} under valgrind {tool[0]} exited {r.returncode}:\n{r.stderr[-2000:]}")


def functions(work, binary, args, env):
    out = os.path.join(work, "cg.out")
    valgrind(["--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"], binary, args, env)
    names = []
    for line in open(out):
        m = re.match(r"c?fn=\(\d+\) (\S+)$", line)
        if m and not m.group(1).startswith("0x"):
            names.append(m.group(1))
    return names


def data(work, binary, args, env, table):
    """The data symbols a run reads or writes, in the order it first touches them."""
    log = os.path.join(work, "lackey.txt")
    valgrind(["--tool=lackey", "--trace-mem=yes", f"--log-file={log}"], binary, args, env)
    objects = [s for s in table if s[2] in "bBdDrRvVgGsS"]
    starts = [s[0] for s in objects]
    seen = {}
    for line in open(log):
        if line[:2] not in (" L", " S", " M"):
            continue
        address = int(line[3:].split(",", 1)[0], 16)
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and objects[i][0] <= address < objects[i][0] + max(objects[i][1], 1):
            seen.setdefault(objects[i][3], None)
    return list(seen)


def main():
    work = tempfile.mkdtemp(prefix="signin-order-")
    provider = Provider()
    try:
        home = os.path.join(work, "home")
        os.makedirs(home, mode=0o700)
        cfg = write(os.path.join(home, "config.json"),
                    json.dumps({"client_id": "profile", "client_secret": "strict-secret", "issuer": provider.issuer, "key_storage": "file"}))
        os.makedirs(os.path.join(home, "run"), mode=0o700)
        env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_STATE_HOME=os.path.join(home, "state"),
                   XDG_RUNTIME_DIR=os.path.join(home, "run"), SIGNIN_CONFIG=cfg,
                   BROWSER=f"sh {os.path.join(ROOT, 'bench', 'curl_browser.sh')} %s")
        env.pop("SIGNIN_AGENT_SOCK", None)
        subprocess.run([BINARY, "login"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        subprocess.run([BINARY, "token"], env=env, stdout=subprocess.DEVNULL, check=True)  # the kernel copy, as a cached run finds it
        # valgrind 3.19 cannot read the debug information Swift 6.3 writes: a stripped copy (symbols stay).
        copy = os.path.join(work, "signin")
        shutil.copy(BINARY, copy)
        subprocess.run(["strip", "--strip-debug", copy], check=True)
        table = symbols(copy)
        defined = {}
        for s in table:
            defined[s[3]] = defined.get(s[3], 0) + 1
        order = {}
        for args in COMMANDS:
            for name in functions(work, copy, args, env):
                order.setdefault(name, None)
        # The same commands answered by an agent (the client side of `signin ssh`).
        agent = subprocess.Popen([BINARY, "agent"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            agent.stdout.readline()  # the agent prints its SIGNIN_AGENT_SOCK line once it listens
            via_agent = dict(env, SIGNIN_AGENT_SOCK=os.path.join(home, "run", "signin", "agent.sock"))
            for args in (["token"], ["whoami"]):
                for name in functions(work, copy, args, via_agent):
                    order.setdefault(name, None)
        finally:
            agent.terminate()
            agent.wait()
        for name in data(work, copy, ["token"], env, table):
            order.setdefault(name, None)
        own = own_definitions(BINARY)
        kept = [n for n in order if defined.get(n) == 1 or (defined.get(n, 0) > 1 and own.get(n) == defined[n])]
        with open(OUTPUT, "w") as f:
            f.write("\n".join(kept) + "\n")
        print(f"{OUTPUT}: {len(kept)} symbols ({len(order) - len(kept)} left out: also defined in the toolchain's libraries, or not in the symbol table)")
    finally:
        # The entries held decrypted in the kernel keyring go with the store (`signin lock`), before its folder.
        if "env" in locals():
            subprocess.run([BINARY, "lock"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        provider.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
