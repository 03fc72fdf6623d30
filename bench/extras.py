"""The figures of the accounts, key-storage and bridge work, in one run on one machine (hyperfine medians):

  - cached `signin token` with 1 account and with 20 accounts stored (target: within 10%);
  - cached `token` and `whoami` with the key in a file, in the Secret Service and under a passphrase, with the
    kernel keyring's cache warm (target: no backend more than 10% slower than the file) and cold;
  - what each bridge costs over `signin token`: `exec -- /bin/true` (beside /bin/true alone), `git-credential
    get`, `kubectl-credential`, `id-token`.

Run through bench/extras, which builds signin in release mode and runs this inside a private D-Bus session with an
unlocked gnome-keyring and a new kernel session keyring.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, write  # noqa: E402

SIGNIN, FLOOR = sys.argv[1], sys.argv[2]
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 30
WORK = tempfile.mkdtemp(prefix="signin-extras-")
STANDIN = f"{os.path.join(ROOT, '.venv', 'bin', 'python')} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"
PW = write(os.path.join(WORK, "pw"), "hunter2\n")


def hyperfine(name, commands, env, prepare=None, shell=False):
    out = os.path.join(WORK, name + ".json")
    cmd = ["hyperfine", "--warmup", "3", "--runs", str(RUNS), "--export-json", out, "--style", "none"]
    if not shell:
        cmd.append("-N")
    if prepare:
        cmd += ["--prepare", prepare]
    subprocess.run(cmd + commands, env=env, check=True, stdout=subprocess.DEVNULL)
    return [(statistics.median(r["times"]) * 1000, (max(r["times"]) - min(r["times"])) * 500) for r in json.load(open(out))["results"]]


def box(provider, name, storage="file", accounts=1):
    """A home with a configuration of its own and `accounts` accounts signed in (the first one current)."""
    home = os.path.join(WORK, name)
    os.makedirs(home)
    cfg = write(os.path.join(home, "config.json"), json.dumps({"client_id": name, "issuer": provider.issuer, "key_storage": storage}))
    provider.control(name, {"rotate": False, "id_token_on_refresh": True})
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), SIGNIN_CONFIG=cfg, BROWSER=STANDIN)
    for i in reversed(range(accounts)):
        subs = {"STANDIN_SUB": "alice" if i == 0 else f"user{i}"}
        subprocess.run(["sh", "-c", f'exec "$0" login --passphrase-fd 3 3<{PW}', SIGNIN], env=dict(env, **subs), check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return env


def main():
    provider = Provider()
    rows = []
    floor = hyperfine("floor", [FLOOR], os.environ)[0]
    rows.append(("floor (static Swift, prints a line)", floor, None))

    one = box(provider, "one")
    twenty = box(provider, "twenty", accounts=20)
    (t1, t20) = hyperfine("accounts", [f"{SIGNIN} token", f"{SIGNIN} token"], one)[0], hyperfine("accounts20", [f"{SIGNIN} token"], twenty)[0]
    rows.append(("cached token, 1 account", t1, None))
    rows.append(("cached token, 20 accounts", t20, f"{(t20[0] / t1[0] - 1) * 100:+.1f}% vs 1 account (target within 10%)"))

    file_token, file_whoami = hyperfine("file", [f"{SIGNIN} token", f"{SIGNIN} whoami"], one)
    for storage in ["secret-service", "passphrase"]:
        env = box(provider, storage.replace("-", ""), storage=storage)
        warm = hyperfine(storage + "-warm", [f"{SIGNIN} token", f"{SIGNIN} whoami"], env)
        rows.append((f"cached token, key {storage}, kernel cache warm", warm[0], f"{(warm[0][0] / file_token[0] - 1) * 100:+.1f}% vs file key"))
        rows.append((f"cached whoami, key {storage}, kernel cache warm", warm[1], f"{(warm[1][0] / file_whoami[0] - 1) * 100:+.1f}% vs file key"))
        cold = hyperfine(storage + "-cold", [f"{SIGNIN} token --passphrase-fd 3 3<{PW}"], env, prepare=f"{SIGNIN} lock", shell=True)
        rows.append((f"cold token, key {storage} (after `signin lock`)", cold[0], "unwrap + cache fill"))
    rows.insert(3, ("cached token, key file", file_token, None))
    rows.insert(4, ("cached whoami, key file", file_whoami, None))

    info = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "spec": {"interactive": False}})
    b = hyperfine("bridges", ["/bin/true", f"{SIGNIN} exec -- /bin/true", f"{SIGNIN} id-token", f"{SIGNIN} kubectl-credential"],
                  dict(one, KUBERNETES_EXEC_INFO=info))
    g = hyperfine("git", [f"printf 'protocol=https\\nhost=x\\n\\n' | {SIGNIN} git-credential get", f"printf 'protocol=https\\nhost=x\\n\\n' | {SIGNIN} token"],
                  one, shell=True)
    rows.append(("/bin/true alone", b[0], None))
    rows.append(("exec -- /bin/true", b[1], f"{b[1][0] - b[0][0] - file_token[0]:+.1f} ms over token + /bin/true"))
    rows.append(("id-token", b[2], f"{b[2][0] - file_token[0]:+.1f} ms over token"))
    rows.append(("kubectl-credential", b[3], f"{b[3][0] - file_token[0]:+.1f} ms over token"))
    rows.append(("git-credential get (through sh)", g[0], f"{g[0][0] - g[1][0]:+.1f} ms over token through the same pipe"))
    provider.stop()

    print(f"signin extras, {RUNS} runs each; times in ms (median ± half range)")
    for name, (median, spread), note in rows:
        print(f"{name:<55} {median:7.2f} ± {spread:5.2f}   {note or ''}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    json.dump([{"figure": n, "median_ms": m, "half_range_ms": s, "note": note} for n, (m, s), note in rows],
              open(os.path.join(ROOT, "bench", "out", "extras.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
