"""The walks of issue 30, counted by a tool instead of by hand: for each path, the source files of Sources/ in
which at least one function ran (callgrind, with the debug build's DWARF 4 line tables), for:

  - a cached `signin token`;
  - `signin login` (the browser stand-in answers);
  - `signin metadata-server`: start, one token request, stop;
  - `signin token` through `signin agent`: the client process, and the agent (start, one request, stop);
  - each server's request alone (accept, read, the handler, the reply), as the issue walked it.

Usage: walks.py SIGNIN_DEBUG_BINARY SOURCES_ROOT. Prints one line per path, and the files with --list.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, write  # noqa: E402

SIGNIN, SOURCES = sys.argv[1], sys.argv[2].rstrip("/") + "/Sources/"
LIST = "--list" in sys.argv
WORK = tempfile.mkdtemp(prefix="signin-walks-")
PY = os.path.join(ROOT, ".venv", "bin", "python")
STANDIN = f"{PY} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"


def files(out):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out], capture_output=True, text=True).stdout
    found = set()
    for word in text.split():
        i = word.find(SOURCES)
        if i < 0 or ".swift:" not in word:
            continue
        symbol = word.split(".swift:", 1)[1]
        # Outlined copies and destroys (`...WOc`, `WOe`, `WOh`) and lazy witness-table accessors (`...Wl`, such as
        # `SignInError: Error` for a `throws` of it) are the compiler's helpers, filed under whichever file emitted
        # them first: not a file the path reads.
        if (len(symbol) > 3 and symbol[-3:-1] == "WO") or symbol.endswith("Wl"):
            continue
        found.add(word[i + len(SOURCES):word.index(".swift") + 6])
    return sorted(found)


# A server's request alone, as the issue walked it by hand (accept, read, the handler, the reply), without the
# process's start and stop: collection is on only inside these functions. (Each pattern names one function, not its
# closures or thunks: callgrind toggles again on entering a nested match.)
REQUEST_ONLY = ["*LoopbackServerC9acceptAll*XEtF", "*LoopbackServerC11readRequest*CF", "*LoopbackServerC7respond*ResponseVtF"]


def grind(name, args, env, run=None, only=None):
    out = os.path.join(WORK, name + ".cg")
    toggles = [] if only is None else ["--collect-atstart=no"] + [f"--toggle-collect={f}" for f in REQUEST_ONLY + only]
    p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + toggles + [SIGNIN] + args, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    if run:
        run(p)
    p.wait()
    return files(out)


def main():
    provider = Provider()
    home = os.path.join(WORK, "home")
    os.makedirs(os.path.join(home, "run"), mode=0o700)
    cfg = write(os.path.join(home, "config.json"), json.dumps({"client_id": "walks", "issuer": provider.issuer, "key_storage": "file",
                                                               "project_id": "walk-project", "project_number": "1"}))
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_RUNTIME_DIR=os.path.join(home, "run"),
               XDG_STATE_HOME=os.path.join(home, "state"), SIGNIN_CONFIG=cfg, BROWSER=STANDIN, STANDIN_MODE="allow")
    env.pop("SIGNIN_AGENT_SOCK", None)
    walks = {}
    walks["login"] = grind("login", ["login"], env)
    walks["cached token"] = grind("token", ["token"], env)

    def one_metadata_request(p):
        port = json.loads(p.stdout.readline())["port"]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/computeMetadata/v1/instance/service-accounts/default/token",
                                     headers={"Metadata-Flavor": "Google"})
        urllib.request.urlopen(req, timeout=60).read()
        p.send_signal(signal.SIGTERM)
    walks["metadata-server: one token request"] = grind("metadata", ["metadata-server", "--json"], env, one_metadata_request)
    walks["metadata-server: the request alone"] = grind("metadata-request", ["metadata-server", "--json"], env, one_metadata_request,
                                                        only=["*MetadataServerC17serveUntilStopped*HTTPRequestHead*fU0_"])

    sock = os.path.join(home, "run", "signin", "agent.sock")
    client = {}

    def one_agent_request(p):
        p.stdout.readline()  # the agent prints its SIGNIN_AGENT_SOCK line once it listens
        client["files"] = grind("agent-client", ["token"], dict(env, SIGNIN_AGENT_SOCK=sock))
        p.send_signal(signal.SIGTERM)
    walks["agent: the agent (one request)"] = grind("agent", ["agent"], env, one_agent_request)
    walks["agent: the request alone"] = grind("agent-request", ["agent"], env, one_agent_request, only=["*TokenAgentC3run*HTTPRequestHead*fU0_"])
    walks["agent: the client `signin token`"] = client.get("files", [])
    provider.stop()
    for name, found in walks.items():
        print(f"{len(found):4d}  {name}")
        if LIST:
            print("      " + "\n      ".join(found))


if __name__ == "__main__":
    main()
