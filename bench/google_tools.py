"""Google's tools on signin's grant, in one run on one machine:

  - a warm token request to `signin metadata-server` (the token fresh in the store): mean over 500 requests from
    one Python client, each on a new connection as the Google libraries make them; beside the same client asking
    the strict provider's trivial JWKS document (a floor for one local HTTP round trip in Python);
  - `gcloud auth print-access-token` through `signin exec --gce-metadata` and through an already running
    `signin metadata-server`, beside gcloud's own cached token (gcloud signed in with its own refresh token
    against the same provider, its access token cached in its access_tokens.db), as ratios (hyperfine medians).
"""
import base64
import hashlib
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, write  # noqa: E402

SIGNIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
WORK = tempfile.mkdtemp(prefix="signin-google-")
STANDIN = f"{os.path.join(ROOT, '.venv', 'bin', 'python')} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"
GCLOUD = "/usr/bin/gcloud"
CLOUD = "https://www.googleapis.com/auth/cloud-platform"


def hyperfine(name, commands, env):
    out = os.path.join(WORK, name + ".json")
    subprocess.run(["hyperfine", "-N", "--warmup", "2", "--runs", str(RUNS), "--export-json", out, "--style", "none"] + commands,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return [(statistics.median(r["times"]) * 1000, (max(r["times"]) - min(r["times"])) * 500) for r in json.load(open(out))["results"]]


def per_request_ms(port, path, headers, n=500):
    start = time.perf_counter()
    for _ in range(n):
        c = http.client.HTTPConnection("127.0.0.1", port)
        c.request("GET", path, headers=headers)
        r = c.getresponse()
        r.read()
        assert r.status == 200, r.status
        c.close()
    return (time.perf_counter() - start) * 1000 / n


def gcloud_own_refresh_token(provider, client):
    """A refresh token for gcloud itself: the authorization code flow against the provider, by hand."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    redirect = "http://127.0.0.1:1/callback"
    q = urllib.parse.urlencode({"client_id": client, "redirect_uri": redirect, "response_type": "code", "code_challenge": challenge,
                                "code_challenge_method": "S256", "scope": f"openid email {CLOUD}", "state": "s"})
    c = http.client.HTTPConnection("127.0.0.1", provider.port)
    c.request("GET", "/authorize?" + q)
    code = urllib.parse.parse_qs(urllib.parse.urlparse(c.getresponse().getheader("Location")).query)["code"][0]
    body = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier,
                                   "client_id": client, "client_secret": "strict-secret"}).encode()
    return json.load(urllib.request.urlopen(provider.issuer + "/token", body))["refresh_token"]


def main():
    provider = Provider()
    home = os.path.join(WORK, "home")
    os.makedirs(home)
    cfg = write(os.path.join(home, "config.json"), json.dumps({"client_id": "bench-google", "issuer": provider.issuer, "project_id": "bench-project",
                                                               "project_number": "123456789", "scopes": ["openid", "email", CLOUD]}))
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), SIGNIN_CONFIG=cfg, BROWSER=STANDIN,
               CLOUDSDK_CONFIG=os.path.join(home, "gcloud-signin"), CLOUDSDK_CORE_DISABLE_PROMPTS="1")
    subprocess.run([SIGNIN, "login"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = subprocess.Popen([SIGNIN, "metadata-server", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = json.loads(server.stdout.readline())["port"]
    flavor = {"Metadata-Flavor": "Google"}
    warm = per_request_ms(port, "/computeMetadata/v1/instance/service-accounts/default/token", flavor)
    floor = per_request_ms(provider.port, "/jwks", {})

    # gcloud with its own credentials against the same provider; its first call refreshes and caches the token.
    own = dict(env, CLOUDSDK_CONFIG=os.path.join(home, "gcloud-own"))
    for prop, value in (("auth/token_host", provider.issuer + "/token"), ("auth/client_id", "bench-gcloud"), ("auth/client_secret", "strict-secret")):
        subprocess.run([GCLOUD, "config", "set", prop, value], env=own, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([GCLOUD, "auth", "activate-refresh-token", "alice@example.org", gcloud_own_refresh_token(provider, "bench-gcloud")],
                   env=own, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([GCLOUD, "auth", "print-access-token"], env=own, check=True, stdout=subprocess.DEVNULL)
    (gcloud_own,) = hyperfine("gcloud-own", [f"{GCLOUD} auth print-access-token"], own)
    served = dict(env, GCE_METADATA_HOST=f"127.0.0.1:{port}", GCE_METADATA_IP=f"127.0.0.1:{port}", GCE_METADATA_ROOT=f"127.0.0.1:{port}")
    (through_server,) = hyperfine("gcloud-server", [f"{GCLOUD} auth print-access-token"], served)
    (through_exec,) = hyperfine("gcloud-exec", [f"{SIGNIN} exec --gce-metadata -- {GCLOUD} auth print-access-token"], env)
    (cached_token,) = hyperfine("signin-token", [f"{SIGNIN} token"], env)
    server.terminate()
    server.wait()
    provider.stop()

    rows = [
        ("warm token request to the metadata server", warm, None, "per request, new connection, Python http.client"),
        ("  floor: the provider's /jwks, same client", floor, None, ""),
        ("cached `signin token` (process start included)", cached_token[0], cached_token[1], ""),
        ("gcloud print-access-token, gcloud's own cache", gcloud_own[0], gcloud_own[1], ""),
        ("gcloud print-access-token via metadata-server", through_server[0], through_server[1], f"ratio to gcloud's own: {through_server[0] / gcloud_own[0]:.2f}"),
        ("gcloud print-access-token via exec --gce-metadata", through_exec[0], through_exec[1], f"ratio to gcloud's own: {through_exec[0] / gcloud_own[0]:.2f}"),
    ]
    print(f"signin and Google's tools, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores; ms (median ± half range)\n")
    for name, value, spread, note in rows:
        print(f"{name:52} {value:9.2f}" + (f" ± {spread:6.2f}" if spread is not None else " " * 9) + f"   {note}")
    print(f"\nwarm token request / floor round trip: {warm / floor:.2f}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "google-tools.json"), "w") as f:
        json.dump({name: {"ms": value, "half_range": spread} for name, value, spread, _ in rows}, f, indent=1)


if __name__ == "__main__":
    main()
