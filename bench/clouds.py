"""AWS through signin, in one run on one machine (hyperfine medians, each beside its baseline):

  - `aws sts get-caller-identity --profile signin`, whose credential_process is `signin aws-credential-process`
    (the role's keys cached in signin's encrypted store after the first call), beside the same aws-cli command
    with static keys in its credentials file: the ratio is what signin adds to every aws-cli command;
  - `signin aws-credential-process` alone (cached), beside `signin token` (cached), the floor of a signin call.

STS is moto behind the tests' verifying front (Tests/Providers/aws_sts.py); the provider is the strict one.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import Provider, write  # noqa: E402

SIGNIN = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
WORK = tempfile.mkdtemp(prefix="signin-clouds-")
PY = os.path.join(ROOT, ".venv", "bin", "python")
AWS = os.path.join(ROOT, ".venv", "bin", "aws")
STANDIN = f"{PY} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"
ROLE = "arn:aws:iam::123456789012:role/bench"


def hyperfine(name, commands, env):
    out = os.path.join(WORK, name + ".json")
    subprocess.run(["hyperfine", "-N", "--warmup", "2", "--runs", str(RUNS), "--export-json", out, "--style", "none"] + commands,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return [(statistics.median(r["times"]) * 1000, (max(r["times"]) - min(r["times"])) * 500) for r in json.load(open(out))["results"]]


def main():
    provider = Provider()
    sts = subprocess.Popen([PY, os.path.join(ROOT, "Tests", "Providers", "aws_sts.py"), provider.issuer], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    sts_url = "http://127.0.0.1:" + sts.stdout.readline().split()[1]
    home = os.path.join(WORK, "home")
    os.makedirs(home)
    cfg = write(os.path.join(home, "config.json"), json.dumps({"client_id": "bench-aws", "issuer": provider.issuer, "aws_sts_endpoint": sts_url}))
    aws_dir = os.path.join(home, ".aws")
    os.makedirs(aws_dir)
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"), SIGNIN_CONFIG=cfg, BROWSER=STANDIN,
               AWS_CONFIG_FILE=os.path.join(aws_dir, "config"), AWS_SHARED_CREDENTIALS_FILE=os.path.join(aws_dir, "credentials"),
               AWS_ENDPOINT_URL=sts_url, AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")
    subprocess.run([SIGNIN, "login"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([SIGNIN, "aws", "configure", "--aws-profile", "signin", "--role-arn", ROLE], env=env, check=True, stdout=subprocess.DEVNULL)
    # Static keys of the same role session, from one call: the baseline needs no process at all.
    keys = json.loads(subprocess.run([SIGNIN, "aws-credential-process", "--role-arn", ROLE], env=env, check=True, capture_output=True, text=True).stdout)
    write(env["AWS_SHARED_CREDENTIALS_FILE"], f"[static]\naws_access_key_id = {keys['AccessKeyId']}\naws_secret_access_key = {keys['SecretAccessKey']}\n"
                                              f"aws_session_token = {keys['SessionToken']}\n")
    before = json.load(urllib.request.urlopen(sts_url + "/_count"))["assume"]
    (through, s1), (static, s2) = hyperfine("aws", [f"{AWS} sts get-caller-identity --profile signin", f"{AWS} sts get-caller-identity --profile static"], env)
    (process, s3), (token, s4) = hyperfine("process", [f"{SIGNIN} aws-credential-process --role-arn {ROLE}", f"{SIGNIN} token"], env)
    after = json.load(urllib.request.urlopen(sts_url + "/_count"))["assume"]
    subprocess.run([SIGNIN, "lock"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # nothing left in the kernel keyring
    sts.stdin.close()
    provider.stop()
    print(f"| figure | through signin | baseline | ratio |\n|---|---|---|---|")
    print(f"| `aws sts get-caller-identity` | {through:.0f} ms ± {s1:.0f} (credential_process) | {static:.0f} ms ± {s2:.0f} (static keys) | {through / static:.2f}x |")
    print(f"| the credential process alone, cached | {process:.1f} ms ± {s3:.1f} | {token:.1f} ms ± {s4:.1f} (`signin token`) | {process / token:.2f}x |")
    print(f"\nAssumeRoleWithWebIdentity calls during the {2 * RUNS + 4} credential_process runs: {after - before} (the keys were cached).")


if __name__ == "__main__":
    main()
