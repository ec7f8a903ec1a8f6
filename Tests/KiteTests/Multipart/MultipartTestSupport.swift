import Foundation
import MultipartKit
import NIOCore
import Testing

@testable import Kite

/// Helpers for the multipart suites: temporary files, collecting body chunks, parsing with multipart-kit.
enum MultipartTestSupport {
    /// Runs `body` with a new empty directory that is removed afterwards, whatever `body` left in it.
    static func withTemporaryDirectory<Result>(
        _ body: (URL) async throws -> Result
    ) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kite-multipart-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { Self.removeTree(directory) }
        return try await body(directory)
    }

    /// Removes `directory`, first giving back permissions a test took away.
    private static func removeTree(_ directory: URL) {
        if let enumerator = FileManager.default.enumerator(atPath: directory.path) {
            for case let relative as String in enumerator {
                let path = directory.appendingPathComponent(relative).path
                try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
            }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `bytes` to a new file `name` in `directory` and returns its URL.
    @discardableResult
    static func makeFile(_ name: String, in directory: URL, bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// `count` bytes of a repeating, position-dependent pattern, so misplaced chunks are caught.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8 &+ Int(seed))
            }
            initialized = count
        }
    }

    /// Every byte of `chunks`, in order.
    static func collect(_ chunks: ByteChunks) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in chunks {
            chunk.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// The sizes of the chunks of `chunks`.
    static func chunkSizes(_ chunks: ByteChunks) async throws -> [Int] {
        var sizes: [Int] = []
        for try await chunk in chunks {
            sizes.append(chunk.readableBytes)
        }
        return sizes
    }

    /// The error `body` throws, as a `KiteError`, recording an issue when it throws nothing or something else.
    static func kiteError<Value>(
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Value
    ) async -> KiteError? {
        do {
            _ = try await body()
            Issue.record("expected a KiteError, but nothing was thrown", sourceLocation: sourceLocation)
            return nil
        } catch let error as KiteError {
            return error
        } catch {
            Issue.record("expected a KiteError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// A part as multipart-kit's streaming parser saw it.
    struct ParsedPart {
        /// Header names and values in order.
        var headers: [(name: String, value: String)]
        var body: [UInt8]
        /// The `name` parameter of `Content-Disposition`, as multipart-kit reads it.
        var name: String?

        func header(_ name: String) -> String? {
            self.headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// Parses `body` with multipart-kit's `MultipartParser`, feeding it in pieces of `feedSize` bytes.
    static func parse(_ body: [UInt8], boundary: String, feedSize: Int = 7) throws -> [ParsedPart] {
        let parser = MultipartParser(boundary: boundary)
        var parts: [ParsedPart] = []
        var headers: [(name: String, value: String)] = []
        var partBody: [UInt8] = []
        parser.onHeader = { name, value in headers.append((name, value)) }
        parser.onBody = { buffer in buffer.withUnsafeReadableBytes { partBody.append(contentsOf: $0) } }
        parser.onPartComplete = {
            var kitHeaders = HTTPHeaders()
            for header in headers {
                kitHeaders.add(name: header.name, value: header.value)
            }
            let kitPart = MultipartPart(headers: kitHeaders, body: partBody)
            parts.append(ParsedPart(headers: headers, body: partBody, name: kitPart.name))
            headers = []
            partBody = []
        }
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + feedSize)
            try parser.execute(Array(body[offset..<end]))
            offset = end
        }
        return parts
    }
}
