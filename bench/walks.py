"""The walks of issues 30 and 40, counted by a tool instead of by hand. For each path, from callgrind (with the debug
build's DWARF 4 line tables and its conditional jumps):

  - files: the source files of Sources/ (Swift and C) in which a function ran: initialisers, accessors and the
    top-level code of main.swift included (a reader opens them too), the compiler's own helpers (outlined copies,
    value witnesses) and the standard library's specializations left out;
  - deciding: the files in which a line that states a condition (if, guard, switch, case, default, while, for-in,
    ?:, &&, ||, where, catch (a `??` default is not); outside string literals and comments, not an argument label such as `default: 60`,
    and not inside `#if DEBUG`, which the release build does not have) ran, whichever way it went; and, beside it,
    "of the path": those outside the mechanism every path stands on (SignInBase's System, Runtime, Values and Crypto
    folders, the C shims);
  - returns: in reading order (from main, each call where it stands in its function, closures where they are
    written, the callees of one call instruction in the order they were first called; a file met where code of it is
    read, not where a property of it is only looked at; never through a generic of the standard library's into what
    another caller passed it), each time the next deciding file of the path is in a target (a folder of Sources/) the
    reading had left;
  - conditions: the condition lines that ran in all, and "before run": those that ran before the command's own `run`
    started (callgrind cuts the profile there, `--dump-before`): what the command line decided for the command; and
    "files before run": the path's deciding files among them;
  - folder changes: the distinct calls from one folder of Sources/ into another;
  - CLI->library: the distinct calls from a file of SignInCLI into one of the library's targets;
  - library->CLI: calls from a library target up into SignInCLI (the compiler refuses them now; counted to show it);

for:

  - a cached `signin token`;
  - `signin login` (the browser stand-in answers), and `signin login --resource URL` (an API's address: its RFC 9728
    metadata, the server's, a client registered for it);
  - `signin metadata-server`: start, one token request, stop;
  - `signin token` through `signin agent`: the client process, and the agent (start, one request, stop);
  - each server's request alone (accept, read, the handler, the reply), as the issue walked it;
  - `signin mcp URL` (signed in to the MCP SDK's server beforehand): its start (the initialize answered), and its start
    with one `tools/call`;

and, once, `SignInCommand`'s requirements that an extension gives a default. Code is attributed to the source file
callgrind's line tables name (`fl=`/`fi=`), so a member declared in an extension of another target's type counts
where it is written.

Usage: walks.py SIGNIN_DEBUG_BINARY SOURCES_ROOT (bench/walks builds the binary from a copy of a checkout). Prints one line per path, the files with --list (the deciding ones
in reading order: depth first along the calls from main.swift, each file where it is first reached), and with
--lines also the lines on which each deciding file decided.
"""
import json
import os
import re
import shutil
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
LIST = "--list" in sys.argv or "--lines" in sys.argv
LINES = "--lines" in sys.argv
WORK = tempfile.mkdtemp(prefix="signin-walks-")
PY = sys.executable
STANDIN = f"{PY} {os.path.join(ROOT, 'Tests', 'Providers', 'browser_standin.py')}"


# The compiler's own helpers: outlined copies and destroys, value witnesses, lazy witness-table accessors. A type's
# initialisers and accessors are not among them: they are code a reader opens, and a branch in one is a decision.
HELPER = ("Wl", "WOc", "WOe", "WOh", "WOb", "WOd", "WOy", "WOs", "wcp", "wca", "wta", "wxx", "wtk", "wet", "wst", "wug", "wup", "wui")
# Swift symbols of the standard library's and Foundation's own (their specializations land in our files' line tables
# only by the compiler's choice of where to emit them).
OURS = [d for d in os.listdir(SOURCES) if not d.startswith("C")]
FOREIGN = ("$sS", "$ss", "$s10Foundation", "$s20FoundationEssentials", "$s8Dispatch", "$s7Testing")
# The mechanism every path stands on, which a reader of one path does not open to follow it: the system layer (EINTR
# retries, errno), the runtime helpers, the value codecs (the JSON parser, URL checks) and the C shims. `deciding`
# counts them; `of the path` is the deciding files without them, beside it (never instead of it).
MECHANISM = ("SignInBase/System/", "SignInBase/Runtime/", "SignInBase/Values/", "SignInBase/Crypto/", "CSignIn")
# What states a condition on a source line: a conditional branch that ran there is a decision that line makes.
# (A ternary is " ? ", with a space each side: "String? = nil" and "-> T? {" are types, not conditions.)
# (`x ?? "signin"` is a default a reader reads past, not a branch they follow: not counted.)
CONDITION = (" if ", "guard ", "switch ", "case ", "while ", "repeat ", " ? ", "&&", "||", " where ", "catch", "if (", "} else", "for (")
# A loop's `for x in xs` decides (whether there is another); an argument label `for target:` does not.
FOR_IN = re.compile(r"\bfor\s+(?:case\s+|try\s+|await\s+)*[^:]*?\s+in\b")
# A switch's `default:` decides where a statement begins; an argument label `default: 60` does not.
DEFAULT_CASE = re.compile(r"(?:^|[{;]\s*)default\s*:")


def states_condition(text):
    """Whether a source line states a condition: one of CONDITION outside its string literals and its comment."""
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text.strip())
    if code.startswith("//") or code.startswith("*") or code.startswith("/*"):
        return False
    code = code.split("//")[0]
    # An enum's `case a = 1, b = 2` declares; a switch's `case .a:` decides (its colon says so).
    if code.startswith("case ") and ":" not in code:
        return False
    return (any(c in " " + code + " " for c in CONDITION) or FOR_IN.search(code) is not None
            or DEFAULT_CASE.search(code) is not None)


def debug_only_lines(src):
    """The lines (1-based) inside `#if DEBUG` (up to its `#else` or `#endif`): code the debug build this tool reads
    runs, and the release build README recommends does not have, so no decision of the shipped path."""
    lines, stack = set(), []
    for n, text in enumerate(src, 1):
        t = text.strip()
        if t.startswith("#if"):
            stack.append(t == "#if DEBUG")
        elif t.startswith("#else") or t.startswith("#elseif"):
            if stack:
                stack[-1] = False
        elif t.startswith("#endif"):
            if stack:
                stack.pop()
        elif any(stack):
            lines.add(n)
    return lines


def source_file(path):
    """The file under Sources/ that `path` names (Swift or C), or None."""
    i = path.find(SOURCES)
    if i < 0 or not (path.endswith(".swift") or path.endswith(".c")):
        return None
    return path[i + len(SOURCES):]


def is_accessor(symbol):
    """The compiler's own helpers (outlined copies, value witnesses): code no source line of the project states."""
    name = symbol.split("(")[0].strip()
    return name.endswith(HELPER) or "outlined" in symbol or "value witness" in symbol


def owns(path, symbol):
    """Whether the code callgrind files under `path` (its `fl=`/`fi=` line tables) is the project's own: a C function of
    a C file, the top-level code of main.swift, or any Swift function but the standard library's and Foundation's
    specializations (`$sS...`, `$ss...`, `$s10Foundation...`), which the compiler emits into whichever file first
    needs them. Attribution is by the source file the line tables name, not by the mangled name's module: a member
    declared in an extension of another target's type (`extension SignInConfiguration` in SignInKit) is code of the
    file that declares it, as a reader finds it."""
    if path.endswith(".c"):
        return True
    module = path.split("/")[0]
    name = symbol.split("(")[0].strip()
    if path.endswith("/main.swift") and name in ("main", module + "_main"):
        return True  # the top-level code of an executable's main.swift
    if not name.startswith("$s"):
        return False
    # An extension of a standard type in one of our modules (`extension String` in SignInBase) is ours: the
    # extension's module is spelled out in full the first time (`$sSS10SignInBaseE...`).
    return not name.startswith(FOREIGN) or any(f"{len(m)}{m}E" in name for m in OURS)


def is_property_accessor(symbol):
    """A property's getter, setter, modify or addressor (static too), or its protocol witness: `...4keysSaySSGvgZ`."""
    return re.search(r"v(g|s|M|au|p)Z?(TW)?$", re.sub(r"\.\d+$", "", symbol.split("(")[0].strip())) is not None


def is_callback(symbol):
    """A closure, its partial application or a reabstraction thunk around a function value: code a caller passed down,
    run by the code it was passed to. (Followed from a shared generic of the standard library's, `Optional.map`
    unspecialized, such a thunk is any caller's: callgrind's graph has one node for the generic, so following its
    thunks from one caller walked into what another had passed, as `CrashGuard.install` into a store entry's dates.)"""
    name = re.sub(r"\.\d+$", "", symbol.split("(")[0].strip())
    # (`fU_`, `fU0_`: a closure; `fu_`, `fu0_`: an implicit one, such as `.map(ID.number)`'s.)
    return re.search(r"f[uU]\d*_", name) is not None or name.endswith(("TA", "TR"))


def parse(outs):
    """Reads callgrind's raw output (uncompressed; one file, or the parts of one run `--dump-before` cut): the files
    each function ran in, the lines stating a condition that ran, and the calls from one file to another."""
    ran, decided, edges = {}, {}, {}
    # Every call, function to function, with the call site's file and line: the reading order is walked on these.
    calls, home, first_line = {}, {}, {}
    deciding_fns = set()  # the functions in which a condition ran
    # One call instruction calling several functions (a loop dispatching to each family's section through one witness
    # call): callgrind keeps such a site's callees newest first (each new one is put at the head of the site's list,
    # which the dump walks), so they are read in reverse, in the order they were first called. The profile names each
    # call's instruction (`--dump-instr=yes`) to tell one site from another on the same line (`answer(x).write(io)`).
    # (`run`: the site's number, `k`: the callee's place in its listing.)
    site = {"key": None, "run": 0, "k": 0}
    instr = False  # whether positions are `instr line` (the header says)

    def position(text):
        """A cost or call line's (instruction, line) (instruction None when the profile has none; 0 for the line when
        unreadable)."""
        parts = text.split()
        try:
            return (int(parts[0], 16), int(parts[1])) if instr else (None, int(parts[0]))
        except (ValueError, IndexError):
            return (None, 0)
    fl = fi = fn = None
    cfile = cfn = None
    pending_call = None
    lines, debug_only = {}, {}

    def text_at(path, line):
        if path not in lines:
            try:
                with open(path, errors="replace") as f:
                    lines[path] = f.read().split("\n")
            except OSError:
                lines[path] = []
            debug_only[path] = debug_only_lines(lines[path])
        src = lines[path]
        if line in debug_only[path]:
            return ""
        return src[line - 1] if 0 < line <= len(src) else ""

    for raw in (l for out in ([outs] if isinstance(outs, str) else outs) for l in open(out, errors="replace")):
        if True:
            line = raw.rstrip("\n")
            if line.startswith("positions:"):
                instr = "instr" in line.split()
            elif line.startswith("fl="):
                fl = fi = line[3:]
            elif line.startswith("fi=") or line.startswith("fe="):
                fi = line[3:]
            elif line.startswith("fn="):
                fn = line[3:]
                fi = fl
            elif line.startswith("cfi=") or line.startswith("cfl="):
                cfile = line[4:]
            elif line.startswith("cfn="):
                cfn = line[4:]
            elif line.startswith("calls="):
                pending_call = (cfile or fi, cfn)
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                here = source_file(fi or "")
                if pending_call is not None:
                    callee, callee_fn = source_file(pending_call[0] or ""), pending_call[1] or ""
                    if fn and callee_fn:
                        address, at = position(line)
                        if site["key"] != (fn, fi, at, address):
                            site.update(key=(fn, fi, at, address), run=site["run"] + 1, k=0)
                        site["k"] += 1
                        calls.setdefault(fn, {}).setdefault(callee_fn, (fi, at, (site["run"], -site["k"])))
                    if (here and callee and here != callee and fn and owns(here, fn) and not is_accessor(fn)
                            and owns(callee, callee_fn) and not is_accessor(callee_fn) and not is_callback(callee_fn)):
                        edges.setdefault((here, callee), len(edges))
                    pending_call = None
                    cfile = cfn = None
                    continue
                if here and fn and owns(here, fn) and not is_accessor(fn):
                    ran.setdefault(here, set()).add(fn)
                    home.setdefault(fn, here)
                    at = position(line)[1]
                    if at and home[fn] == here:
                        first_line[fn] = min(first_line.get(fn, at), at)
                    # A line that states a condition and ran is a decision, whichever way it went: callgrind lists a
                    # conditional jump only when it was taken (`jcnd=taken/executed`), so a branch that always fell
                    # through would go unseen if only jumps counted (the floor this tool was until 2026-12-05).
                    if at and states_condition(text_at(fi, at)):
                        decided.setdefault(here, set()).add(at)
                        deciding_fns.add(fn)
    parse.calls, parse.home, parse.first_line, parse.deciding_fns = calls, home, first_line, deciding_fns
    return ran, decided, edges


def reading_order(calls, home, first_line, deciding_fns):
    """The files in the order a reader first opens them: from main, each function read top to bottom, and each call
    followed where it stands (its line in the function's own file; calls inlined from elsewhere after them), depth
    first; a closure where it is written, in its function (never through the code it was passed to: callgrind's
    graph does not know which caller passed which closure); code on other threads, which no call from main reaches,
    after that in the order callgrind lists it."""
    order, seen_fn, seen_file = [], set(), set()
    closures = {}
    for g in home:
        if is_callback(g):
            for cut in range(len(g) - 1, 3, -1):
                if g[:cut] in home and not is_callback(g[:cut]):
                    closures.setdefault(g[:cut], []).append(g)
                    break

    def visit(root):
        stack = [root]
        while stack:
            f = stack.pop()
            if f in seen_fn:
                continue
            seen_fn.add(f)
            file = home.get(f)
            # A file is met where a reader reads code of it: not where a property of it is only read, as a loop's
            # `where section.keys.contains(...)` reads each section's keys (an accessor that decides counts).
            if file and file not in seen_file and (f in deciding_fns or not is_property_accessor(f)):
                seen_file.add(file)
                order.append(file)
            own = home.get(f)
            # The runtime's shared entry points (swift_once runs every lazy global's initialiser, whoever asked first)
            # are not followed: a reader meets a global where it is used, not where the runtime happens to run it.
            if not own and f != root and (f.startswith(("swift_", "_swift", "__", "_dl_", "pthread_")) or "once" in f):
                continue
            sites = [((0, at, i) if own and source_file(where or "") == own else (1, 0, i), callee)
                     for callee, (where, at, i) in calls.get(f, {}).items() if not is_callback(callee)]
            sites += [((0, first_line.get(g, 0), (-1, 0)), g) for g in closures.get(f, [])]
            stack.extend(reversed([callee for _, callee in sorted(sites) if callee not in seen_fn]))

    for root in [f for f in calls if f.split("(")[0].strip() in ("main", "signin_main")] + list(calls) + list(home):
        visit(root)
    return order


def files(out):
    ran, _, _ = parse(out)
    return sorted(ran)


def measure(out, parts=None):
    """Files run, files holding a decision that ran, folder changes (distinct calls from one folder into another),
    and calls from the library up into the CLI."""
    ran, decided, edges = parse(parts or out)
    # Reading order: from main along the calls, each where it stands in its function (`reading_order`).
    order = reading_order(parse.calls, parse.home, parse.first_line, parse.deciding_fns)
    order += [f for f in sorted(ran) if f not in order]
    in_order = [f for f in order if f in decided]
    folder = lambda f: os.path.dirname(f)
    changes = {(folder(a), folder(b)) for a, b in edges if folder(a) != folder(b)}
    library = ("SignInBase/", "SignInTransport/", "SignInProtocol/", "SignInStorage/", "SignInGrant/", "SignInGoogle/", "SignInAWS/", "SignInAPIAccess/", "SignInKit/")
    upward = {(a, b) for a, b in edges if a.startswith(library) and b.startswith("SignInCLI/")}
    downward = {(a, b) for a, b in edges if a.startswith("SignInCLI/") and b.startswith(library)}
    # Folder changes in reading order: each time the next deciding file is in another folder than the last.
    reading_changes = sum(1 for a, b in zip(in_order, in_order[1:]) if folder(a) != folder(b))
    # Returns into a target already left, in reading order: each time the next deciding file is in a target (the
    # first folder of Sources/) the reading left before, as a reader goes back into a room they had finished with.
    # (Counted along the path's own files: the mechanism every path stands on, which a reader does not open to
    # follow a path, is not a room they walk back into.)
    target = lambda f: f.split("/")[0]
    returns, left = [], set()
    walked = [f for f in in_order if not f.startswith(MECHANISM)]
    for a, b in zip(walked, walked[1:]):
        if target(a) != target(b):
            left.add(target(a))
            if target(b) in left:
                returns.append(f"{a} -> {b}")
    # The condition lines run before the command's `run` starts (the first part `--dump-before` cut), when cut.
    before = before_files = None
    if parts and len(parts) > 1:
        _, early, _ = parse(parts[:1])
        before = sum(len(n) for n in early.values())
        # The path's deciding files crossed before the command's run starts (issue 65 counted 13 of 23 on the cached
        # token at f156cb8), in reading order.
        before_files = [f for f in in_order if f in early and not f.startswith(MECHANISM)]
    return {"files": sorted(ran), "deciding": in_order, "returns": returns, "before run": before, "files before run": before_files,
            "condition lines": sum(len(n) for n in decided.values()), "reading changes": reading_changes, "lines": {f: sorted(n) for f, n in decided.items()}, "folder changes": sorted(changes), "upward": sorted(upward),
            "crossings": sorted(downward)}


# A server's request alone, as the issue walked it by hand (accept, read, the handler, the reply), without the
# process's start and stop: collection is on only inside these functions. (Each pattern names one function, not its
# closures or thunks: callgrind toggles again on entering a nested match.)
REQUEST_ONLY = ["*LoopbackServerC9acceptAll*XEtF", "*LoopbackServerC11readRequest*CF", "*LoopbackServerC7respond*ResponseVtF"]


# Where a command's own `run` starts (callgrind cuts the profile there: what ran before it is the pipeline's): the
# house's `run(_ r: CommandRun)`, and, in checkouts before it, `run(_ c: Context)`, `runWithoutConfiguration` and
# `run(agent:)`.
# (Without the type's `V` and with any tail: a protocol witness thunk, into which the compiler may inline the
# method, is the symbol entered then.)
# (`CommandRun` is spelled `0F3Run` in a command whose name already has the word: `MetadataServerCommand`, `AgentCommand`.)
RUN_STARTS = ["*3runyAA8ExitCodeVAA*RunCKF*", "*3runyAA8ExitCodeVAA7ContextV*", "*24runWithoutConfiguration*", "*3run5agent*"]


def grind(name, args, env, run=None, only=None, stdin_text=None, interactive=False):
    out = os.path.join(WORK, name + ".cg")
    toggles = [] if only is None else ["--collect-atstart=no"] + [f"--toggle-collect={f}" for f in REQUEST_ONLY + only]
    cuts = [] if only is not None else [f"--dump-before={f}" for f in RUN_STARTS]
    p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--compress-strings=no",
                          "--compress-pos=no", "--dump-instr=yes"] + toggles + cuts + [SIGNIN] + args, env=env,
                         stdout=subprocess.PIPE, stderr=open(out + ".err", "w"),
                         stdin=subprocess.PIPE if stdin_text is not None or interactive else subprocess.DEVNULL, text=True)
    if stdin_text is not None:
        p.stdin.write(stdin_text)
        p.stdin.close()
    if run:
        run(p)
    p.wait()
    # A walk that failed walked the failure: said, never counted (a server stopped by its signal ends 0 too).
    if p.returncode != 0:
        with open(out + ".err") as f:
            said = [l for l in f.read().splitlines() if not l.startswith("==")]
        sys.exit(f"walks: `signin {' '.join(args)}` ({name}) ended {p.returncode}, so its walk is not the path asked for:\n" + "\n".join(said[-8:]))
    parts = sorted((f for f in os.listdir(WORK) if f.startswith(name + ".cg.")), key=lambda f: int(f.rsplit(".", 1)[1]) if f.rsplit(".", 1)[1].isdigit() else 1 << 30)
    parts = [os.path.join(WORK, f) for f in parts if not f.endswith(".err")]
    if os.path.exists(out):
        parts.append(out)
    return measure(out, parts)


def requirements_with_defaults(sources):
    """`SignInCommand`'s requirements that an extension of the protocol gives a default (each a question a pipeline
    may ask a command without its saying so), read from the checkout's CommandSpec.swift."""
    try:
        text = open(os.path.join(sources, "SignInCLI", "CommandSpec.swift")).read()
    except OSError:
        return None
    def names(block):
        found = set()
        for line in block.splitlines():
            code = line.split("//")[0]
            m = re.search(r"\b(?:var|func)\s+([A-Za-z_]+)", code)
            if m:
                found.add(m.group(1))
        return found
    proto = re.search(r"protocol SignInCommand[^{]*\{(.*?)\n\}", text, re.S)
    required = names(proto.group(1)) if proto else set()
    defaults = set()
    for ext in re.finditer(r"extension SignInCommand \{(.*?)\n\}", text, re.S):
        defaults |= names(ext.group(1))
    return len(required & defaults)


def mcp_walks(walks, env):
    """`signin mcp URL` as an MCP client runs it, signed in to the MCP SDK's own server beforehand: its start (the
    client's initialize answered, then standard input closed), and its start with one `tools/call` answered."""
    server = subprocess.Popen([PY, os.path.join(ROOT, "Tests", "Providers", "mcp_server.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().split()[2]
        # The SDK's toolkit has no consent page: it redirects at once (the stand-in visits, no form to submit).
        subprocess.run([SIGNIN, "login", "--resource", url, "--timeout", "60"], env=dict(env, STANDIN_MODE="visit"), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "walks", "version": "1"}}}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}

        def client(messages):
            def run(p):
                for m in messages:
                    p.stdin.write(json.dumps(m) + "\n")
                    p.stdin.flush()
                    if "id" in m:
                        answer = json.loads(p.stdout.readline())
                        if "result" not in answer:
                            sys.exit(f"walks: signin mcp answered {m['method']} with {answer}")
                    if m["method"] == "initialize":
                        p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
                        p.stdin.flush()
                p.stdin.close()
            return run
        walks["mcp: start (initialize)"] = grind("mcp-start", ["mcp", url], env, client([init]), interactive=True)
        walks["mcp: start and one tools/call"] = grind("mcp-call", ["mcp", url], env, client([init, call]), interactive=True)
    finally:
        server.stdin.close()
        server.wait()


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
    # A sign-in from an API's address (RFC 9728 metadata naming this provider, a client registered for the API).
    walks["login --resource URL"] = grind("login-resource", ["login", "--resource", provider.issuer + "/api/walks", "--timeout", "60"], env)
    # The second key custody the issue asks for: the key in the kernel keyring after a passphrase (file custody
    # has no keyring; `passphrase` keeps the unlocked key there for the cache's time).
    pcfg = write(os.path.join(home, "passphrase.json"), json.dumps({"client_id": "walks-pass", "issuer": provider.issuer, "key_storage": "passphrase"}))
    # A store of its own: the file key's store is another custody (its key would have to move first).
    penv = dict(env, SIGNIN_CONFIG=pcfg, XDG_DATA_HOME=os.path.join(home, "data-passphrase"))
    grind("login-passphrase", ["login", "--passphrase-fd", "0"], penv, stdin_text="correct horse battery staple\n")
    walks["cached token (passphrase key, unlocked)"] = grind("token-passphrase", ["token"], penv)

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
    walks["agent: the client `signin token`"] = client.get("files", {"files": [], "deciding": [], "folder changes": [], "returns": [], "upward": [], "crossings": []})
    mcp_walks(walks, env)
    # Nothing left behind: each store's unlocked key and decrypted entries leave the kernel keyring.
    for e in (env, penv):
        subprocess.run([SIGNIN, "lock"], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    provider.stop()
    print(f"SignInCommand requirements with defaults: {requirements_with_defaults(SOURCES)}")
    print(" files  deciding  of the path  returns  conditions  before run  files before run  folder changes  CLI->library  library->CLI  path")
    for name, m in walks.items():
        path = [f for f in m["deciding"] if not f.startswith(MECHANISM)]
        before = "-" if m.get("before run") is None else str(m["before run"])
        before_files = "-" if m.get("files before run") is None else str(len(m["files before run"]))
        print(f"{len(m['files']):6d}  {len(m['deciding']):8d}  {len(path):11d}  {len(m.get('returns', [])):7d}  {m.get('condition lines', 0):10d}  {before:>10}  {before_files:>16}  "
              f"{len(m['folder changes']):14d}  {len(m.get('crossings', [])):12d}  {len(m['upward']):12d}  {name}")
        if LIST:
            print("      deciding, in reading order: " + ", ".join(m["deciding"]))
            if m.get("files before run") is not None:
                print("      deciding files of the path before the command's run: " + ", ".join(m["files before run"]))
            print("      returns into a target already left: " + ("; ".join(m.get("returns", [])) or "none"))
            print("      of the path (without the system layer, the runtime, the values, the crypto and the C shims): " + ", ".join(path))
            if LINES:
                for f, ns in sorted(m.get("lines", {}).items()):
                    print(f"        {f}: " + ", ".join(str(n) for n in ns))
            print("      files: " + ", ".join(m["files"]))
            print("      folder changes: " + ", ".join(f"{a or '.'} -> {b or '.'}" for a, b in m["folder changes"]))


if __name__ == "__main__":
    try:
        main()
    finally:
        # The profiles and the walk's home (its store, its configuration) go with the run (WALKS_KEEP=1 keeps them).
        if os.environ.get("WALKS_KEEP"):
            print(f"kept: {WORK}", file=sys.stderr)
        else:
            shutil.rmtree(WORK, ignore_errors=True)
