import SignInBase
import CSignInCurl
import FoundationEssentials

/// One HTTP request in, one response out, over libcurl. Only the network path loads this:
/// libcurl is initialised on first use, never on a cached `signin token`.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var body: Data
    /// The final response's headers, names in lower case (the last of a repeated name).
    package var headers: [String: String] = [:]

    package init(status: Int, body: Data, headers: [String: String] = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }
}

/// How requests are made: the part of a configuration the HTTP layer needs, and nothing else of it.
package struct HTTPSettings: Sendable, Equatable {
    /// Time allowed to connect, and for the whole exchange, in seconds.
    package var connectTimeout: Int = 10
    package var totalTimeout: Int = 30
    /// Provider documents and token responses are small; anything bigger is refused.
    package var maxResponseBytes: Int = 1 << 20
    /// Certificate authorities to trust instead of the system's.
    package var caFile: String?
    /// The proxy for every request beyond this machine (nil: as the environment says).
    package var proxy: String?

    package init(connectTimeout: Int = 10, totalTimeout: Int = 30, maxResponseBytes: Int = 1 << 20, caFile: String? = nil, proxy: String? = nil) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
        self.proxy = proxy
    }
}

package struct HTTPClient: Sendable {
    /// Loads libcurl now (in the release build's static half: hands the run to the dynamic half now), so that a
    /// caller about to take resources a hand-over would leave behind (a refresh's reserved room on disk) takes them
    /// in the process that will send the request.
    package static func loadLibrary() throws(SignInError) {
        HandOverPoint.require(.network)
        guard signin_curl_load() == 0 else { throw .system(reason: String(cString: signin_curl_load_error())) }
    }

    package var settings: HTTPSettings
    package var connectTimeout: Int { settings.connectTimeout }
    package var totalTimeout: Int { settings.totalTimeout }
    var maxResponseBytes: Int { settings.maxResponseBytes }
    package var caFile: String? { settings.caFile }

    package init(_ settings: HTTPSettings) { self.settings = settings }

    package func get(_ url: String, endpoint: String, headers: [String] = []) throws(SignInError) -> HTTPResponse {
        try perform(url: url, endpoint: endpoint, form: nil, headers: headers)
    }

    package func postForm(_ url: String, endpoint: String, form: [(String, String)], headers: [String] = []) throws(SignInError) -> HTTPResponse {
        try perform(url: url, endpoint: endpoint, form: FormEncoding.encode(form), headers: headers)
    }

    /// A POST of a JSON body (Google's REST APIs: the IAM Service Account Credentials API).
    package func postJSON(_ url: String, endpoint: String, json: String, headers: [String] = []) throws(SignInError) -> HTTPResponse {
        try perform(url: url, endpoint: endpoint, form: json, headers: headers + ["Content-Type: application/json"])
    }

    private final class Sink: TransferContext {
        package var data = Data()
        var headerLines: [String] = []
        var headerBytes = 0
        package let limit: Int
        var overflow = false
        init(limit: Int, canceller: Canceller?) {
            self.limit = limit
            super.init()
            self.canceller = canceller
        }
    }

    private func perform(url: String, endpoint: String, form: String?, headers: [String]) throws(SignInError) -> HTTPResponse {
        // SignInConfiguration and discovery checked every URL already; this is the last line, for stored endpoints.
        if let problem = EndpointURL.problem(url) { throw .providerError(endpoint: endpoint, code: "insecure_endpoint", detail: problem) }
        try Self.loadLibrary()
        guard let h = signin_curl_easy_init() else { throw .system(reason: "libcurl could not start") }
        let canceller = CurrentCanceller.value
        if canceller?.interrupts == true { throw .canceled(reason: "\(CurrentOperation.name ?? "the request") was canceled before contacting the \(endpoint)") }
        let sink = Sink(limit: maxResponseBytes, canceller: canceller)
        let ctx = Unmanaged.passRetained(sink)
        // The handle first: its cleanup closes the connection, which calls back with `ctx`.
        defer {
            signin_curl_easy_cleanup(h)
            ctx.release()
        }
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for header in headers + ["Accept: application/json", "User-Agent: signin/\(SignInKitVersion.string)"] {
            list = signin_curl_slist_append(list, header)
        }
        defer { signin_curl_slist_free_all(list) }
        let errbuf = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errbuf.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errbuf.deallocate() }

        Self.setTransferOptions(h, url: url, settings: settings)
        _ = signin_curl_setopt_long(h, CURLOPT_TIMEOUT, totalTimeout)
        _ = signin_curl_setopt_slist(h, CURLOPT_HTTPHEADER, list)
        _ = signin_curl_setopt_pointer(h, CURLOPT_ERRORBUFFER, errbuf)
        _ = signin_curl_setopt_pointer(h, CURLOPT_WRITEDATA, ctx.toOpaque())
        _ = signin_curl_setopt_write(h, CURLOPT_WRITEFUNCTION) { ptr, size, n, user in
            let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
            let count = size * n
            guard sink.data.count + count <= sink.limit else {
                sink.overflow = true
                return 0  // aborts the transfer
            }
            if let ptr { sink.data.append(UnsafeRawPointer(ptr).assumingMemoryBound(to: UInt8.self), count: count) }
            return count
        }
        _ = signin_curl_setopt_pointer(h, CURLOPT_HEADERDATA, ctx.toOpaque())
        _ = signin_curl_setopt_write(h, CURLOPT_HEADERFUNCTION) { ptr, size, n, user in
            let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
            let count = size * n
            sink.headerBytes += count
            guard sink.headerBytes <= 64 * 1024 else { return 0 }
            guard let ptr else { return count }
            let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: count), as: UTF8.self)
            // A status line starts the headers of each response (a 100 Continue, then the final one).
            if line.hasPrefix("HTTP/") { sink.headerLines.removeAll() } else { sink.headerLines.append(line) }
            return count
        }
        // Each socket of the transfer is known to the canceller, which shuts it down so that a cancelled transfer
        // ends at once rather than at the timeout.
        TransferContext.watchSockets(h, ctx.toOpaque())
        if let form {
            _ = signin_curl_setopt_long(h, CURLOPT_POSTFIELDSIZE, form.utf8.count)
            _ = signin_curl_setopt_string(h, CURLOPT_COPYPOSTFIELDS, form)
        }
        let rc = signin_curl_easy_perform(h)
        if canceller?.interrupts == true { throw .canceled(reason: "\(CurrentOperation.name ?? "the request") was canceled while waiting for the \(endpoint)") }
        if sink.overflow {
            throw .providerError(endpoint: endpoint, code: "response_too_large", detail: "more than \(maxResponseBytes) bytes")
        }
        guard rc == CURLE_OK else {
            let detail = String(cString: errbuf)
            throw .networkUnavailable(endpoint: endpoint, detail: detail.isEmpty ? String(cString: signin_curl_easy_strerror(rc)) : detail)
        }
        var status = 0
        _ = signin_curl_getinfo_long(h, CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, body: sink.data, headers: Self.headerFields(sink.headerLines))
    }
}

extension HTTPClient {
    /// The options every transfer here takes (`HTTPClient`'s and `HTTPStreams`'): the URL, no proxy to this machine,
    /// else the settings' proxy, http and https only, no signals, no redirects followed, TLS verified (against the
    /// settings' `caFile` when given), and the connect timeout.
    package static func setTransferOptions(_ h: UnsafeMutableRawPointer, url: String, settings: HTTPSettings) {
        _ = signin_curl_setopt_string(h, CURLOPT_URL, url)
        // A request to this machine never goes through a proxy (`http_proxy`, `ALL_PROXY`...): it is plain http, so a
        // proxy would see the refresh token and the client secret in clear. Anything else goes through the configured
        // proxy, else follows the environment as libcurl reads it (`https_proxy`, `no_proxy`), which people behind a
        // corporate proxy need (docs/security.md).
        if let host = URL(string: url)?.host, EndpointURL.isLoopback(host: host) {
            _ = signin_curl_setopt_string(h, CURLOPT_PROXY, "")
        } else if let proxy = settings.proxy {
            _ = signin_curl_setopt_string(h, CURLOPT_PROXY, proxy)
        }
        let caFile = settings.caFile, connectTimeout = settings.connectTimeout
        _ = signin_curl_setopt_string(h, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = signin_curl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        _ = signin_curl_setopt_long(h, CURLOPT_FOLLOWLOCATION, 0)
        _ = signin_curl_setopt_long(h, CURLOPT_SSL_VERIFYPEER, 1)
        _ = signin_curl_setopt_long(h, CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile { _ = signin_curl_setopt_string(h, CURLOPT_CAINFO, caFile) }
        _ = signin_curl_setopt_long(h, CURLOPT_CONNECTTIMEOUT, connectTimeout)
    }

    /// A response's header lines as fields: names lower-cased, the last of a repeated header.
    /// Read as bytes (a bridge reads a head at every call): the name's ASCII letters lower-cased, the value without
    /// the spaces, tabs and line break around it.
    package static func headerFields(_ lines: [String]) -> [String: String] {
        var headers: [String: String] = [:]
        for line in lines {
            let b = Array(line.utf8)
            guard let colon = b.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: b[..<colon].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
            func blank(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A }
            var start = colon + 1, end = b.count
            while start < end, blank(b[start]) { start += 1 }
            while end > start, blank(b[end - 1]) { end -= 1 }
            headers[name] = String(decoding: b[start..<end], as: UTF8.self)
        }
        return headers
    }
}

/// What libcurl's socket hooks are handed for a transfer: its canceller, which shuts the transfer's sockets down when
/// the work is cancelled. Every transfer's context is one of these (the hook is one for the whole process), and it
/// lives as long as the handle whose connections it watches.
package class TransferContext {
    package var canceller: Canceller?
    /// The transfer's socket while one is open (-1: none).
    package var socket: Int32 = -1
    package init() {}

    /// Reports each socket of `handle`'s transfers to the canceller of `context` (a retained `TransferContext`).
    package static func watchSockets(_ handle: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer) {
        _ = signin_curl_watch_sockets(handle, context) { context, fd, opened in
            guard let context else { return 0 }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            if opened != 0 { transfer.socket = fd } else if transfer.socket == fd { transfer.socket = -1 }
            guard let canceller = transfer.canceller else { return 0 }
            if opened == 0 {
                canceller.unwatch(socket: fd)
                return 0
            }
            return canceller.watch(socket: fd) ? 1 : 0
        }
    }
}
