"""`signin token` on a machine reached with `signin ssh` (the forwarded agent: the remote socket, the ssh channel,
the laptop's agent) beside a cached local `signin token` and the agent asked directly on the laptop, hyperfine
medians in one run. The "remote" machine is this one, through the bench's own sshd on 127.0.0.1 (a free port)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, write  # noqa: E402

SIGNIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
WORK = tempfile.mkdtemp(prefix="signin-ssh-", dir="/tmp")
PY = os.path.join(ROOT, ".venv", "bin", "python")
STANDIN = f"{PY} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"


def hyperfine(name, commands, env):
    out = os.path.join(WORK, name + ".json")
    subprocess.run(["hyperfine", "-N", "--warmup", "3", "--runs", str(RUNS), "--export-json", out, "--style", "none"] + commands,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return [(statistics.median(r["times"]) * 1000, (max(r["times"]) - min(r["times"])) * 500) for r in json.load(open(out))["results"]]


def main():
    provider = Provider()
    home = os.path.join(WORK, "laptop")
    os.makedirs(os.path.join(home, "run"), mode=0o700)
    cfg = write(os.path.join(home, "config.json"), json.dumps({"client_id": "bench-ssh", "issuer": provider.issuer}))
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), XDG_RUNTIME_DIR=os.path.join(home, "run"),
               XDG_STATE_HOME=os.path.join(home, "state"), SIGNIN_CONFIG=cfg, BROWSER=STANDIN)
    env.pop("SIGNIN_AGENT_SOCK", None)
    subprocess.run([SIGNIN, "login"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    remote = os.path.join(WORK, "remote")
    os.makedirs(os.path.join(remote, "home"))
    os.makedirs(os.path.join(remote, "run"), mode=0o700)
    sshd = subprocess.Popen([PY, os.path.join(ROOT, "Tests", "Providers", "sshd.py"), os.path.join(remote, "sshd"), f"HOME={remote}/home",
                             f"XDG_RUNTIME_DIR={remote}/run", f"PATH={os.path.dirname(SIGNIN)}:/usr/bin:/bin"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=os.path.join(ROOT, "Tests", "Providers"))
    port = int(sshd.stdout.readline().split()[1])
    d = os.path.join(remote, "sshd")
    ssh = subprocess.Popen([SIGNIN, "ssh", "--", "-F", "/dev/null", "-p", str(port), "-i", f"{d}/client_key", "-o", f"UserKnownHostsFile={d}/known_hosts",
                            "-o", "BatchMode=yes", "root@127.0.0.1", 'echo "$SIGNIN_AGENT_SOCK"; exec cat'],
                           env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    sock = ssh.stdout.readline().strip()
    forwarded = dict(env, SIGNIN_AGENT_SOCK=sock)
    local_agent = dict(env, SIGNIN_AGENT_SOCK=os.path.join(home, "run", "signin", "agent.sock"))
    (local,) = hyperfine("local", [f"{SIGNIN} token"], env)
    (agent,) = hyperfine("agent", [f"{SIGNIN} token"], local_agent)
    (fwd,) = hyperfine("forwarded", [f"{SIGNIN} token"], forwarded)
    ssh.stdin.close()
    ssh.wait()
    subprocess.run([SIGNIN, "agent", "--stop"], env=env, stderr=subprocess.DEVNULL)
    sshd.stdin.close()
    sshd.wait()
    provider.stop()
    print(f"signin token over SSH, {RUNS} runs each; ms (median ± half range)\n")
    for name, (m, h) in (("cached local `signin token`", local), ("through the laptop's agent (SIGNIN_AGENT_SOCK)", agent),
                         ("forwarded: remote socket, ssh channel, agent", fwd)):
        print(f"{name:50} {m:8.2f} ± {h:5.2f}")
    print(f"\nforwarded / local: {fwd[0] / local[0]:.2f}   forwarded - local: {fwd[0] - local[0]:.2f} ms")


if __name__ == "__main__":
    main()
