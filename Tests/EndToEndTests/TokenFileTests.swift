import Foundation
import Testing

/// `signin exec --token-file`: a token file kept fresh for as long as COMMAND runs.
@Suite struct TokenFileTests {
    @Test func theFileIsRenewedBeforeTheTokenExpiresAndRemovedAtTheEnd() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["access_ttl": 9])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let script = """
            f=$SIGNIN_TOKEN_FILE; [ "$f" = "$AWS_WEB_IDENTITY_TOKEN_FILE" ] && [ "$f" = "$AZURE_FEDERATED_TOKEN_FILE" ] && echo same
            echo "mode=$(stat -c %a "$f")"; first=$(cat "$f"); echo "first=$first"
            i=0; while [ "$(cat "$f")" = "$first" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
            echo "second=$(cat "$f")"; echo "path=$f"; env | grep -c '^SIGNIN_ACCESS_TOKEN=' | sed 's/^/envtoken=/'
            """
        let r = try box.signin(["exec", "--token-file", "--file-env", "AWS_WEB_IDENTITY_TOKEN_FILE", "--file-env", "AZURE_FEDERATED_TOKEN_FILE", "--", "/bin/sh", "-c", script])
        #expect(r.status == 0, "\(r.stderr)")
        var v: [String: String] = [:]
        for line in r.stdout.split(separator: "\n") { if let eq = line.firstIndex(of: "=") { v[String(line[..<eq])] = String(line[line.index(after: eq)...]) } }
        #expect(r.stdout.hasPrefix("same\n") && v["mode"] == "600" && v["envtoken"] == "0", "\(r.stdout)")
        let first = v["first"] ?? "", second = v["second"] ?? ""
        #expect(!first.isEmpty && !second.isEmpty && first != second, "the file was not renewed: \(r.stdout)")
        #expect(second == (try box.signin("token", "--min-ttl", "0").stdout.trimmingCharacters(in: .newlines)), "the file holds the newest token")
        let path = try #require(v["path"])
        #expect(path.hasPrefix(box.environment["XDG_RUNTIME_DIR"]! + "/signin/token-"))
        #expect(!FileManager.default.fileExists(atPath: path), "the file outlived COMMAND")
    }

    @Test func aCommandEndedByASignalLeavesNoFileAndSigninEndsTheSameWay() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let r = try box.signin(["exec", "--token-file", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_FILE\"; kill -TERM $$"])
        #expect(r.status == 128 + SIGTERM || r.status == SIGTERM, "\(r.status) \(r.stderr)")
        let path = r.stdout.trimmingCharacters(in: .newlines)
        #expect(!path.isEmpty && !FileManager.default.fileExists(atPath: path), "\(path)")
        #expect((try FileManager.default.contentsOfDirectory(atPath: box.environment["XDG_RUNTIME_DIR"]! + "/signin")).isEmpty)
        #expect(try box.signin("exec", "--file-env", "X", "--", "true").status == 2, "--file-env without --token-file")
        #expect(try box.signin("exec", "--token-file", "--env", "X", "--", "true").status == 2)
    }

    /// a token file whose signin was SIGKILLed (nobody renews it, and it holds a live token) is removed by the
    /// next `--token-file` run; another run's file, whose signin still runs, is left alone.
    @Test func aTokenFileOfAKilledSigninIsRemovedByTheNextRun() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let folder = box.environment["XDG_RUNTIME_DIR"]! + "/signin"
        // COMMAND prints the file and its own pid, then waits on its standard input (a pipe the test holds).
        let killed = try RunningSignin(box, ["exec", "--token-file", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_FILE $$\"; exec sleep 600"])
        let line = try #require(killed.readLine()).split(separator: " ")
        let orphan = String(line[0])
        let commandPID = try #require(pid_t(line[1]))
        let alive = try RunningSignin(box, ["exec", "--token-file", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_FILE $$\"; exec sleep 600"])
        let aliveLine = try #require(alive.readLine()).split(separator: " ")
        let kept = String(aliveLine[0])
        // signin first, so it cannot remove its file; then its COMMAND, which holds the pipe Process waits on.
        kill(killed.process.processIdentifier, SIGKILL)
        kill(commandPID, SIGKILL)
        killed.process.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: orphan), "the killed signin could not remove its file")
        let next = try box.signin("exec", "--token-file", "--", "/bin/true")
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!FileManager.default.fileExists(atPath: orphan), "the orphaned token file is still in \(folder)")
        #expect(FileManager.default.fileExists(atPath: kept), "a running signin's file was removed")
        kill(pid_t(aliveLine[1])!, SIGTERM)
        alive.process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: kept))
    }
}
