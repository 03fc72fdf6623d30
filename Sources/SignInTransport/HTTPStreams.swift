import SignInBase
import CSignInCurl
import FoundationEssentials

/// HTTP exchanges whose answers are read as they arrive (an MCP server's event streams), over a few libcurl handles
/// kept between exchanges so that their connections stay open (keep-alive): the next request to the server goes on a
/// connection already made. Any number of exchanges may run at once, each on the thread that calls `exchange`; a
/// handle is lent to one exchange at a time.
///
/// Unlike `HTTPClient` (a provider's short answers, a whole body at most 1 MiB), an exchange has no total timeout (a
/// tool call may take minutes, a server's stream lasts the session) and no size limit of its own: the reader of the
/// body decides. It is cancelled as any transfer here: through the `Canceller` of the `offPool` work it runs in.
package final class HTTPStreams: @unchecked Sendable {
    /// The final answer's status and headers (names lower-cased; the last of a repeated header).
    package struct Head: Sendable {
        package var status: Int
        package var headers: [String: String]
        package init(status: Int, headers: [String: String]) {
            self.status = status
            self.headers = headers
        }
    }

    /// What an exchange's reader says after each piece of the body.
    package enum Reading: Sendable {
        /// Go on reading.
        case more
        /// Stop here: the rest of the answer is not wanted (its connection is closed).
        case enough
        /// What was wanted came: read on only while the server ends the answer within `finishing` (so that its
        /// connection is kept for the next exchange), else leave it.
        case finished
    }

    /// How long an answer whose reader said `.finished` may take to end before it is left (libcurl asks about once a
    /// second while a transfer idles, so it is left within about a second after this).
    package static let finishing: Double = 0.25

    /// A handle and the context its socket hooks are given, which lives as long as the handle: its connections close
    /// later, on another exchange or at cleanup, and call the hook with it then.
    private final class Handle {
        let curl: UnsafeMutableRawPointer
        let context: Context
        let retained: Unmanaged<Context>
        init?() {
            guard let h = signin_curl_easy_init() else { return nil }
            curl = h
            context = Context()
            retained = Unmanaged.passRetained(context)
        }
        deinit {
            signin_curl_easy_cleanup(curl)
            retained.release()
        }
    }

    private final class Context: TransferContext {
        var headerLines: [String] = []
        var headerBytes = 0
        var head: Head?
        var stopped = false
        var finishedAt: Double?
        var onHead: ((Head) -> Reading)?
        var onData: ((UnsafeRawBufferPointer) -> Reading)?
    }

    private let settings: HTTPSettings
    private let idle = Locked<[Handle]>([])
    private let keptHandles: Int

    /// Exchanges with `settings`' connect timeout and certificate authorities; at most `keptHandles` idle handles
    /// (and their connections) are kept.
    package init(settings: HTTPSettings, keptHandles: Int = 4) {
        self.settings = settings
        self.keptHandles = keptHandles
    }

    /// Sends `method` to `url` with `headers` and `body`, and reads the answer as it comes: `onHead` once the final
    /// answer's head is in, `onData` with each piece of its body; either may say `.enough`. Returns the head, and
    /// whether the reader stopped before the end. A transfer that fails before a head is a `networkUnavailable`
    /// naming `endpoint`; one that breaks mid-body returns what came, with `broken` true.
    package func exchange(method: String, url: String, endpoint: String, headers: [String], body: [UInt8]? = nil,
                          onHead: @escaping (Head) -> Reading = { _ in .more },
                          onData: @escaping (UnsafeRawBufferPointer) -> Reading) throws(SignInError) -> (head: Head, stopped: Bool, broken: Bool) {
        if let problem = EndpointURL.problem(url) { throw .providerError(endpoint: endpoint, code: "insecure_endpoint", detail: problem) }
        try HTTPClient.loadLibrary()
        let canceller = CurrentCanceller.value
        if canceller?.interrupts == true { throw .canceled(reason: "the request to the \(endpoint) was canceled") }
        guard let handle = idle.withLock({ $0.popLast() }) ?? Handle() else { throw .system(reason: "libcurl could not start") }
        let h = handle.curl, context = handle.context
        context.canceller = canceller
        context.headerLines = []
        context.headerBytes = 0
        context.head = nil
        context.stopped = false
        context.finishedAt = nil
        context.onHead = onHead
        context.onData = onData
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for header in headers + ["User-Agent: signin/\(SignInKitVersion.string)", "Expect:"] { list = signin_curl_slist_append(list, header) }
        let errbuf = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errbuf.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var reusable = false
        defer {
            signin_curl_easy_reset(h)
            signin_curl_slist_free_all(list)
            errbuf.deallocate()
            context.onHead = nil
            context.onData = nil
            context.canceller = nil
            if reusable { idle.withLock { if $0.count < keptHandles { $0.append(handle) } } }
        }
        let ctx = handle.retained.toOpaque()
        HTTPClient.setTransferOptions(h, url: url, settings: settings)
        _ = signin_curl_setopt_long(h, CURLOPT_TCP_KEEPALIVE, 1)
        _ = signin_curl_setopt_long(h, CURLOPT_TCP_NODELAY, 1)
        _ = signin_curl_setopt_slist(h, CURLOPT_HTTPHEADER, list)
        _ = signin_curl_setopt_pointer(h, CURLOPT_ERRORBUFFER, errbuf)
        _ = signin_curl_setopt_string(h, CURLOPT_CUSTOMREQUEST, method)
        if method == "GET" { _ = signin_curl_setopt_long(h, CURLOPT_HTTPGET, 1) }
        if method == "HEAD" { _ = signin_curl_setopt_long(h, CURLOPT_NOBODY, 1) }
        if let body {
            _ = signin_curl_setopt_long(h, CURLOPT_POSTFIELDSIZE, body.count)
            body.withUnsafeBufferPointer { b in
                _ = signin_curl_setopt_pointer(h, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: b.baseAddress ?? UnsafePointer(bitPattern: 1)!))
            }
        }
        _ = signin_curl_setopt_pointer(h, CURLOPT_WRITEDATA, ctx)
        _ = signin_curl_setopt_write(h, CURLOPT_WRITEFUNCTION) { ptr, size, n, user in
            let c = Unmanaged<Context>.fromOpaque(user!).takeUnretainedValue()
            let count = size * n
            guard let ptr, count > 0 else { return count }
            Posix.acknowledgeNow(c.socket)
            if let at = c.finishedAt {
                // Past what was wanted: the rest is read (and dropped) while the server ends the answer soon.
                if MonotonicClock.now() - at > HTTPStreams.finishing { c.stopped = true; return 0 }
                return count
            }
            switch c.onData?(UnsafeRawBufferPointer(start: ptr, count: count)) {
            case .enough?:
                c.stopped = true
                return 0
            case .finished?: c.finishedAt = MonotonicClock.now()
            default: break
            }
            return count
        }
        _ = signin_curl_setopt_xferinfo(h, ctx) { user, _, _, _, _ in
            let c = Unmanaged<Context>.fromOpaque(user!).takeUnretainedValue()
            guard let at = c.finishedAt, MonotonicClock.now() - at > HTTPStreams.finishing else { return 0 }
            c.stopped = true
            return 1
        }
        _ = signin_curl_setopt_pointer(h, CURLOPT_HEADERDATA, ctx)
        _ = signin_curl_setopt_write(h, CURLOPT_HEADERFUNCTION) { ptr, size, n, user in
            let c = Unmanaged<Context>.fromOpaque(user!).takeUnretainedValue()
            let count = size * n
            c.headerBytes += count
            guard c.headerBytes <= 64 * 1024, let ptr else { return c.headerBytes <= 64 * 1024 ? count : 0 }
            let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: count), as: UTF8.self)
            if line.hasPrefix("HTTP/") {
                // A status line starts each response's head (a 100 Continue's, then the final one).
                c.headerLines.removeAll()
                let words = line.split(separator: " ", maxSplits: 2)
                c.head = Head(status: words.count > 1 ? Int(words[1]) ?? 0 : 0, headers: [:])
            } else if line == "\r\n" || line == "\n" {
                Posix.acknowledgeNow(c.socket)
                guard var head = c.head, head.status >= 200 else { return count }
                head.headers = HTTPClient.headerFields(c.headerLines)
                c.head = head
                if c.onHead?(head) == .enough {
                    c.stopped = true
                    return 0
                }
            } else {
                c.headerLines.append(line)
            }
            return count
        }
        TransferContext.watchSockets(h, ctx)
        let rc = signin_curl_easy_perform(h)
        if canceller?.interrupts == true { throw .canceled(reason: "the request to the \(endpoint) was canceled") }
        guard let head = context.head, head.status >= 200 else {
            let detail = String(cString: errbuf)
            throw .networkUnavailable(endpoint: endpoint, detail: detail.isEmpty ? String(cString: signin_curl_easy_strerror(rc)) : detail)
        }
        // A handle whose transfer ended cleanly keeps its connection for the next exchange.
        reusable = rc == CURLE_OK
        let finished = context.finishedAt != nil
        return (head, context.stopped || finished, rc != CURLE_OK && !context.stopped && !finished)
    }
}
