import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// The store key stays where the person put it: a move ends in one arrangement, makes a new key, asks twice;
/// each configuration's `key_storage` holds; the kernel's copy is the user's alone.
@Suite struct KeyCustodyTests {
    let keys = KeyStorageTests()

    func at(_ box: Sandbox, _ name: String) -> Bool { FileManager.default.fileExists(atPath: box.storeDir + "/" + name) }

    /// A crash at each step of a move from a file to a passphrase: the next command finds the old arrangement or
    /// the new one, never both (no plaintext key left beside `key.json`), with every token intact.
    @Test(arguments: ["key-move-after-write", "key-move-before-commit", "key-move-after-commit"])
    func aMoveInterruptedAnywhereEndsInOneArrangement(failpoint: String) throws {
        if let reason = KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "file"])
        let r = try keys.session(box, keyring: false, """
            $S login >/dev/null 2>&1; echo "@login=$?"; t0=$($S token)
            echo '{"client_id": "\(box.clientID)", "issuer": "\(strict.issuer)"}' > "$SIGNIN_CONFIG"
            SIGNIN_FAILPOINT=\(failpoint) $S key move --to passphrase --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@crash=$?"
            t=$($S token --passphrase-fd 3 3<"$PW"); [ "$t" = "$t0" ] && echo "@token=same"
            ls "$XDG_DATA_HOME/signin" | grep -c -e pending -e key-move | sed 's/^/@leftovers=/'
            $S key move --to passphrase --passphrase-fd 3 3<"$PW" | head -1 | sed 's/^/@again=/'
            """)
        let l = keys.lines(r)
        #expect(l["login"] == "0" && l["crash"] == "137", "\(r.stdout)\n\(r.stderr)")
        #expect(l["token"] == "same", "\(r.stdout)\n\(r.stderr)")
        #expect(l["leftovers"] == "0", "\(r.stdout)")
        #expect(at(box, "key.json") && !at(box, "key"), "one arrangement, the new one after the second move: \(box.storeSnapshot().keys.sorted())")
        if failpoint == "key-move-after-commit" {
            #expect(l["again"]?.hasPrefix("The key is already there") == true, "the move had committed: \(r.stdout)")
        } else {
            #expect(l["again"]?.hasPrefix("Moved the store to a new key") == true, "the move had rolled back: \(r.stdout)")
        }
    }

    /// `signin key move` takes the API records (which server an API named, the client registered there) with the
    /// entries: afterwards a token for the API needs no metadata read and no new registration.
    @Test func aKeyMoveKeepsTheAPIsServerAndRegistration() throws {
        if let reason = KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        // A provider of its own: its registration count is this test's alone.
        let strict = try Provider(script: "strict_provider.py")
        defer { strict.stop() }
        let box = try strict.sandbox()
        box.environment["SIGNIN_CONFIG"] = ""
        let api = strict.issuer + "/api/orders"
        let login = try box.signin("login", "--resource", api)
        try #require(login.status == 0, "\(login.stderr)")
        let registrations = try strict.stats("_api")["registrations"] as? Int
        let fetches = try strict.stats("_api")["metadata_fetches"] as? Int
        let r = try keys.session(box, keyring: false, """
            echo '{"client_id": "another", "issuer": "\(strict.issuer)"}' > "$HOME/other.json"
            $S key move --to passphrase --passphrase-fd 3 3<"$PW" -c "$HOME/other.json" >/dev/null; echo "@move=$?"
            SIGNIN_CONFIG= $S token --resource \(api) --force-refresh --passphrase-fd 3 3<"$PW" >/dev/null; echo "@token=$?"
            """)
        let l = keys.lines(r)
        #expect(l["move"] == "0" && l["token"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(try strict.stats("_api")["registrations"] as? Int == registrations, "no new registration")
        #expect(try strict.stats("_api")["metadata_fetches"] as? Int == fetches, "the API's metadata was not read again")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: box.storeDir)) ?? []
        #expect(files.filter { $0.hasSuffix(".api") }.count == 1 && files.filter { $0.hasSuffix(".registration") }.count == 1, "\(files)")
    }

    /// Moving from the Secret Service and crashing after the commit: the old keyring item goes when the move is
    /// finished, and `logout --all` leaves no item of this store anywhere.
    @Test func aMoveFromTheSecretServiceLeavesNoItemBehind() throws {
        if let reason = KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "secret-service"])
        let r = try keys.session(box, """
            $S login >/dev/null 2>&1; echo "@login=$?"
            id=$(sed -E 's/.*"id":"([0-9a-f]+)".*/\\1/' "$XDG_DATA_HOME/signin/key.json")
            echo '{"client_id": "\(box.clientID)", "issuer": "\(strict.issuer)"}' > "$SIGNIN_CONFIG"
            SIGNIN_FAILPOINT=key-move-after-commit $S key move --to passphrase --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@crash=$?"
            $S token --passphrase-fd 3 3<"$PW" >/dev/null; echo "@token=$?"
            secret-tool search store "$id" 2>/dev/null | grep -q 'signin store key' || echo "@olditem=gone"
            $S key move --to secret-service --passphrase-fd 3 3<"$PW" >/dev/null; echo "@back=$?"
            secret-tool search folder "$XDG_DATA_HOME/signin" 2>/dev/null | grep -c '^label' | sed 's/^/@items=/'
            $S logout --all --yes >/dev/null; echo "@logout=$?"
            secret-tool search folder "$XDG_DATA_HOME/signin" 2>/dev/null | grep -c '^label' | sed 's/^/@after=/'
            """)
        let l = keys.lines(r)
        #expect(l["login"] == "0" && l["crash"] == "137" && l["token"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(l["olditem"] == "gone", "\(r.stdout)\n\(r.stderr)")
        #expect(l["back"] == "0" && l["items"] == "1", "\(r.stdout)\n\(r.stderr)")
        #expect(l["logout"] == "0" && l["after"] == "0", "\(r.stdout)\n\(r.stderr)")
    }

    /// A copy of the old key file (a backup, a snapshot) opens nothing written after the move: every entry, those
    /// refreshed afterwards and accounts added afterwards included, is under a new key with new names.
    @Test func theOldKeyOpensNothingWrittenAfterAMove() throws {
        if let reason = KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "file"])
        let backup = box.root.appendingPathComponent("key.backup").path
        let r = try keys.session(box, keyring: false, """
            $S login >/dev/null 2>&1; echo "@login=$?"
            cp "$XDG_DATA_HOME/signin/key" \(backup)
            echo '{"client_id": "\(box.clientID)", "issuer": "\(strict.issuer)"}' > "$SIGNIN_CONFIG"
            $S key move --to passphrase --passphrase-fd 3 3<"$PW" | grep -q 'encrypted again' && echo "@said=ok"
            $S token --force-refresh --passphrase-fd 3 3<"$PW" >/dev/null; echo "@refresh=$?"
            STANDIN_SUB=bob $S login --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@bob=$?"
            """)
        let l = keys.lines(r)
        #expect(l["login"] == "0" && l["said"] == "ok" && l["refresh"] == "0" && l["bob"] == "0", "\(r.stdout)\n\(r.stderr)")
        let old = Array(try Data(contentsOf: URL(fileURLWithPath: backup)))
        let names = StoreNames(storeKey: old)
        let entries = try FileManager.default.contentsOfDirectory(atPath: box.storeDir).filter { $0.hasSuffix(".cred") }
        #expect(entries.count == 2)
        for name in entries {
            let parsed = try #require(StoreNames.parseEntry(name))
            let file = try EntryFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: box.storeDir + "/" + name))))
            #expect(Crypto.open(file.sealed, key: old, aad: EntryFile.aad(configuration: parsed.configuration, account: parsed.account)) == nil, "\(name) opens with the old key")
            #expect(parsed.configuration != names.configuration(issuer: strict.issuer, clientID: box.clientID), "the old key still names \(name)")
        }
    }

    /// On a terminal, a move to a passphrase asks for it twice (new, then again), refuses one under the floor with
    /// the reason, and never asks a third time; a script's short passphrase is refused before anything changes.
    @Test func aMoveAsksTwiceAndRefusesAShortPassphrase() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["key_storage": "file"])
        try box.writeConfig(["client_id": box.clientID, "issuer": strict.issuer])
        let short = box.root.appendingPathComponent("short").path
        try "seven77\n".write(toFile: short, atomically: true, encoding: .utf8)
        let before = box.storeSnapshot()
        let refused = try Subprocess.run("/bin/bash", ["-c", "exec \(Paths.signin) key move --to passphrase --passphrase-fd 3 3<\(short)"], env: box.environment.filter { !$0.value.isEmpty })
        #expect(refused.status == 2 && refused.stderr.contains("at least 8 characters"), "\(refused.stderr)")
        #expect(box.storeSnapshot() == before)
        // Each prompt hides what is typed: the answer waits for the echo to go off.
        let t = try Terminal.run([Paths.signin, "key", "move", "--to", "passphrase"],
                                 steps: ["wait:: ", "hidden", "send:short", "wait:: ", "hidden", "send:a-long-enough-one", "wait:: ", "hidden",
                                         "send:a-long-enough-one", "wait:encrypted again"], env: box.environment.filter { !$0.value.isEmpty })
        #expect(t.output.components(separatedBy: "New passphrase").count - 1 == 2, "\(t.output)")
        #expect(t.output.components(separatedBy: "again").count - 1 >= 1 && t.output.contains("at least 8 characters"), "\(t.output)")
        #expect(!t.output.contains("Passphrase for signin's store key"), "no third question: \(t.output)")
        #expect(t.exit == 0 && at(box, "key.json") && !at(box, "key"), "\(t)")
    }

    /// Every configuration shares the store and its key: one that asks for a passphrase while the key is a file
    /// is refused with what to do, never silently given the file; `key_cache_seconds: 0` never takes the key
    /// from the kernel; `auto` falling back to a file says so, and `status` shows it.
    @Test func eachConfigurationsKeySettingsHoldOrAreRefused() throws {
        if let reason = KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let dir = box.environment["XDG_CONFIG_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: ["client_id": box.clientID + "-corp", "issuer": strict.issuer, "key_storage": "passphrase"]).write(to: URL(fileURLWithPath: dir + "/corp.json"))
        try JSONSerialization.data(withJSONObject: ["client_id": box.clientID + "-nocache", "issuer": strict.issuer, "key_storage": "passphrase", "key_cache_seconds": 0]).write(to: URL(fileURLWithPath: dir + "/nocache.json"))
        let r = try keys.session(box, keyring: false, """
            $S login 2>"$HOME/first.err" >/dev/null; echo "@login=$?"
            grep -q 'the store key is a file beside the credentials' "$HOME/first.err" && echo "@said=once"
            STANDIN_SUB=bob $S login 2>&1 >/dev/null | grep -c 'the store key is a file beside' | sed 's/^/@second=/'
            $S status | grep -q '^Key: file .*key move --to passphrase' && echo "@status=ok"
            $S login --profile corp --passphrase-fd 3 3<"$PW" >/dev/null 2>"$HOME/corp.err"; echo "@corp=$?"
            grep -q 'signin key move --to passphrase' "$HOME/corp.err" && grep -q key_storage "$HOME/corp.err" && echo "@corpsaid=ok"
            $S key move --to passphrase --passphrase-fd 3 3<"$PW" >/dev/null; echo "@move=$?"
            $S login --profile corp --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@corpnow=$?"
            $S login --profile nocache --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@nocache=$?"
            $S token --profile corp </dev/null >/dev/null; echo "@corpcached=$?"
            $S token --profile nocache </dev/null >/dev/null 2>&1; echo "@nocachecached=$?"
            $S lock >/dev/null
            """)
        let l = keys.lines(r)
        #expect(l["login"] == "0" && l["said"] == "once" && l["second"] == "0" && l["status"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["corp"] == "2" && l["corpsaid"] == "ok", "\(r.stdout)\n\(r.stderr)")
        #expect(l["move"] == "0" && l["corpnow"] == "0" && l["nocache"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(l["corpcached"] == "0", "the kernel cache serves a configuration that allows it: \(r.stderr)")
        #expect(l["nocachecached"] == "2", "key_cache_seconds 0 never takes the key from the kernel: \(r.stderr)")
    }

    /// The unlocked key in the kernel: found again from another session of the same user (a shell without a
    /// session keyring of its own, as sshd and su leave), unreadable by another uid sharing the session keyring,
    /// and a key another uid plants under its name is ignored, not taken for a tampered store.
    @Test func theKernelCopyIsTheUsersAloneAndOutlivesTheSession() throws {
        if let reason = KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { Issue.record("not run, so failed: no setpriv"); return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "passphrase"])
        let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups"
        var r = try keys.session(box, keyring: false, keepKernelKey: true, """
            $S login --passphrase-fd 3 3<"$PW" >/dev/null 2>&1; echo "@login=$?"; $S token --passphrase-fd 3 3<"$PW" > "$XDG_DATA_HOME/t0"
            id=$(sed -E 's/.*"id":"([0-9a-f]+)".*/\\1/' "$XDG_DATA_HOME/signin/key.json"); echo "$id" > "$XDG_DATA_HOME/id"
            kid=$(keyctl search @u user "signin:$id"); echo "@held=$?"
            \(nobody) keyctl pipe "$kid" >/dev/null 2>&1; echo "@otheruid=$?"
            \(nobody) keyctl search @s user "signin:$id" >/dev/null 2>&1; echo "@otherfind=$?"
            """)
        var l = keys.lines(r)
        #expect(l["login"] == "0" && l["held"] == "0", "\(r.stdout)\n\(r.stderr)")
        #expect(l["otheruid"] != "0" && l["otherfind"] != "0", "another uid read or found the key: \(r.stdout)")
        let t0 = try String(contentsOfFile: box.root.appendingPathComponent("data/t0").path, encoding: .utf8)
        // A new session (its own session keyring, as another SSH login): no passphrase asked.
        r = try keys.session(box, keyring: false, """
            $S token </dev/null > "$XDG_DATA_HOME/t1"; echo "@again=$?"
            $S lock >/dev/null
            id=$(cat "$XDG_DATA_HOME/id")
            \(nobody) keyctl add user "signin:$id" "$(head -c 32 /dev/zero | tr '\\0' 'x')" @s >/dev/null 2>&1; echo "@planted=$?"
            $S token --passphrase-fd 3 3<"$PW" > "$XDG_DATA_HOME/t2"; echo "@afterplant=$?"
            $S lock >/dev/null
            """)
        l = keys.lines(r)
        #expect(l["again"] == "0", "the unlocked key outlives the session that unlocked it: \(r.stderr)")
        #expect(try String(contentsOfFile: box.root.appendingPathComponent("data/t1").path, encoding: .utf8) == t0)
        #expect(l["planted"] == "0", "the stand-in attacker could plant: \(r.stderr)")
        #expect(l["afterplant"] == "0" && !r.stderr.contains("tampered"), "\(r.stderr)")
        #expect(try String(contentsOfFile: box.root.appendingPathComponent("data/t2").path, encoding: .utf8) == t0)
    }
}
