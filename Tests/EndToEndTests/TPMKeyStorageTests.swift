import Foundation
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
import Testing

/// The store key sealed to a TPM 2.0: a software TPM (`swtpm`) started by each test with a state folder of its
/// own, reached over a Unix socket (`TSS2_TCTI=swtpm:path=...`, no port). The same state folder after a restart is
/// the same TPM; a fresh folder is another machine.
@Suite struct TPMKeyStorageTests {
    static var available: String? {
        if let reason = KeyStorageTests.available { return reason }
        for tool in ["/usr/bin/swtpm", "/usr/bin/tpm2_getrandom"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (scripts/setup --tests installs swtpm, swtpm-tools, tpm2-tools, libtss2-dev)"
        }
        return nil
    }

    /// Shell functions for the session: `tpm_start DIR` starts (or restarts) the software TPM whose state is DIR and
    /// points TSS2_TCTI at it; `tpm_stop DIR` ends it and waits until it is gone.
    static let tpmFunctions = """
        tpm_start() {
          mkdir -p "$1"
          # A TPM just stopped may hold its state lock a moment longer: retry until it starts (up to 10 s).
          for i in $(seq 200); do
            swtpm socket --tpmstate dir="$1" --tpm2 --server type=unixio,path="$1/sock" --ctrl type=unixio,path="$1/sock.ctrl" \
              --flags not-need-init,startup-clear --daemon --pid file="$1/pid" 2>/dev/null && break; sleep 0.05
          done
          for i in $(seq 200); do [ -S "$1/sock" ] && TPM2TOOLS_TCTI=swtpm:path="$1/sock" tpm2_getrandom 1 >/dev/null 2>&1 && break; sleep 0.05; done
          export TSS2_TCTI=swtpm:path="$1/sock"
        }
        tpm_stop() {
          # A shutdown through its control channel (the test runner's children may have SIGTERM blocked); swtpm
          # removes its pid file as it exits.
          p=$(cat "$1/pid"); swtpm_ioctl --unix "$1/sock.ctrl" -s >/dev/null 2>&1 || kill -KILL "$p"
          for i in $(seq 200); do [ -e "$1/pid" ] || break; sleep 0.05; done
          rm -f "$1/sock" "$1/sock.ctrl" "$1/pid"
        }

        """

    func session(_ box: Sandbox, _ script: String) throws -> RunResult {
        try KeyStorageTests().session(box, keyring: false, Self.tpmFunctions + "T=\"\(box.root.path)/tpm\"\n" + script)
    }

    @Test func aKeySealedToTheTPMOpensAfterARestartAndNowhereElse() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "tpm", "key_cache_seconds": 3600])
        let r = try session(box, """
            tpm_start "$T/a"
            $S login >/dev/null 2>&1; echo "@login=$?"
            test -e "$XDG_DATA_HOME/signin/key" || echo "@nokeyfile=ok"
            grep -q '"sealed"' "$XDG_DATA_HOME/signin/key.json" && echo "@sealed=ok"
            $S status | grep -q "^Key: sealed to this machine's TPM" && echo "@status=ok"
            t0=$($S token </dev/null); echo "@cached=$?"
            # The TPM restarted with its state (a reboot): no prompt, the same grant.
            $S lock >/dev/null; tpm_stop "$T/a"; tpm_start "$T/a"
            t1=$($S token </dev/null); echo "@restarted=$?"; [ "$t0" = "$t1" ] && echo "@same=ok"
            # No TPM reachable at all: a clear error, nothing touched.
            $S lock >/dev/null; tpm_stop "$T/a"
            $S token </dev/null >/dev/null 2>"$T/err1"; echo "@notpm=$?"; grep -q "cannot be reached" "$T/err1" && echo "@notpmsaid=ok"
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0" && l["nokeyfile"] == "ok" && l["sealed"] == "ok" && l["status"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["cached"] == "0" && l["restarted"] == "0" && l["same"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["notpm"] == "1" && l["notpmsaid"] == "ok", "\(r.stdout)\n\(r.stderr)")
        let before = box.storeSnapshot()

        // The data folder copied beside a fresh TPM (another machine): refused with the reason, left as it is.
        let c = try session(box, """
            tpm_start "$T/other"
            $S token </dev/null >/dev/null 2>"$T/err2"; echo "@copied=$?"
            grep -q "sealed to another TPM" "$T/err2" && echo "@said=ok"
            $S whoami </dev/null >/dev/null 2>&1; echo "@whoami=$?"
            """)
        let cl = KeyStorageTests().lines(c)
        #expect(cl["copied"] == "1" && cl["said"] == "ok" && cl["whoami"] == "1", "\(c.stdout)\n\(c.stderr)")
        #expect(box.storeSnapshot() == before, "a store copied to another TPM is left as it was")
    }

    /// Fifth review, item 13 (a): with `key_cache_seconds` 0 the key is unsealed before a rotating refresh is sent
    /// and kept for its save, so a TPM that drops while the provider answers loses nothing (before: the key was
    /// unsealed again for the save, which failed, and the rotated refresh token was lost).
    @Test func aTPMThatDropsDuringARotatingRefreshLosesNothing() throws {
        try #require(Self.available == nil, "\(Self.available ?? "")")
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["rotate": true], extra: ["key_storage": "tpm", "key_cache_seconds": 0])
        let stats = "\(strict.issuer)/_stats/\(box.clientID)"
        let r = try session(box, """
            tpm_start "$T/a"
            $S login >/dev/null 2>&1; echo "@login=$?"
            curl -s -X POST -H 'Content-Type: application/json' -d '{"refresh_hold": true}' "\(strict.issuer)/_control/\(box.clientID)" >/dev/null
            $S token --force-refresh </dev/null >/dev/null 2>"$T/err" & pid=$!
            # Until the provider has the request (a condition polled, as tpm_start polls its socket).
            for i in $(seq 400); do curl -s "\(stats)" | grep -q '"refreshes": 1' && break; sleep 0.05; done; echo "@seen=$i"
            tpm_stop "$T/a"
            curl -s -X POST -H 'Content-Type: application/json' -d '{"refresh_hold": false}' "\(strict.issuer)/_control/\(box.clientID)" >/dev/null
            wait $pid; echo "@refresh=$?"
            tpm_start "$T/a"
            $S token --force-refresh </dev/null >/dev/null 2>"$T/err2"; echo "@next=$?"
            tpm_stop "$T/a"
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(Int(l["seen"] ?? "") ?? 400 < 400, "the TPM stopped while the provider held the request: \(r.stdout)")
        #expect(l["refresh"] == "0", "the refresh was saved with the key unsealed before it: \(r.stdout)\n\(r.stderr)\n\((try? String(contentsOfFile: box.root.path + "/tpm/err", encoding: .utf8)) ?? "")")
        #expect(l["next"] == "0", "the rotated refresh token was kept: \((try? String(contentsOfFile: box.root.path + "/tpm/err2", encoding: .utf8)) ?? "")")
    }

    /// Fifth review, item 14: signins killed with their objects loaded (a TPM without a resource manager keeps them)
    /// fill the TPM; the next signin flushes what signin left and works, and never calls a full TPM "another TPM"
    /// (whose advice, a sign-out, would destroy the grant).
    @Test func aTPMFilledByKilledSigninsIsFlushedAndNeverCalledAnotherTPM() throws {
        try #require(Self.available == nil, "\(Self.available ?? "")")
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "tpm", "key_cache_seconds": 0])
        let r = try session(box, """
            tpm_start "$T/a"
            $S login >/dev/null 2>&1; echo "@login=$?"
            for i in 1 2 3; do SIGNIN_FAILPOINT=tpm-after-load $S token </dev/null >/dev/null 2>&1; done
            echo "@left=$(TPM2TOOLS_TCTI="$TSS2_TCTI" tpm2_getcap handles-transient | grep -c 0x)"
            $S token </dev/null >/dev/null 2>"$T/err"; echo "@token=$?"
            grep -q "another TPM" "$T/err" && echo "@othertpm=said"
            echo "@after=$(TPM2TOOLS_TCTI="$TSS2_TCTI" tpm2_getcap handles-transient | grep -c 0x)"
            tpm_stop "$T/a"
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(Int(l["left"] ?? "") ?? 0 >= 2, "the killed signins left objects loaded: \(r.stdout)")
        #expect(l["token"] == "0" && l["othertpm"] == nil, "\(r.stdout)\n\((try? String(contentsOfFile: box.root.path + "/tpm/err", encoding: .utf8)) ?? "")")
        #expect(l["after"] == "0", "nothing of signin's is left loaded: \(r.stdout)")
    }

    /// Fifth review, item 15: a TPM socket that accepts and never answers holds no command: each TPM operation has a
    /// deadline (`SIGNIN_TPM_TIMEOUT_SECONDS`), then a clear error, and `auto` falls back as for a missing TPM.
    @Test func aTPMThatNeverAnswersHoldsNoCommand() throws {
        try #require(Self.available == nil, "\(Self.available ?? "")")
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "tpm"])
        let folder = try box.shortFolder()
        let r = try session(box, """
            \(Paths.python) -c '
            import socket, sys, threading
            def serve(path):
                s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(8); held = []
                while True: held.append(s.accept()[0])
            threading.Thread(target=serve, args=(sys.argv[1] + ".ctrl",), daemon=True).start()
            serve(sys.argv[1])' "\(folder)/silent" & silent=$!
            for i in $(seq 200); do [ -S "\(folder)/silent" ] && break; sleep 0.05; done
            export TSS2_TCTI=swtpm:path="\(folder)/silent" SIGNIN_TPM_TIMEOUT_SECONDS=2
            start=$(date +%s); $S login </dev/null >/dev/null 2>"$T.err"; echo "@login=$?"; echo "@took=$(( $(date +%s) - start ))"
            grep -q "did not answer within 2 s" "$T.err" && echo "@said=ok"
            kill $silent
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "1" && l["said"] == "ok", "\(r.stdout)\n\(r.stderr)\n\((try? String(contentsOfFile: box.root.path + "/tpm.err", encoding: .utf8)) ?? "")")
        #expect(Int(l["took"] ?? "") ?? 99 < 15, "bounded by the deadline: \(r.stdout)")
    }

    @Test func autoChoosesTheTPMAndSaysSoAndAPassphraseIsCheckedByTheTPM() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let r = try session(box, """
            tpm_start "$T/a"
            $S login 2>"$T/err" >/dev/null; echo "@login=$?"
            grep -q "sealed to this machine's TPM" "$T/err" && echo "@said=ok"
            $S status --json | grep -q '"key_storage":"tpm"' && echo "@json=ok"
            echo '{"client_id": "\(box.clientID)", "issuer": "\(strict.issuer)", "key_storage": "tpm+passphrase"}' > "$SIGNIN_CONFIG"
            $S key move --to tpm+passphrase --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@move=$?"
            $S lock >/dev/null
            $S token </dev/null >/dev/null 2>&1; echo "@noprompt=$?"
            echo wrong-but-long-enough > "$PW.bad"; $S token --passphrase-fd 3 3<"$PW.bad" >/dev/null 2>"$T/err3"; echo "@wrong=$?"
            grep -qi "wrong passphrase" "$T/err3" && echo "@wrongsaid=ok"
            $S token --passphrase-fd 3 3<"$PW" >/dev/null; echo "@right=$?"
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0" && l["said"] == "ok" && l["json"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["move"] == "0" && l["noprompt"] != "0", "\(r.stdout)\n\(r.stderr)")
        #expect(l["wrong"] != "0" && l["wrongsaid"] == "ok" && l["right"] == "0", "\(r.stdout)\n\(r.stderr)")
    }

    /// `signin key move` to and from the TPM, with a crash after the new material is written and one just before the
    /// commit: nothing is lost, and the TPM's key opens the same grant.
    @Test(arguments: ["", "key-move-after-write", "key-move-before-commit"]) func movingTheKeyToAndFromTheTPMLosesNothing(failpoint: String) throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "file"])
        let fp = failpoint.isEmpty ? "" : "SIGNIN_FAILPOINT=\(failpoint) "
        let r = try session(box, """
            tpm_start "$T/a"
            $S login >/dev/null 2>&1; echo "@login=$?"; t0=$($S token)
            echo '{"client_id": "\(box.clientID)", "issuer": "\(strict.issuer)"}' > "$SIGNIN_CONFIG"
            for to in tpm file tpm+passphrase passphrase tpm; do
              \(fp)$S key move --to $to --passphrase-fd 3 3<"$PW" >/dev/null 2>&1
              $S lock >/dev/null
              t=$($S token --passphrase-fd 3 3<"$PW"); rc=$?
              [ "$rc" = 0 ] && [ "$t" = "$t0" ] && echo "@$to=ok" || echo "@$to=rc$rc"
            done
            $S key move --to tpm >/dev/null 2>&1; $S status | grep -q "^Key: sealed to this machine's TPM" && echo "@final=tpm"
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0", "\(r.stderr)")
        for to in ["tpm", "file", "tpm+passphrase", "passphrase"] { #expect(l[to] == "ok", "\(to): \(r.stdout)\n\(r.stderr)") }
        #expect(l["final"] == "tpm", "\(r.stdout)\n\(r.stderr)")
    }

    /// With the store key in the TPM, the grant's DPoP key is made inside the TPM too: proofs need the TPM, and
    /// nothing in the folder can sign one elsewhere.
    @Test func theDPoPKeyOfATPMStoreIsMadeInsideTheTPM() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let p = try DPoPTests.offered.get()
        let box = try p.sandbox(["rotate": true], extra: ["key_storage": "tpm", "key_cache_seconds": 3600])
        let userinfo = p.issuer + "/userinfo"
        let r = try session(box, """
            tpm_start "$T/a"
            $S login >/dev/null 2>&1; echo "@login=$?"
            $S token --json | grep -q '"token_type":"DPoP"' && echo "@dpop=ok"
            $S status --json | grep -q '"dpop_key":"tpm"' && echo "@status=ok"
            t=$($S token); pr=$($S dpop-proof --url \(userinfo))
            code=$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: DPoP $t" -H "DPoP: $pr" \(userinfo)); echo "@userinfo=$code"
            $S token --force-refresh >/dev/null; echo "@refresh=$?"
            # The TPM gone (the unsealed store key still in the kernel): cached tokens still come, proofs do not.
            tpm_stop "$T/a"
            $S token >/dev/null; echo "@cached=$?"
            $S dpop-proof --url \(userinfo) >/dev/null 2>"$T/err"; echo "@proof=$?"; grep -q "TPM" "$T/err" && echo "@said=ok"
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0" && l["dpop"] == "ok" && l["status"] == "ok" && l["userinfo"] == "200" && l["refresh"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(l["cached"] == "0" && l["proof"] != "0" && l["said"] == "ok", "the proof key is in the TPM: \(r.stdout)\n\(r.stderr)")
    }

    /// What crosses the bus to the TPM is encrypted (a salted HMAC session with parameter encryption): a recording
    /// of every command and answer (the TSS's pcap TCTI, as a probe on the bus would see them) holds neither the
    /// store key, which goes in to be sealed and comes back unsealed, nor the passphrase's key.
    @Test func aProbeOnTheTPMsBusLearnsNeitherTheKeyNorThePassphrase() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "tpm+passphrase", "key_cache_seconds": 3600])
        let r = try session(box, """
            tpm_start "$T/a"
            export TSS2_TCTI="pcap:$TSS2_TCTI" TCTI_PCAP_FILE="$T/bus.pcap"
            $S login --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@login=$?"
            id=$(sed -E 's/.*"id":"([0-9a-f]+)".*/\\1/' "$XDG_DATA_HOME/signin/key.json")
            keyctl pipe "$(keyctl search @u user "signin:$id")" > "$T/key"
            $S lock >/dev/null
            $S token --passphrase-fd 3 3<"$PW" >/dev/null; echo "@unsealed=$?"
            python3 - "$T/key" "$T/bus.pcap" "$PW" "$XDG_DATA_HOME/signin/key.json" <<'PY'
            import base64, hashlib, json, sys
            key, bus, pw = (open(p, "rb").read() for p in sys.argv[1:4])
            kdf = json.load(open(sys.argv[4]))["kdf"]
            # The sealed object's password: what a password session would send in the clear.
            auth = hashlib.scrypt(pw.strip(), salt=base64.b64decode(kdf["salt"]), n=kdf["n"], r=kdf["r"], p=kdf["p"], maxmem=1 << 28, dklen=32)
            print("@keylen=%d" % len(key))
            print("@recorded=%s" % ("yes" if len(bus) > 1000 else "no"))
            print("@keyseen=%s" % ("yes" if key in bus else "no"))
            print("@passphraseseen=%s" % ("yes" if auth in bus or pw.strip() in bus else "no"))
            PY
            """)
        let l = KeyStorageTests().lines(r)
        #expect(l["login"] == "0" && l["unsealed"] == "0" && l["keylen"] == "32" && l["recorded"] == "yes", "\(r.stdout)\n\(r.stderr)")
        #expect(l["keyseen"] == "no" && l["passphraseseen"] == "no", "the bus carried a secret in the clear: \(r.stdout)")
    }
}
