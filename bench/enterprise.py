"""Issue 66's figures: MCP's enterprise-managed authorization, after one sign-in at the IdP (the strict provider).

1. Ten MCP servers' first tokens (`signin token --resource URL`, each an ID-JAG exchange at the IdP and a jwt-bearer
   redeem at the server's authorization server): the time per server, beside its two token requests made alone
   with curl (the same forms: an exchange and a redeem), so what signin adds per server shows.
2. `signin mcp URL` for an EMA server with a fresh IdP session and no token for it yet: from the start to the answer of
   the first tools/call.

Usage: enterprise.py SIGNIN_BINARY
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNIN = sys.argv[1]
PY = os.path.join(ROOT, ".venv", "bin", "python")
PROVIDERS = os.path.join(ROOT, "Tests", "Providers")
WORK = tempfile.mkdtemp(prefix="signin-ema-bench-")


def start(args):
    p = subprocess.Popen([PY] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p, p.stdout.readline().split()


def main():
    idp, ready = start([os.path.join(PROVIDERS, "strict_provider.py")])
    issuer = f"http://127.0.0.1:{ready[1]}"
    servers = [start([os.path.join(PROVIDERS, "mcp_server.py"), "--identity-assertion", issuer]) for _ in range(10)]
    urls = [r[2] for _, r in servers]
    registrations = {f"http://127.0.0.1:{r[1]}": {"client_id": "ema-client", "client_secret": "ema-secret", "token_endpoint_auth_method": "client_secret_post"}
                     for _, r in servers}
    config = os.path.join(WORK, "config.json")
    with open(config, "w") as f:
        json.dump({"client_id": "ema-bench", "issuer": issuer, "enterprise_authorization": {"authorization_servers": registrations}}, f)
    env = dict(os.environ, HOME=WORK, XDG_DATA_HOME=os.path.join(WORK, "data"), XDG_CONFIG_HOME=os.path.join(WORK, "cfg"), SIGNIN_CONFIG=config,
               BROWSER=f"{PY} {os.path.join(PROVIDERS, 'browser_standin.py')}", STANDIN_MODE="allow", STANDIN_LOG=os.path.join(WORK, "standin.log"))
    subprocess.run([SIGNIN, "login"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # 1: the first token of each server.
    firsts = []
    for url in urls:
        t = time.perf_counter()
        subprocess.run([SIGNIN, "token", "--resource", url], env=env, check=True, stdout=subprocess.DEVNULL)
        firsts.append(time.perf_counter() - t)
    # The two requests alone, with curl, for one more server's worth (an ID token from signin itself).
    id_token = subprocess.run([SIGNIN, "id-token"], env=env, check=True, capture_output=True, text=True).stdout.strip()
    pairs = []
    for (_, r) in servers:
        as_issuer = f"http://127.0.0.1:{r[1]}"
        form = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "audience": as_issuer, "resource": r[2], "subject_token": id_token, "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                "client_id": "ema-bench"}
        t = time.perf_counter()
        out = subprocess.run(["curl", "-s", "--data", urllib.parse.urlencode(form), issuer + "/token"], capture_output=True, text=True, check=True).stdout
        jag = json.loads(out)["access_token"]
        redeem = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": jag, "client_id": "ema-client", "client_secret": "ema-secret"}
        subprocess.run(["curl", "-s", "-o", "/dev/null", "--data", urllib.parse.urlencode(redeem), as_issuer + "/token"], check=True)
        pairs.append(time.perf_counter() - t)
    med, pair = statistics.median(firsts), statistics.median(pairs)
    print(f"ten EMA servers' first tokens after one IdP sign-in: median {med * 1000:.1f} ms a server (all ten {sum(firsts) * 1000:.0f} ms); "
          f"its two token requests alone with curl {pair * 1000:.1f} ms; signin adds {(med - pair) * 1000:.1f} ms a server "
          f"(its own start, the server's RFC 9728 and RFC 8414 documents, the store)")

    # 2: signin mcp start to the first tools/call answer, for a server with no token yet.
    subprocess.run([SIGNIN, "logout", "--resource", urls[0]], env=env, check=True, stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    p = subprocess.Popen([SIGNIN, "mcp", urls[0]], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
    for m in [init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}]:
        p.stdin.write((json.dumps(m) + "\n").encode())
    while True:
        line = p.stdout.readline()
        if not line or json.loads(line).get("id") == 1:
            break
    took = time.perf_counter() - t
    p.stdin.close()
    p.wait(timeout=10)
    print(f"signin mcp URL for an EMA server, fresh IdP session, no token yet: start to the first tools/call answer {took * 1000:.1f} ms")
    for s, _ in servers + [(idp, None)]:
        s.stdin.close()
    subprocess.run([SIGNIN, "lock"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
