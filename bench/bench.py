"""signin's benchmark: cached token and profile, restore with refresh, sign-in round trip, peak memory and
parallel refresh, each beside what a user would use instead, in one run on one machine.

Run through bench/run, which builds everything first. Figures are medians (hyperfine), with the spread.
"""
import argparse
import base64
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROVIDERS = os.path.join(ROOT, "Tests", "Providers")
TEST_PY = os.environ.get("SIGNIN_BENCH_PYTHON") or os.path.join(ROOT, ".venv", "bin", "python")
BENCH_PY = os.path.join(ROOT, ".venv-bench", "bin", "python")
SECRET = "strict-secret"


class Provider:
    def __init__(self):
        self.proc = subprocess.Popen([TEST_PY, os.path.join(PROVIDERS, "strict_provider.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        self.port = int(line.split()[1])
        self.issuer = f"http://127.0.0.1:{self.port}"

    def control(self, client, settings):
        req = urllib.request.Request(f"{self.issuer}/_control/{client}", data=json.dumps(settings).encode(), method="POST")
        urllib.request.urlopen(req).read()

    def stats(self, client):
        return json.loads(urllib.request.urlopen(f"{self.issuer}/_stats/{client}").read())

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait()


def hyperfine(name, commands, env, runs=30, warmup=3, work=None):
    """Hyperfine medians (ms) and half the spread, and the times; its export goes to `work` (default: this run's WORK)."""
    out = os.path.join(work or WORK, f"{name}.hyperfine.json")
    cmd = ["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out, "--style", "none"] + commands
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    results = json.load(open(out))["results"]
    return [(statistics.median(r["times"]) * 1000, (max(r["times"]) - min(r["times"])) * 1000 / 2, r["times"]) for r in results]


def hyperfine_shell(name, commands, env, runs=20, warmup=2):
    """For commands that need a shell (pipes, several steps); hyperfine subtracts the shell's own start-up."""
    out = os.path.join(WORK, f"{name}.json")
    cmd = ["hyperfine", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out, "--style", "none"] + commands
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return [(statistics.median(r["times"]) * 1000, (max(r["times"]) - min(r["times"])) * 1000 / 2, r["times"]) for r in json.load(open(out))["results"]]


def peak_kb(argv, env, runs=5):
    values = []
    for _ in range(runs):
        r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{argv} failed: {r.stderr[-500:]}")
        values.append(int(r.stderr.strip().splitlines()[-1]))
    return statistics.median(values)


def direct_flow(provider, client, redirect="http://127.0.0.1:9/callback"):
    """Signs in without any tool (authorize + token), returning the token response: for google-auth's credentials."""
    verifier = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    q = urllib.parse.urlencode({"response_type": "code", "client_id": client, "redirect_uri": redirect, "scope": "openid email profile",
                                "state": "s", "nonce": "n", "code_challenge": challenge, "code_challenge_method": "S256"})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    try:
        urllib.request.build_opener(NoRedirect).open(urllib.request.Request(f"{provider.issuer}/authorize?{q}", data=b"sub=alice"))
        raise SystemExit("expected a redirect")
    except urllib.error.HTTPError as e:
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(e.headers["Location"]).query))["code"]
    body = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier,
                                   "client_id": client, "client_secret": SECRET}).encode()
    return json.loads(urllib.request.urlopen(f"{provider.issuer}/token", data=body).read()), q, verifier


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--signin", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    global WORK
    WORK = tempfile.mkdtemp(prefix="signin-bench-")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    provider = Provider()
    # One curl that consents and follows the redirects, for both tools. '%s' makes Python's webbrowser module
    # (used by google-auth-oauthlib) run it as a command line too.
    standin = f"sh {os.path.join(ROOT, 'bench', 'curl_browser.sh')} %s"
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": WORK, "XDG_DATA_HOME": os.path.join(WORK, "data"),
                "BROWSER": standin, "OAUTHLIB_INSECURE_TRANSPORT": "1", "LANG": "C.UTF-8"}

    def signin_env(client, **settings):
        cfg = write(os.path.join(WORK, f"{client}.json"), json.dumps({"client_id": client, "client_secret": SECRET, "issuer": provider.issuer}))
        provider.control(client, {"rotate": False, **settings})
        return dict(base_env, SIGNIN_CONFIG=cfg)

    rows, results = [], {}
    S = args.signin

    # 1, 2: cached token and profile
    env = signin_env("bench-cached")
    subprocess.run([S, "login"], env=env, check=True, capture_output=True)
    token = subprocess.run([S, "token"], env=env, check=True, capture_output=True, text=True).stdout.strip()
    expiry = (datetime.datetime.utcnow() + datetime.timedelta(hours=1)).replace(microsecond=0).isoformat() + "Z"
    creds = write(os.path.join(WORK, "authorized_user.json"), json.dumps({
        "token": token, "refresh_token": "unused", "client_id": "bench-cached", "client_secret": SECRET,
        "token_uri": f"{provider.issuer}/token", "expiry": expiry, "type": "authorized_user"}))
    gauth_token = write(os.path.join(WORK, "gauth_token.py"),
                        "import sys\nfrom google.oauth2.credentials import Credentials\n"
                        "c = Credentials.from_authorized_user_file(sys.argv[1])\nassert c.valid\nprint(c.token)\n")
    (tok, tok_s, _), (who, who_s, _), (floor, floor_s, _), (gat, gat_s, _) = hyperfine(
        "cached", [f"{S} token", f"{S} whoami", args.floor, f"{BENCH_PY} {gauth_token} {creds}"], env, runs=args.runs * 3)
    results.update(token_ms=tok, whoami_ms=who, floor_ms=floor, gauth_token_ms=gat)
    rows.append(("cached `signin token`", tok, tok_s, "floor", floor, tok / floor, "<= 1.5x floor", tok <= 1.5 * floor))
    rows.append(("cached `signin token`", tok, tok_s, "google-auth", gat, gat / tok, ">= 20x faster", gat >= 20 * tok))
    rows.append(("cached `signin whoami`", who, who_s, "floor", floor, who / floor, "<= 1.5x floor", who <= 1.5 * floor))

    # 3: restore with refresh
    env_r = signin_env("bench-restore")
    subprocess.run([S, "login"], env=env_r, check=True, capture_output=True)
    provider.control("bench-gauth", {"rotate": False})
    tokens, _, _ = direct_flow(provider, "bench-gauth")
    gauth_refresh = write(os.path.join(WORK, "gauth_refresh.py"),
                          "import sys\nfrom google.oauth2.credentials import Credentials\nfrom google.auth.transport.requests import Request\n"
                          f"c = Credentials(None, refresh_token={tokens['refresh_token']!r}, token_uri={provider.issuer + '/token'!r}, "
                          f"client_id='bench-gauth', client_secret={SECRET!r})\nc.refresh(Request())\nprint(c.token)\n")
    curl_refresh = ["curl", "-s", "-o", "/dev/null", "-u", f"bench-gauth:{SECRET}", "--data", f"grant_type=refresh_token&refresh_token={tokens['refresh_token']}", f"{provider.issuer}/token"]
    (res, res_s, _), (gar, gar_s, _), (one, one_s, _) = hyperfine(
        "restore", [f"{S} restore --force-refresh", f"{BENCH_PY} {gauth_refresh}", " ".join(curl_refresh)], env_r, runs=args.runs)
    results.update(restore_ms=res, gauth_refresh_ms=gar, one_refresh_request_ms=one)
    rows.append(("`signin restore` (refresh)", res, res_s, "google-auth refresh", gar, gar / res, "<= floor + 1 refresh + 15 ms", res <= floor + one + 15))
    rows.append(("  budget: floor + curl refresh + 15 ms", floor + one + 15, 0, "", None, None, "", None))

    # 4: sign-in round trip
    env_l = signin_env("bench-login")
    provider.control("bench-oauthlib", {"rotate": False, "allow_localhost": True, "redirect_path": "/"})
    client_secrets = write(os.path.join(WORK, "client_secret.json"), json.dumps({"installed": {
        "client_id": "bench-oauthlib", "client_secret": SECRET, "auth_uri": f"{provider.issuer}/authorize",
        "token_uri": f"{provider.issuer}/token", "redirect_uris": ["http://127.0.0.1"]}}))
    gauth_login = write(os.path.join(WORK, "gauth_login.py"),
                        "import sys, logging\nfrom google_auth_oauthlib.flow import InstalledAppFlow\n"
                        "f = InstalledAppFlow.from_client_secrets_file(sys.argv[1], scopes=['openid', 'email', 'profile'])\n"
                        "c = f.run_local_server(host='127.0.0.1', port=0, open_browser=True, authorization_prompt_message='', timeout_seconds=30)\n"
                        "print('signed in', bool(c.token))\n")
    _, auth_query, verifier = direct_flow(provider, "bench-login")
    # The provider's own time for the same two requests: authorize (consent) and token, by curl alone.
    flow_sh = write(os.path.join(WORK, "curl_flow.sh"), f"""set -e
loc=$(curl -s -o /dev/null -w '%{{redirect_url}}' --data sub=alice '{provider.issuer}/authorize?{auth_query.replace('client_id=bench-login', 'client_id=bench-curl')}')
code=${{loc#*code=}}; code=${{code%%&*}}
curl -s -o /dev/null -u bench-curl:{SECRET} --data "grant_type=authorization_code&code=$code&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&code_verifier={verifier}" '{provider.issuer}/token'
""")
    provider.control("bench-curl", {"ignore_pkce": True})  # the curl flow reuses one challenge
    (lg, lg_s, _), (gal, gal_s, _) = hyperfine("login", [f"{S} login", f"{BENCH_PY} {gauth_login} {client_secrets}"], env_l, runs=max(10, args.runs // 2), warmup=2)
    (curlflow, cf_s, _), = hyperfine_shell("curlflow", [f"sh {flow_sh}"], env_l, runs=max(10, args.runs // 2))
    own = lg - curlflow
    peer_own = gal - curlflow
    results.update(login_ms=lg, oauthlib_login_ms=gal, provider_flow_ms=curlflow, login_overhead_ms=own, oauthlib_overhead_ms=peer_own)
    rows.append(("`signin login` round trip", lg, lg_s, "google-auth-oauthlib", gal, gal / lg, "", None))
    rows.append(("  provider alone (curl: authorize + token)", curlflow, cf_s, "", None, None, "", None))
    rows.append(("  own overhead (round trip - provider)", own, 0, "oauthlib overhead", peer_own, peer_own / own if own > 0 else None,
                 "< 30 ms and >= 4x less", own < 30 and peer_own >= 4 * own))

    # 5: peak memory
    m = {
        "signin token": peak_kb([S, "token"], env), "signin whoami": peak_kb([S, "whoami"], env), "floor": peak_kb([args.floor], env),
        "google-auth token": peak_kb([BENCH_PY, gauth_token, creds], env),
        "signin restore": peak_kb([S, "restore", "--force-refresh"], env_r), "google-auth refresh": peak_kb([BENCH_PY, gauth_refresh], env_r),
        "signin login": peak_kb([S, "login"], env_l), "oauthlib login": peak_kb([BENCH_PY, gauth_login, client_secrets], env_l),
    }
    results["peak_kb"] = m
    for mine, peer in [("signin token", "floor"), ("signin whoami", "floor"), ("signin token", "google-auth token"),
                       ("signin restore", "google-auth refresh"), ("signin login", "oauthlib login")]:
        target = "<= 1.3x floor" if peer == "floor" else ""
        rows.append((f"peak memory {mine} (MB)", m[mine] / 1024, 0, peer, m[peer] / 1024, m[mine] / m[peer],
                     target, (m[mine] <= 1.3 * m[peer]) if peer == "floor" else None))

    # 6: parallel refresh
    env_p = signin_env("bench-parallel", access_ttl=30)
    subprocess.run([S, "login"], env=env_p, check=True, capture_output=True)
    totals, counts = [], []
    for _ in range(5):
        provider.control("bench-parallel", {"access_ttl": 30})
        subprocess.run([S, "token", "--force-refresh"], env=env_p, check=True, capture_output=True)  # leaves a token that needs a refresh
        provider.control("bench-parallel", {"access_ttl": 3600})
        before = provider.stats("bench-parallel")["refreshes"]
        t0 = time.perf_counter()
        procs = [subprocess.Popen([S, "token"], env=env_p, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(20)]
        codes = [p.wait() for p in procs]
        totals.append((time.perf_counter() - t0) * 1000)
        counts.append(provider.stats("bench-parallel")["refreshes"] - before)
        assert all(c == 0 for c in codes), codes
    par = statistics.median(totals)
    results.update(parallel_total_ms=par, parallel_refreshes=counts)
    # 20 process starts alone cost 20 x the cached time spread over the cores: the target is one refresh on top
    # of that, with 20% for scheduling (issue 15).
    cores = os.cpu_count() or 1
    budget = res + 20 * tok / cores * 1.2
    results.update(parallel_budget_ms=budget)
    rows.append(("20 parallel `signin token` (expired)", par, (max(totals) - min(totals)) / 2, "one `signin restore`", res, par / res,
                 "<= refresh + 20 x token / cores x 1.2", par <= budget))
    rows.append((f"  budget: {res:.1f} + 20 x {tok:.1f} / {cores} x 1.2", budget, 0, "", None, None, "", None))
    rows.append(("  refresh requests the provider saw", max(counts), 0, "", None, None, "exactly 1", all(c == 1 for c in counts)))

    provider.stop()
    shutil.rmtree(WORK, ignore_errors=True)

    machine = f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    print(f"\nsignin benchmark, {datetime.date.today()}, {machine}")
    print("times in ms (median ± half range); ratio = peer / signin for speed, signin / peer for floor and memory\n")
    head = f"{'figure':44} {'signin':>14} {'peer':>22} {'peer value':>11} {'ratio':>7}  {'target':>38} met"
    print(head + "\n" + "-" * len(head))
    for name, v, spread, peer, pv, ratio, target, met in rows:
        vs = f"{v:8.1f} ± {spread:4.1f}" if spread else f"{v:8.1f}       "
        pvs = f"{pv:11.1f}" if pv is not None else " " * 11
        rs = f"{ratio:7.2f}" if ratio is not None else " " * 7
        ms = "" if met is None else ("yes" if met else "NO")
        print(f"{name:44} {vs:>14} {peer:>22} {pvs} {rs}  {target:>38} {ms}")
    results["machine"] = machine
    results["date"] = str(datetime.date.today())
    with open(os.path.join(ROOT, "bench", "out", "results.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
