"""Issue 47's figure: with 50 API sign-ins side by side (a person with many MCP servers), a cached
`signin token --resource URL` for any of them costs what it costs with one; the cached `signin token` of a configured
provider beside it. Each API is one of the strict provider's (`/api/NAME`, its RFC 9728 metadata naming the
provider), signed in to from its address alone with no configuration: one registration and one grant per API.
Prints hyperfine medians (ms) and the spread.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, hyperfine, write  # noqa: E402

SIGNIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
WORK = tempfile.mkdtemp(prefix="signin-apis-")
STANDIN = f"{os.path.join(ROOT, '.venv', 'bin', 'python')} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"


def home(name):
    h = os.path.join(WORK, name)
    os.makedirs(h)
    return dict(os.environ, HOME=h, XDG_DATA_HOME=os.path.join(h, "data"), XDG_CONFIG_HOME=os.path.join(h, "config"),
                SIGNIN_CONFIG="", BROWSER=STANDIN, STANDIN_LOG=os.path.join(h, "standin.log"))


def login(env, *args):
    subprocess.run([SIGNIN, "login", *args, "--timeout", "60"], env=env, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    p = Provider()
    apis = [f"{p.issuer}/api/mcp{i:02d}" for i in range(50)]
    one = home("one")
    login(one, "--resource", apis[0])
    many = home("many")
    for api in apis:
        login(many, "--resource", api)
    configured = home("configured")
    configured["SIGNIN_CONFIG"] = write(os.path.join(WORK, "configured.json"), json.dumps({"client_id": "bench-configured", "issuer": p.issuer}))
    login(configured)
    def timed(name, commands, env):
        return hyperfine(name, commands, env, runs=RUNS, warmup=5, work=WORK)
    rows = [("cached token, a configured provider", timed("configured", [f"{SIGNIN} token"], configured)[0]),
            ("cached token --resource, 1 API signed in", timed("one", [f"{SIGNIN} token --resource {apis[0]}"], one)[0])]
    first, last = timed("many", [f"{SIGNIN} token --resource {apis[0]}", f"{SIGNIN} token --resource {apis[-1]}"], many)
    rows += [("cached token --resource, 50 APIs signed in (the first)", first), ("cached token --resource, 50 APIs signed in (the last)", last)]
    for name, (median, spread, _) in rows:
        print(f"{name:60s} {median:6.2f} ms  ±{spread:.2f}")
    p.proc.stdin.close()
    p.proc.wait()


if __name__ == "__main__":
    main()
