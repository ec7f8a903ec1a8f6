import Foundation
import Testing

@testable import Kite

/// A stream parser that fails in the middle of a chunk delivers what the chunk completed before the failure, and
/// throws on the next call: a stream read in one large chunk loses nothing that one read in small chunks delivers
/// (found by the `utf8Lines` and `jsonLines` fuzz targets, which compare the two).
@Suite struct ParserFailureTests {
    @Test func jsonLinesBeforeABadLineAreDelivered() throws {
        var parser = JSONLinesParser(of: Int.self)
        #expect(try parser.parse(Data("1\n2\nnot json\n3\n".utf8)) == [1, 2])
        #expect {
            _ = try parser.parse(Data("4\n".utf8))
        } throws: { error in
            (error as? KiteError)?.code == .streamDecodingFailed
                && (error as? KiteError)?.message.hasPrefix("line 3 of the stream could not be decoded as Int") == true
        }
        // The failure stays.
        #expect(throws: KiteError.self) { try parser.finish() }
    }

    @Test func linesBeforeATooLongLineAreDelivered() throws {
        var parser = UTF8LineParser(maximumLineLength: 4)
        #expect(try parser.parse(Data("ab\n\ncdef\ntoo long\nx\n".utf8)) == ["ab", "", "cdef"])
        #expect {
            _ = try parser.finish()
        } throws: { error in
            (error as? KiteError)?.code == .streamLineTooLong
        }
    }

    @Test func eventsBeforeATooLongLineAreDelivered() throws {
        var parser = ServerSentEventParser(maximumLineLength: 16)
        let chunk = Data("data: a\n\nid: 7\ndata: b\n\ndata: \(String(repeating: "x", count: 30))\n\n".utf8)
        #expect(try parser.parse(chunk).map(\.data) == ["a", "b"])
        #expect(parser.lastEventID == "7")
        #expect {
            _ = try parser.parse(Data("data: c\n\n".utf8))
        } throws: { error in
            (error as? KiteError)?.code == .streamLineTooLong
        }
    }
}
