import Foundation
import HTTPTypes
import Kite
import KiteOpenAPI
import NIOConcurrencyHelpers
import OpenAPIRuntime
import Testing

extension Session {
    /// The session these tests share where any session will do, with room for Swift Testing's parallel tests.
    static let openAPISuite: Session = {
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        return Session(configuration: configuration)
    }()
}

extension Backend {
    /// The generated client on `KiteClientTransport`, against this backend.
    func client(
        session: Session = .openAPISuite,
        credential: Credential? = nil,
        middlewares: [any ClientMiddleware] = []
    ) async throws -> Client {
        Client(
            serverURL: try #require(URL(string: try await self.baseURL())),
            transport: KiteClientTransport(session: session, credential: credential),
            middlewares: middlewares
        )
    }
}

/// The `KiteError` a generated client's call threw, from inside the runtime's `ClientError`.
func kiteError(of error: any Error) -> KiteError? {
    (error as? KiteError) ?? ((error as? ClientError)?.underlyingError as? KiteError)
}

/// Runs `operation`, failing with `timedOut` if it takes longer than `limit`: a bound, not a synchronisation.
func within<T: Sendable>(
    _ limit: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw KiteError(code: .timedOut, message: "the operation took longer than \(limit)")
        }
        return value
    }
}

/// A body in chunks that counts how often it was iterated and can hold back its end until released.
final class CountingBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let chunks: [String]
    let holdsEnd: Bool
    private let state = NIOLockedValueBox((iterations: 0, pulled: 0))
    let pulledAll: AsyncStream<Void>
    private let pulledAllContinuation: AsyncStream<Void>.Continuation

    init(_ chunks: [String], holdsEnd: Bool = false) {
        self.chunks = chunks
        self.holdsEnd = holdsEnd
        (self.pulledAll, self.pulledAllContinuation) = AsyncStream.makeStream()
    }

    var iterations: Int { self.state.withLockedValue { $0.iterations } }

    struct AsyncIterator: AsyncIteratorProtocol {
        let body: CountingBody
        var index = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            defer { self.index += 1 }
            if self.index < self.body.chunks.count {
                return ArraySlice(self.body.chunks[self.index].utf8)
            }
            self.body.pulledAllContinuation.yield()
            if self.body.holdsEnd {
                // Never ends on its own: only cancellation stops it.
                try await Task.sleep(for: .seconds(3600))
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        self.state.withLockedValue { $0.iterations += 1 }
        return AsyncIterator(body: self)
    }

    var byteCount: Int { self.chunks.reduce(0) { $0 + $1.utf8.count } }
}
