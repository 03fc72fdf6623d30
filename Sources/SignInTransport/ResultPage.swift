import SignInBase

/// The page the browser shows when the sign-in ends: the one picture of signin a person sees. Self-contained:
/// no script, no outside resource (the listener sends `Content-Security-Policy: default-src 'none'`), light and
/// dark by `prefers-color-scheme`.
package struct ResultPage {
    package enum Outcome {
        case success
        case failure
    }

    package var outcome: Outcome
    /// One line under the mark ("Signed in", "Sign-in not completed").
    var headline: String
    /// What happened, in a sentence.
    package var message: String
    /// The account, when one signed in.
    package var account: String?
    /// The provider's issuer.
    package var provider: String?
    /// What to do now.
    package var next: String

    /// `returnTo`: where the person goes back to ("the terminal"; "your MCP client" for a bridge).
    package static func success(account: String, provider: String, returnTo: String = "the terminal") -> ResultPage {
        ResultPage(outcome: .success, headline: "You are signed in", message: "signin received your sign-in and stored it securely.",
                   account: account, provider: provider, next: "You can close this tab and return to \(returnTo).")
    }

    package static func failure(_ message: String, provider: String? = nil, returnTo: String = "the terminal") -> ResultPage {
        failure(message, provider: provider, next: "Return to \(returnTo) for details. You can close this tab.")
    }

    package static func failure(_ message: String, provider: String? = nil, next: String) -> ResultPage {
        ResultPage(outcome: .failure, headline: "Sign-in not completed", message: message, account: nil, provider: provider, next: next)
    }

    package var html: String {
        let ok = outcome == .success
        let mark = ok
            ? #"<svg viewBox="0 0 48 48" aria-hidden="true"><circle cx="24" cy="24" r="22"/><path d="M14 25l7 7 13-15"/></svg>"#
            : #"<svg viewBox="0 0 48 48" aria-hidden="true"><circle cx="24" cy="24" r="22"/><path d="M16 16l16 16M32 16L16 32"/></svg>"#
        var rows = ""
        if let account { rows += "<dt>Account</dt><dd id=\"account\">\(Self.escape(account))</dd>" }
        if let provider { rows += "<dt>Provider</dt><dd id=\"provider\">\(Self.escape(provider))</dd>" }
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
            <meta name="color-scheme" content="light dark"><title>signin: \(Self.escape(headline))</title><style>
            :root{--bg:#f4f5f7;--card:#fff;--text:#1d2330;--muted:#5b6474;--line:#e3e6eb;--accent:\(ok ? "#1a7f37" : "#c62828")}
            @media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#1a1d24;--text:#e8eaee;--muted:#9aa3b2;--line:#2a2f39;--accent:\(ok ? "#3fb950" : "#f47067")}}
            *{box-sizing:border-box}body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;
            background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
            main{background:var(--card);border:1px solid var(--line);border-radius:16px;padding:2.5em 2.25em;max-width:30em;width:calc(100% - 2em);
            text-align:center;box-shadow:0 8px 30px rgba(0,0,0,.08)}
            svg{width:64px;height:64px;fill:none;stroke:var(--accent);stroke-width:3.5;stroke-linecap:round;stroke-linejoin:round}
            svg circle{fill:var(--accent);fill-opacity:.12;stroke-width:2.5}
            h1{font-size:1.45em;margin:.5em 0 .25em;color:var(--accent)}p{margin:.5em 0;color:var(--muted)}
            dl{display:grid;grid-template-columns:auto 1fr;gap:.35em 1em;text-align:left;margin:1.5em 0 1em;padding:1em 1.25em;
            border:1px solid var(--line);border-radius:10px}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere;font-weight:600}
            .next{color:var(--text);font-weight:500}footer{margin-top:1.75em;font-size:.8em;color:var(--muted)}
            </style></head><body><main class="\(ok ? "success" : "failure")">\(mark)
            <h1 id="headline">\(Self.escape(headline))</h1><p id="message">\(Self.escape(message))</p>
            \(rows.isEmpty ? "" : "<dl>\(rows)</dl>")<p class="next" id="next">\(Self.escape(next))</p>
            <footer>signin \(Self.escape(SignInKitVersion.string))</footer></main></body></html>
            """
    }

    package static func escape(_ s: String) -> String {
        s.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
