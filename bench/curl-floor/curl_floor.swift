// The floor of a bridge's memory (issue 64's figure): a Swift program with the static standard library, no
// Foundation, that makes one MCP POST with libcurl and holds the connection open, as an idle bridge does. bench/mcp
// builds it (swiftc -import-objc-header curl_floor_shim.h -lcurl) and reads its /proc/PID/smaps_rollup.
//   curl-floor URL TOKEN    prints HELD once answered, then waits for standard input to close
#if canImport(Glibc)
import Glibc
#endif

let url = CommandLine.arguments[1], token = CommandLine.arguments[2]
curl_global_init(Int(CURL_GLOBAL_DEFAULT))
let handle = curl_easy_init()
let body = #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}"#
var headers: UnsafeMutablePointer<curl_slist>? = nil
for h in ["Authorization: Bearer " + token, "Content-Type: application/json", "Accept: application/json, text/event-stream"] {
    headers = curl_slist_append(headers, h)
}
_ = floor_setopt_string(handle, CURLOPT_URL, url)
_ = floor_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
_ = floor_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.utf8.count)
_ = floor_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, body)
_ = floor_discard_body(handle)
let rc = curl_easy_perform(handle)
print(rc == CURLE_OK ? "HELD" : "FAILED \(rc.rawValue)")
fflush(stdout)
var byte: UInt8 = 0
while read(0, &byte, 1) > 0 {}
curl_easy_cleanup(handle)
