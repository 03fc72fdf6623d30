import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport

/// What Google's REST APIs share (the IAM Credentials API, the Resource Manager): a base URL from the
/// configuration, and errors shaped `{"error": {"code", "status", "message"}}`.
enum GoogleAPI {
    /// `url` without trailing slashes, for `base + "/v1/..."`.
    static func base(_ url: String) -> String {
        var b = url
        while b.hasSuffix("/") { b.removeLast() }
        return b
    }

    /// The error's `status` (`PERMISSION_DENIED`; `http_<code>` when it has none) and `message` (shortened).
    static func error(_ r: HTTPResponse, _ o: [String: JSONValue]?) -> (status: String, message: String?) {
        guard case .object(let e)? = o?["error"] else { return ("http_\(r.status)", nil) }
        return (e["status"]?.string ?? "http_\(r.status)", e["message"]?.string.map { String($0.prefix(300)) })
    }
}
