"""signin beside oidc-agent, in one run on one machine, against the strict provider on loopback (key storage
`file` for signin, oidc-agent's own encrypted account file):

  - cached token: `oidc-token NAME` (a C client asking its warm daemon) beside `signin token` and `signin whoami`
    (no daemon of signin's: each starts cold), and the floor of a Swift program built -static-executable;
  - forced refresh: `oidc-token -f NAME` beside `signin token --force-refresh`;
  - through each one's own agent: `signin token` with SIGNIN_AGENT_SOCK (a warm `signin agent`), cached and forced;
  - CPU per cached call (user + system, the daemon's share included: its /proc CPU time over the run);
  - peak memory (GNU time's maximum resident set, median of 20).

Medians from hyperfine -N; ratios are signin / oidc-agent (below 1: signin is faster or smaller).
"""
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import write  # noqa: E402

SIGNIN, FLOOR = sys.argv[1], sys.argv[2]
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 100
WORK = tempfile.mkdtemp(prefix="signin-vs-oidc-agent-")
PY = os.path.join(ROOT, ".venv", "bin", "python")
RESOURCE = "https://orders.example.test/"
STANDIN = f"{PY} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"
TICKS = os.sysconf("SC_CLK_TCK")


def hyperfine(name, commands, env, runs=RUNS, warmup=5):
    out = os.path.join(WORK, name + ".json")
    subprocess.run(["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out, "--style", "none"] + commands,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return [{"median": statistics.median(r["times"]) * 1000, "cpu": (r["user"] + r["system"]) * 1000} for r in json.load(open(out))["results"]]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def peak_mib(command, env, n=20):
    values = []
    for _ in range(n):
        r = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, env=env, capture_output=True, text=True)
        values.append(int(r.stderr.strip().splitlines()[-1]) / 1024)
    return statistics.median(values)


def free_port():
    # oidc-agent takes redirect ports from 1024 to 49151 only.
    for port in range(40000, 49151):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def main():
    # oidc-agent asks for offline_access and refreshes only when discovery lists it.
    discovery = json.dumps({"scopes_supported": ["openid", "profile", "email", "offline_access"],
                            "grant_types_supported": ["authorization_code", "refresh_token"]})
    provider = subprocess.Popen([PY, os.path.join(ROOT, "Tests", "Providers", "strict_provider.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, STRICT_DISCOVERY=discovery))
    issuer = "http://127.0.0.1:" + provider.stdout.readline().split()[1]
    home = os.path.join(WORK, "home")
    os.makedirs(os.path.join(home, "run"), mode=0o700)
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_CONFIG_HOME=os.path.join(home, "config"),
               XDG_RUNTIME_DIR=os.path.join(home, "run"), XDG_STATE_HOME=os.path.join(home, "state"), BROWSER=STANDIN, STANDIN_MODE="allow")
    env.pop("SIGNIN_AGENT_SOCK", None)
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)

    # Refresh tokens are not rotated for either client: oidc-agent re-encrypts its account file (about half a second
    # of key derivation) whenever a refresh brings a new one, which would measure that, not the exchange.
    for client in ("bench-signin", "bench-oidc-agent"):
        urllib.request.urlopen(urllib.request.Request(f"{issuer}/_control/{client}", data=json.dumps({"rotate": False}).encode(), method="POST")).read()
    # signin: its own client, the key in a file (as oidc-agent's account file is).
    env["SIGNIN_CONFIG"] = write(os.path.join(home, "signin.json"), json.dumps({"client_id": "bench-signin", "issuer": issuer, "key_storage": "file",
                                                                                "resources": [RESOURCE]}))
    subprocess.run([SIGNIN, "login"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # A token for one API (RFC 8707), got once: the cached rows read it from the entry.
    subprocess.run([SIGNIN, "token", "--resource", RESOURCE], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # oidc-agent: its daemon, then an account made with the code flow through the same browser stand-in.
    port = free_port()
    urllib.request.urlopen(urllib.request.Request(f"{issuer}/_control/bench-oidc-agent", data=json.dumps(
        {"allow_localhost": True, "redirect_path": "/redirect", "any_resource": True}).encode(), method="POST")).read()
    env["OIDC_CONFIG_DIR"] = os.path.join(home, "oidc-agent")
    os.makedirs(env["OIDC_CONFIG_DIR"], mode=0o700)
    agent = json.loads(subprocess.run(["oidc-agent", "--json"], env=env, check=True, capture_output=True, text=True).stdout)
    env["OIDC_SOCK"], daemon = agent["socket"], int(agent["dpid"])
    subprocess.run(["oidc-gen", "bench", f"--iss={issuer}", "--client-id=bench-oidc-agent", "--client-secret=strict-secret",
                    "--scope=openid profile email offline_access", "--flow=code", f"--redirect-uri=http://localhost:{port}/redirect",
                    "--pw-env", "--confirm-default"], env=dict(env, OIDC_ENCRYPTION_PW="bench-password"), check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)

    # signin's own agent, warm, for the "through each one's agent" rows.
    signin_agent = subprocess.Popen([SIGNIN, "agent"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    signin_agent.stdout.readline()
    via_agent = dict(env, SIGNIN_AGENT_SOCK=os.path.join(home, "run", "signin", "agent.sock"))

    d0 = cpu_seconds(daemon)
    subprocess.run(["oidc-token", f"--aud={RESOURCE}", "bench"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cached = hyperfine("cached", ["oidc-token bench", f"{SIGNIN} token", f"{SIGNIN} whoami", FLOOR], env)
    aud = hyperfine("cached-aud", [f"oidc-token --aud={RESOURCE} bench", f"{SIGNIN} token --resource {RESOURCE}"], env)
    daemon_cpu = (cpu_seconds(daemon) - d0) * 1000 / (RUNS + 5)
    a0 = cpu_seconds(signin_agent.pid)
    (agent_cached,) = hyperfine("agent-cached", [f"{SIGNIN} token"], via_agent)
    agent_cpu = (cpu_seconds(signin_agent.pid) - a0) * 1000 / (RUNS + 5)
    refresh_runs = max(20, RUNS // 4)
    forced = hyperfine("forced", ["oidc-token -f bench", f"{SIGNIN} token --force-refresh"], env, runs=refresh_runs, warmup=2)
    (agent_forced,) = hyperfine("agent-forced", [f"{SIGNIN} token --force-refresh"], via_agent, runs=refresh_runs, warmup=2)
    mem = {"oidc-token": peak_mib(["oidc-token", "bench"], env), "signin token": peak_mib([SIGNIN, "token"], env),
           "oidc-token -f": peak_mib(["oidc-token", "-f", "bench"], env, n=10), "signin refresh": peak_mib([SIGNIN, "token", "--force-refresh"], env, n=10),
           "floor": peak_mib([FLOOR], env)}

    subprocess.run([SIGNIN, "lock"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # nothing left in the kernel keyring
    signin_agent.send_signal(signal.SIGTERM)
    signin_agent.wait()
    subprocess.run(["oidc-agent", "--kill"], env=dict(env, OIDCD_PID=str(daemon)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    provider.stdin.close()
    provider.wait()

    oidc, token, whoami, floor = cached
    rows = [
        ("cached token (ms)", oidc["median"], token["median"], "<= 1.0"),
        ("cached whoami (ms)", oidc["median"], whoami["median"], "<= 1.0"),
        ("cached token for one API (ms): oidc-token --aud, signin token --resource", aud[0]["median"], aud[1]["median"], "<= 1.0"),
        ("cached token --resource / cached token (signin)", token["median"], aud[1]["median"], "<= 1.1"),
        ("cached token / static Swift floor", floor["median"], token["median"], "<= 1.3"),
        ("forced refresh, no daemon (ms)", forced[0]["median"], forced[1]["median"], "<= 1.5"),
        ("forced refresh through signin agent (ms)", forced[0]["median"], agent_forced["median"], "<= 1.0"),
        ("cached token through signin agent (ms)", oidc["median"], agent_cached["median"], "<= 1.0"),
        ("CPU per cached call (ms, daemon included)", oidc["cpu"] + daemon_cpu, token["cpu"], ""),
        ("CPU per cached call through the agent (ms)", oidc["cpu"] + daemon_cpu, agent_cached["cpu"] + agent_cpu, ""),
        ("peak memory, cached (MiB)", mem["oidc-token"], mem["signin token"], "<= 1.5"),
        ("peak memory, refresh (MiB)", mem["oidc-token -f"], mem["signin refresh"], ""),
    ]
    print(f"signin beside oidc-agent ({subprocess.run(['oidc-agent', '--version'], capture_output=True, text=True).stdout.strip()}), "
          f"{RUNS} runs each ({refresh_runs} for refreshes), {os.cpu_count()} cores")
    print(f"{'figure':46} {'oidc-agent':>11} {'signin':>9} {'ratio':>7}  goal")
    for name, peer, mine, goal in rows:
        ratio = mine / peer if peer else float("nan")
        met = "" if not goal else ("met" if ratio <= float(goal.split()[-1]) else "NOT met")
        label = "floor" if "floor" in name else ""
        print(f"{name:46} {peer:>11.2f} {mine:>9.2f} {ratio:>7.2f}  {goal} {met} {label}".rstrip())
    print(f"floor (Swift, -static-executable): {floor['median']:.2f} ms, {mem['floor']:.1f} MiB")


if __name__ == "__main__":
    main()
