"""`key_storage: tpm` beside `file`, in one run on one machine (hyperfine medians):

  - a cached `signin token`: with the unsealed key in the kernel keyring (the default), the TPM is not asked;
  - a forced refresh (`token --force-refresh`), the key still cached;
  - `signin token` with `key_cache_seconds: 0`, so every call asks the TPM to unseal (what the cache saves).

The TPM is swtpm on a Unix socket (TSS2_TCTI=swtpm:path=...); a hardware TPM is slower (tens of ms per unseal).
Both sides run through /usr/bin/env with their own data folder, so each pays the same wrapper.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench  # noqa: E402
from bench import Provider, hyperfine, write  # noqa: E402

bench.WORK = WORK = tempfile.mkdtemp(prefix="signin-bench-tpm-")

SIGNIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
STANDIN = f"{os.path.join(ROOT, '.venv', 'bin', 'python')} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"


def main():
    state = os.path.join(WORK, "swtpm")
    os.makedirs(state)
    sock = os.path.join(state, "sock")
    swtpm = subprocess.Popen(["swtpm", "socket", "--tpmstate", f"dir={state}", "--tpm2", "--server", f"type=unixio,path={sock}",
                              "--ctrl", f"type=unixio,path={sock}.ctrl", "--flags", "not-need-init,startup-clear"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        measure(f"swtpm:path={sock}")
    finally:
        swtpm.terminate()
        swtpm.wait()


def measure(tcti):
    for _ in range(200):
        if subprocess.run(["tpm2_getrandom", "1"], env=dict(os.environ, TPM2TOOLS_TCTI=tcti), capture_output=True).returncode == 0:
            break
        time.sleep(0.05)
    provider = Provider()
    sides = {}
    for name, extra in [("file", {"key_storage": "file"}), ("tpm", {"key_storage": "tpm"}), ("tpm0", {"key_storage": "tpm", "key_cache_seconds": 0})]:
        home = os.path.join(WORK, name)
        os.makedirs(home)
        client = f"bench-tpm-{name}"
        provider.control(client, {"rotate": False})
        cfg = write(os.path.join(home, "config.json"), json.dumps(dict({"client_id": client, "issuer": provider.issuer}, **extra)))
        env = {"XDG_DATA_HOME": os.path.join(home, "data"), "SIGNIN_CONFIG": cfg, "TSS2_TCTI": tcti, "BROWSER": STANDIN}
        subprocess.run([SIGNIN, "login"], env=dict(os.environ, **env), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sides[name] = "/usr/bin/env " + " ".join(f"{k}={v}" for k, v in env.items() if k != "BROWSER") + " " + SIGNIN
    env = dict(os.environ)
    (f_cached, fs, _), (t_cached, ts, _), (t_uncached, us, _) = hyperfine(
        "tpm-cached", [f"{sides['file']} token", f"{sides['tpm']} token", f"{sides['tpm0']} token"], env, runs=RUNS)
    (f_refresh, frs, _), (t_refresh, trs, _) = hyperfine(
        "tpm-refresh", [f"{sides['file']} token --force-refresh", f"{sides['tpm']} token --force-refresh"], env, runs=RUNS)
    for name in sides:
        subprocess.run(sides[name].split() + ["lock"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    provider.stop()
    print("| figure | `tpm` | `file` | ratio |\n|---|---|---|---|")
    print(f"| cached `signin token` (key in the kernel keyring) | {t_cached:.2f} ms ± {ts:.2f} | {f_cached:.2f} ms ± {fs:.2f} | {t_cached / f_cached:.2f}x |")
    print(f"| `signin token --force-refresh` | {t_refresh:.1f} ms ± {trs:.1f} | {f_refresh:.1f} ms ± {frs:.1f} | {t_refresh / f_refresh:.2f}x |")
    print(f"| `signin token`, `key_cache_seconds: 0` (the TPM unseals every time) | {t_uncached:.1f} ms ± {us:.1f} | {f_cached:.2f} ms (cached, above) | {t_uncached / f_cached:.1f}x |")


if __name__ == "__main__":
    main()
