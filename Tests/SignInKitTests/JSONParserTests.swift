import Foundation
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
import Testing

/// signin's own JSON parser reads every provider document, configuration and store entry: it must agree with
/// Foundation's decoder on valid JSON and refuse what RFC 8259 does not allow.
@Suite struct JSONParserTests {
    func parsed(_ text: String) -> [String: JSONValue]? { JSONValue.object(from: Data(text.utf8)) }

    @Test(arguments: [
        #"{}"#,
        #"{"a": 1, "b": [true, false, null, -0.5, 1e3, 2E-2, 0], "c": {"d": "e"}}"#,
        #"{"s": "quote \" backslash \\ slash \/ controls \b\f\n\r\t unicode \u00e9 \u4e2d astral \ud83d\ude00"}"#,
        #"{"dup": 1, "dup": 2}"#,
        "  {\"spaced\" :\t\"out\"\t}  ",
        #"{"big": 123456789012345678901234567890, "exp": 1.5e300, "neg": -12}"#,
        #"{"é": "raw UTF-8 ✓"}"#,
    ])
    func agreesWithFoundationOnValidJSON(_ text: String) throws {
        let ours = try #require(parsed(text))
        let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(JSONValue.object(ours) == foundation)
    }

    @Test(arguments: [
        "", "[]", "1", #""s""#, "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":[1,]}"#, #"{a:1}"#,
        #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":1e}"#, #"{"a":NaN}"#, #"{"a":1e999}"#,
        #"{"a":tru}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00x"}"#,
        "{\"a\":\"line\nbreak\"}", #"{"a":"unterminated}"#, #"{"a":1} trailing"#, "{\"a\":1}/*c*/",
    ])
    func refusesWhatRFC8259Refuses(_ text: String) {
        #expect(parsed(text) == nil)
        if text != "[]" && text != "1" && text != #""s""# {  // valid JSON, only not an object
            #expect(JSONSyntax.firstError(in: Array(text.utf8)) != nil, "a refused text is told where it goes wrong")
        }
    }

    @Test func refusesInvalidUTF8AndDeepNesting() {
        #expect(JSONValue.object(from: Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D])) == nil)
        #expect(parsed("{\"a\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}") == nil)
        #expect(parsed("{\"a\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}") != nil)
    }
}
