import Foundation
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
import Testing

/// The store key off the disk: a real Secret Service (gnome-keyring in a private D-Bus session), a passphrase,
/// the kernel keyring as the session's cache. Each run gets its own kernel session keyring (`keyctl session`),
/// as a separate login would, so nothing leaks between tests.
@Suite struct KeyStorageTests {
    static var available: String? {
        for tool in ["/usr/bin/dbus-run-session", "/usr/bin/gnome-keyring-daemon", "/usr/bin/secret-tool", "/usr/bin/keyctl"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (scripts/setup --tests installs dbus, gnome-keyring, libsecret-tools, keyutils)"
        }
        let probe = try? Subprocess.run("/usr/bin/keyctl", ["session", "-", "/bin/true"])
        if probe?.status != 0 { return "the kernel keyring is refused here (\(probe?.stderr ?? ""))" }
        return nil
    }

    /// Runs `script` (bash, with `$S` the signin binary and `$PW` a file holding the passphrase) in a new kernel
    /// session keyring and, with `keyring`, a private D-Bus session whose gnome-keyring is unlocked (or `locked`).
    func session(_ box: Sandbox, keyring: Bool = true, locked: Bool = false, keepKernelKey: Bool = false, _ script: String, entry: Sandbox? = nil) throws -> RunResult {
        let pw = box.root.appendingPathComponent("pw").path
        try "hunter2-is-long-enough\n".write(toFile: pw, atomically: true, encoding: .utf8)
        let start = locked ? "gnome-keyring-daemon --start --components=secrets >/dev/null" : "echo -n keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null"
        // The daemon forks before it owns its bus name; a request in between would make D-Bus start a second,
        // locked daemon. Wait for the name (polling the bus, up to 10 s).
        let owned = "for i in $(seq 200); do dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
            + "org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break; sleep 0.05; done"
        // However the script ends, the kernel's copy of this store's key goes (unless the test keeps it for a next
        // session), and every process this session started ends with it: the whole run is under `reap.py`.
        let cleanup = keepKernelKey ? "" : "trap '\"$S\" lock >/dev/null 2>&1' EXIT\n"
        // `entry`: the kernel's name for the decrypted entry of the store's only account (its file's name after the
        // store's prefix).
        let entryName = entry.map { "entry() { echo \"\(KernelEntries(directory: $0.storeDir, cacheSeconds: 1).prefix)$(cd \"$XDG_DATA_HOME/signin\" && ls *.cred | head -1)\"; }\n" } ?? ""
        let body = "export S=\(Paths.signin) PW=\(pw)\n" + entryName + cleanup + (keyring ? start + "\n" + owned + "\n" : "unset DBUS_SESSION_BUS_ADDRESS\n") + script
        let file = box.root.appendingPathComponent("session-\(UUID().uuidString).sh").path
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        let inner = keyring ? ["/usr/bin/dbus-run-session", "--", "/bin/bash", file] : ["/bin/bash", file]
        // Descriptors above 2 are closed first: Foundation's Process learns that its child ended through one, and
        // the keyring daemon (which outlives the session a little) must not hold it.
        let closeAndRun = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done; exec "$@""#
        return try Subprocess.run(Paths.python, [Paths.providers.appendingPathComponent("reap.py").path, "/bin/bash", "-c", closeAndRun, "bash", "/usr/bin/keyctl", "session", "-"] + inner,
                                  env: box.environment.filter { !$0.value.isEmpty })
    }

    func lines(_ r: RunResult) -> [String: String] {
        var out: [String: String] = [:]
        for line in r.stdout.split(separator: "\n") where line.hasPrefix("@") {
            let kv = line.dropFirst().split(separator: "=", maxSplits: 1)
            if kv.count == 2 { out[String(kv[0])] = String(kv[1]) }
        }
        return out
    }

    @Test func secretServiceKeepsTheKeyOffTheDisk() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["access_ttl": 30, "rotate": true])
        let r = try session(box, """
            $S login >/dev/null 2>&1; echo "@login=$?"
            $S status | grep -q 'Secret Service item' && echo "@status=ok"
            test -e "$XDG_DATA_HOME/signin/key" || echo "@nokeyfile=ok"
            id=$(sed -E 's/.*"id":"([0-9a-f]+)".*/\\1/' "$XDG_DATA_HOME/signin/key.json")
            secret-tool search store "$id" 2>&1 | grep -q 'label = signin store key' && echo "@item=ok"
            curl -s -o /dev/null --data-binary '{"access_ttl": 3600}' \(strict.issuer)/_control/\(box.clientID)
            pids=""; for i in 1 2 3 4 5 6; do $S token > "$XDG_DATA_HOME/t$i" & pids="$pids $!"; done
            ok=0; for p in $pids; do wait $p && ok=$((ok+1)); done; echo "@parallel=$ok"
            echo "@distinct=$(cat "$XDG_DATA_HOME"/t* | sort -u | wc -l)"
            $S logout >/dev/null; echo "@logout=$?"
            secret-tool lookup store "$id" >/dev/null 2>&1 || echo "@itemgone=ok"
            """)
        let l = lines(r)
        #expect(l["login"] == "0" && l["status"] == "ok" && l["nokeyfile"] == "ok" && l["item"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["parallel"] == "6" && l["distinct"] == "1", "\(r.stdout)\n\(r.stderr)")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 1, "parallel callers shared one refresh")
        #expect(l["logout"] == "0" && l["itemgone"] == "ok", "\(r.stdout)\n\(r.stderr)")
    }

    @Test func aCopiedFolderDoesNotDecryptElsewhereAndALockedOrAbsentKeyringIsExit1() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        // The unlocked key stays in the user's kernel keyring across sessions of the same uid; `lock` ends that,
        // as the end of a login would end the keyring's unlocked state.
        var r = try session(box, "$S login >/dev/null 2>&1; echo \"@login=$?\"; $S lock >/dev/null")
        #expect(lines(r)["login"] == "0", "\(r.stderr)")
        let before = box.storeSnapshot()
        // The same keyring files, locked (a new login session, not yet unlocked).
        r = try session(box, locked: true, "$S token; echo \"@token=$?\"")
        #expect(lines(r)["token"] == "1" && r.stderr.contains("keyring that holds the key is locked"), "\(r.stderr)")
        // No Secret Service at all.
        r = try session(box, keyring: false, "$S token; echo \"@token=$?\"")
        #expect(lines(r)["token"] == "1" && r.stderr.contains("Secret Service is not available"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before)
        // The data folder copied to another user's machine (another keyring): nothing decrypts.
        let other = try strict.sandbox()
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: other.storeDir).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: box.storeDir, toPath: other.storeDir)
        try other.writeConfig(["client_id": box.clientID, "issuer": strict.issuer])
        r = try session(other, "$S token; echo \"@token=$?\"")
        #expect(lines(r)["token"] == "1" && r.stderr.contains("no item"), "\(r.stderr)")
    }

    @Test func aPassphraseKeyIsAskedOnceAndCachedInTheKernelUntilLock() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "passphrase", "key_cache_seconds": 3600])
        let r = try session(box, keyring: false, """
            $S login --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@login=$?"
            test -e "$XDG_DATA_HOME/signin/key" || echo "@nokeyfile=ok"
            grep -q scrypt "$XDG_DATA_HOME/signin/key.json" && echo "@scrypt=ok"
            $S token </dev/null >/dev/null; echo "@cached=$?"
            $S lock >/dev/null; $S token </dev/null >/dev/null; echo "@locked=$?"
            echo wrong > "$PW.bad"; $S token --passphrase-fd 3 3<"$PW.bad" >/dev/null; echo "@wrong=$?"
            $S token --passphrase-fd 3 3<"$PW" >/dev/null; echo "@unlocked=$?"
            $S token </dev/null >/dev/null; echo "@cachedagain=$?"
            """)
        let l = lines(r)
        #expect(l["login"] == "0" && l["nokeyfile"] == "ok" && l["scrypt"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["cached"] == "0", "the kernel keyring held the unlocked key: \(r.stderr)")
        #expect(l["locked"] == "2" && r.stderr.contains("no way to ask"), "\(r.stderr)")
        #expect(l["wrong"] == "2" && r.stderr.contains("wrong passphrase"), "\(r.stderr)")
        #expect(l["unlocked"] == "0" && l["cachedagain"] == "0", "\(r.stderr)")
    }

    @Test func theKernelCacheExpires() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "passphrase", "key_cache_seconds": 4])
        let r = try session(box, keyring: false, """
            $S login --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@login=$?"
            id=$(sed -E 's/.*"id":"([0-9a-f]+)".*/\\1/' "$XDG_DATA_HOME/signin/key.json")
            keyctl search @u user "signin:$id" >/dev/null && echo "@held=ok"
            # The kernel removes it after key_cache_seconds; wait for that (polling the kernel, up to 20 s).
            keyctl search @u user "$(entry)" >/dev/null && echo "@entryheld=ok"
            for i in $(seq 200); do keyctl search @u user "signin:$id" >/dev/null 2>&1 || break; sleep 0.1; done
            keyctl search @u user "$(entry)" >/dev/null 2>&1 || echo "@entrygone=ok"
            $S token </dev/null >/dev/null; echo "@expired=$?"
            """, entry: box)
        let l = lines(r)
        #expect(l["login"] == "0" && l["held"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["entryheld"] == "ok" && l["entrygone"] == "ok", "the decrypted entry expires no later than the key: \(r.stdout)")
        #expect(l["expired"] == "2", "after the expiry the passphrase is needed again: \(r.stderr)")
    }

    /// A cached command reads its entry decrypted from the kernel, beside the key: readable by this uid alone, gone
    /// with `signin lock`, never there with `key_cache_seconds` 0, and never an answer once the file changed.
    @Test func decryptedEntriesAreHeldBesideTheKeyAndGoWithIt() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["access_ttl": 3600], extra: ["key_storage": "passphrase", "key_cache_seconds": 3600])
        let r = try session(box, keyring: false, """
            $S login --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@login=$?"
            k=$(keyctl search @u user "$(entry)") && echo "@held=ok"
            echo "@perm=$(keyctl rdescribe "$k" | cut -d';' -f2,4)"
            t1=$($S token); echo "@first=$?"
            # Another process's refresh rewrites the file: the kernel's copy no longer answers.
            curl -s -o /dev/null --data-binary '{"access_ttl": 3600}' \(strict.issuer)/_control/\(box.clientID)
            t2=$($S token --force-refresh); t3=$($S token)
            [ "$t2" != "$t1" ] && [ "$t3" = "$t2" ] && echo "@fresh=ok"
            $S lock >/dev/null
            keyctl search @u user "$(entry)" >/dev/null 2>&1 || echo "@locked=ok"
            """, entry: box)
        let l = lines(r)
        #expect(l["login"] == "0" && l["held"] == "ok" && l["first"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(l["perm"] == "0;003f0000", "owned by this uid, every right for it and none for anyone else: \(r.stdout)")
        #expect(l["fresh"] == "ok" && l["locked"] == "ok", "\(r.stdout)\n\(r.stderr)")

        let none = try strict.sandbox(extra: ["key_storage": "file", "key_cache_seconds": 0])
        let n = try session(none, keyring: false, """
            $S login >/dev/null 2>&1; $S token >/dev/null; echo "@token=$?"
            keyctl search @u user "$(entry)" >/dev/null 2>&1 || echo "@nothing=ok"
            """, entry: none)
        #expect(lines(n)["token"] == "0" && lines(n)["nothing"] == "ok", "\(n.stdout)\n\(n.stderr)")
    }

    /// `signin key move` between all three, with a crash after the new material is written: nothing is lost.
    @Test(arguments: ["", "key-move-after-write"]) func movingTheKeyLosesNothing(failpoint: String) throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "file"])
        let fp = failpoint.isEmpty ? "" : "SIGNIN_FAILPOINT=\(failpoint) "
        let r = try session(box, """
            $S login >/dev/null 2>&1; echo "@login=$?"; t0=$($S token)
            # From here on the configuration leaves the key where it is moved (key_storage auto).
            echo '{"client_id": "\(box.clientID)", "issuer": "\(strict.issuer)"}' > "$SIGNIN_CONFIG"
            for to in passphrase secret-service file passphrase; do
              \(fp)$S key move --to $to --passphrase-fd 3 3<"$PW" >/dev/null 2>&1
              $S lock >/dev/null
              t=$($S token --passphrase-fd 3 3<"$PW"); rc=$?
              [ "$rc" = 0 ] && [ "$t" = "$t0" ] && echo "@$to=ok" || echo "@$to=rc$rc"
            done
            $S key move --to file --passphrase-fd 3 3<"$PW" >/dev/null; $S status | grep -q "^Key: file" && echo "@final=file"
            """)
        let l = lines(r)
        #expect(l["login"] == "0", "\(r.stderr)")
        for to in ["passphrase", "secret-service", "file"] { #expect(l[to] == "ok", "\(to): \(r.stdout)\n\(r.stderr)") }
        #expect(l["final"] == "file", "\(r.stdout)\n\(r.stderr)")
    }
}
