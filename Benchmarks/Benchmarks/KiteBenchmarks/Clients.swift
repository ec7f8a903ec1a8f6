import AsyncHTTPClient
import Foundation
import Kite
import NIOCore
import NIOHTTP1
import _NIOFileSystem

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same piece of work done by each client. Every function checks the answer it got (status,
/// length or decoded value), so a client that fails quietly cannot look fast.
extension Harness {
    // MARK: GET

    /// GET `path` with `client` and return the body's length.
    func get(_ path: String, with client: Client) async throws -> Int {
        switch client {
        case .kite: try await self.kiteGet(path)
        case .ahc: try await self.ahcGet(path)
        case .ahcInTask: try await Task { try await self.ahcGet(path) }.value
        case .urlSession: try await self.urlSessionGet(path)
        }
    }

    /// One small GET (case 1's unit of work): `smallPath` with `client`, its 128 bytes checked.
    func smallGet(with client: Client) async throws {
        let count = try await self.get(smallPath, with: client)
        guard count == 128 else { throw HarnessError("\(client): got \(count) bytes") }
    }

    /// 64 small GETs in flight at once (case 2's unit of work), each checked.
    func smallGets64(with client: Client) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask { try await self.smallGet(with: client) }
            }
            try await group.waitForAll()
        }
    }

    /// GET `path` with Kite and return the body's length.
    func kiteGet(_ path: String) async throws -> Int {
        try await self.kite.request(self.url(path)).validate().serializingData().value.count
    }

    /// GET `path` with raw AHC and return the body's length.
    func ahcGet(_ path: String) async throws -> Int {
        let response = try await self.ahc.execute(self.ahcRequest(path), timeout: .seconds(60))
        guard response.status == .ok else {
            throw HarnessError("AHC: \(path) answered \(response.status)")
        }
        return try await response.body.collect(upTo: 64 << 20).readableBytes
    }

    /// GET `path` with URLSession and return the body's length.
    func urlSessionGet(_ path: String) async throws -> Int {
        let (data, response) = try await self.urlSession.data(for: self.urlRequest(path))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw HarnessError("URLSession: \(path) did not answer 200")
        }
        return data.count
    }

    // MARK: JSON

    /// GET `path` with Kite and decode it.
    func kiteDecode<Value: Decodable & Sendable>(_ type: Value.Type, _ path: String) async throws -> Value {
        try await self.kite.request(self.url(path)).validate().serializingDecodable(type).value
    }

    /// GET `path` with raw AHC, collect it and decode it with `JSONDecoder`.
    func ahcDecode<Value: Decodable>(_ type: Value.Type, _ path: String) async throws -> Value {
        let response = try await self.ahc.execute(self.ahcRequest(path), timeout: .seconds(60))
        guard response.status == .ok else {
            throw HarnessError("AHC: \(path) answered \(response.status)")
        }
        let body = try await response.body.collect(upTo: 64 << 20)
        return try JSONDecoder().decode(type, from: Data(buffer: body, byteTransferStrategy: .noCopy))
    }

    /// GET `path` with URLSession and decode it with `JSONDecoder`.
    func urlSessionDecode<Value: Decodable>(_ type: Value.Type, _ path: String) async throws -> Value {
        let (data, response) = try await self.urlSession.data(for: self.urlRequest(path))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw HarnessError("URLSession: \(path) did not answer 200")
        }
        return try JSONDecoder().decode(type, from: data)
    }

    // MARK: Download to a file

    /// Downloads `path` with `client` to a new file and returns its size; the file is removed.
    func download(_ path: String, with client: Client) async throws -> Int64 {
        switch client {
        case .kite: try await self.kiteDownload(path)
        case .ahc: try await self.ahcDownload(path)
        case .ahcInTask: throw HarnessError("case 4 has no AHC-in-a-Task client")
        case .urlSession: try await self.urlSessionDownload(path)
        }
    }

    /// Downloads `path` with raw AHC's async API, writing each chunk of the body to a `FileHandle` as it
    /// arrives (the plain way to stream a body to a file), and returns the file's size; the file is removed.
    func ahcStreamingDownload(_ path: String) async throws -> Int64 {
        let destination = self.scratchFile("ahc-stream-download")
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw HarnessError("cannot create \(destination.path)")
        }
        let handle = try FileHandle(forWritingTo: destination)
        let response = try await self.ahc.execute(self.ahcRequest(path), timeout: .seconds(600))
        guard response.status == .ok else {
            try handle.close()
            throw HarnessError("AHC: \(path) answered \(response.status)")
        }
        for try await chunk in response.body {
            try chunk.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
        }
        try handle.close()
        return try Self.sizeAndRemove(destination)
    }

    /// Downloads `path` with Kite to a new file and returns its size; the file is removed.
    func kiteDownload(_ path: String) async throws -> Int64 {
        let destination = self.scratchFile("kite-download")
        let fileURL = try await self.kite
            .download(self.url(path), to: { _, _ in (destination, []) })
            .validate()
            .serializingDownloadedFileURL()
            .value
        return try Self.sizeAndRemove(fileURL)
    }

    /// Downloads `path` with AHC's own `FileDownloadDelegate` and returns the file's size; the file
    /// is removed.
    func ahcDownload(_ path: String) async throws -> Int64 {
        let destination = self.scratchFile("ahc-download")
        let request = try HTTPClient.Request(url: self.url(path), headers: self.defaultHeaders)
        let delegate = try FileDownloadDelegate(path: destination.path)
        let progress = try await self.ahc.execute(request: request, delegate: delegate).futureResult.get()
        guard progress.head.status == .ok else {
            throw HarnessError("AHC: \(path) answered \(progress.head.status)")
        }
        return try Self.sizeAndRemove(destination)
    }

    /// Downloads `path` with URLSession's download task and returns the file's size; the file is
    /// removed.
    func urlSessionDownload(_ path: String) async throws -> Int64 {
        let (fileURL, response) = try await self.urlSession.download(for: self.urlRequest(path))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw HarnessError("URLSession: \(path) did not answer 200")
        }
        return try Self.sizeAndRemove(fileURL)
    }

    /// Downloads `path` with `curl -o` in a child process and returns the file's size; the file is
    /// removed.
    func curlDownload(_ path: String) async throws -> Int64 {
        let destination = self.scratchFile("curl-download")
        _ = try await Self.runProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["curl", "--silent", "--show-error", "--fail", "-o", destination.path, self.url(path)]
        )
        return try Self.sizeAndRemove(destination)
    }

    /// Runs `executable` to its end and returns what it wrote to standard output.
    ///
    /// - Throws: ``HarnessError`` when it exits with a status other than 0.
    static func runProcess(
        _ executable: URL,
        arguments: [String],
        environment: [String: String]? = nil
    ) async throws -> Data {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment {
            process.environment = environment
        }
        let output = Pipe()
        process.standardOutput = output
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { process in
                if process.terminationStatus == 0 {
                    continuation.resume()
                } else {
                    let name = arguments.first ?? executable.lastPathComponent
                    continuation.resume(throwing: HarnessError("\(name) exited with \(process.terminationStatus)"))
                }
            }
            do {
                try process.run()
            } catch {
                continuation.resume(throwing: error)
            }
        }
        return try output.fileHandleForReading.readToEnd() ?? Data()
    }

    static func sizeAndRemove(_ fileURL: URL) throws -> Int64 {
        let size = try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? Int64 ?? -1
        try FileManager.default.removeItem(at: fileURL)
        return size
    }

    // MARK: Multipart upload from a file

    /// The upload's answer from `/upload`: the length the server read for the one part.
    struct UploadReceipt: Decodable, Sendable {
        struct Part: Decodable, Sendable {
            let name: String?
            let length: Int64
        }
        let length: Int64
        let contentLength: Int64?
        let parts: [Part]?

        /// The length of the single part, checked against the request's `Content-Length`.
        func partLength() throws -> Int64 {
            guard let parts, parts.count == 1, contentLength == length else {
                throw HarnessError("unexpected upload receipt: \(self)")
            }
            return parts[0].length
        }
    }

    /// Uploads `fileURL` with `client` as the multipart part `file`; returns the length the server read.
    func upload(_ fileURL: URL, with client: Client) async throws -> Int64 {
        switch client {
        case .kite: return try await self.kiteUpload(fileURL)
        case .ahc: return try await self.ahcUpload(fileURL)
        case .ahcInTask, .urlSession: throw HarnessError("case 5 has no \(client.rawValue) client")
        }
    }

    /// Uploads `fileURL` with Kite as the multipart part `file`; returns the length the server read.
    func kiteUpload(_ fileURL: URL) async throws -> Int64 {
        var form = MultipartFormData()
        form.append(fileURL, withName: "file", fileName: "big.bin", mimeType: "application/octet-stream")
        return try await self.kite.upload(multipartFormData: form, to: self.url("/upload"))
            .validate()
            .serializingDecodable(UploadReceipt.self)
            .value
            .partLength()
    }

    /// Uploads `fileURL` with raw AHC as the multipart part `file`, framed by hand and streamed with
    /// NIOFileSystem; returns the length the server read.
    func ahcUpload(_ fileURL: URL) async throws -> Int64 {
        let boundary = "ahc.boundary.0123456789abcdef"
        let head = ByteBuffer(
            string: "--\(boundary)\r\n"
                + "Content-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n"
        )
        let tail = ByteBuffer(string: "\r\n--\(boundary)--\r\n")
        return try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(fileURL.path)) { file in
            let size = try await file.info().size
            var request = self.ahcRequest("/upload", method: .POST)
            request.headers.replaceOrAdd(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)")
            let chunks = FramedChunks(
                head: head,
                body: file.readChunks(in: 0..<size, chunkLength: .kibibytes(64)),
                tail: tail
            )
            request.body = .stream(chunks, length: .known(Int64(head.readableBytes + tail.readableBytes) + size))
            let response = try await self.ahc.execute(request, timeout: .seconds(600))
            guard response.status == .ok else {
                throw HarnessError("AHC: /upload answered \(response.status)")
            }
            let body = try await response.body.collect(upTo: 1 << 20)
            return try JSONDecoder().decode(UploadReceipt.self, from: Data(buffer: body)).partLength()
        }
    }
}

/// `head`, then every chunk of `body`, then `tail`.
struct FramedChunks<Body: AsyncSequence & Sendable>: AsyncSequence, Sendable where Body.Element == ByteBuffer {
    let head: ByteBuffer
    let body: Body
    let tail: ByteBuffer

    struct AsyncIterator: AsyncIteratorProtocol {
        var head: ByteBuffer?
        var body: Body.AsyncIterator
        var tail: ByteBuffer?

        mutating func next() async throws -> ByteBuffer? {
            if let head = self.head {
                self.head = nil
                return head
            }
            if let chunk = try await self.body.next() {
                return chunk
            }
            defer { self.tail = nil }
            return self.tail
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(head: self.head, body: self.body.makeAsyncIterator(), tail: self.tail)
    }
}
