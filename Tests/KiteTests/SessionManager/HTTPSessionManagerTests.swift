import Dispatch
import Foundation
import HTTPTypes
import Testing

@testable import Kite

#if canImport(FoundationXML)
import FoundationXML
#endif

/// What a `success` or `failure` closure saw, in a `Sendable` form: the response object as canonical JSON
/// (sorted keys) when it is one, its type, the task, the error, and whether it ran on the expected queue.
struct ManagerOutcome: Sendable {
    var task: BaseRequest?
    var objectType: String?
    var objectJSON: String?
    var error: KiteError?
    var onExpectedQueue = false

    /// The member at `path` of the JSON object, as canonical JSON text.
    func json(_ path: String...) throws -> JSONValue {
        var value = try JSONDecoder().decode(JSONValue.self, from: Data(try #require(self.objectJSON).utf8))
        for key in path { value = try #require(value[key], "no \(key) in \(value)") }
        return value
    }
}

enum ManagerProbe {
    static let queueKey = DispatchSpecificKey<String>()

    /// A queue that tags itself, so closures can tell where they run.
    static func taggedQueue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: Self.queueKey, value: name)
        return queue
    }

    static func describe(_ object: Any?) -> (type: String?, json: String?) {
        guard let object else { return (nil, nil) }
        let type = String(describing: Swift.type(of: object))
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { return (type, nil) }
        return (type, String(decoding: data, as: UTF8.self))
    }

    /// Runs one closure-style call and waits for its `success` or `failure`.
    static func run<Task: BaseRequest>(
        expectingQueue queueName: String? = nil,
        _ start: (
            _ success: @escaping @Sendable (Task, Any?) -> Void,
            _ failure: @escaping @Sendable (Task?, KiteError) -> Void
        ) -> Task?
    ) async -> (returned: Bool, outcome: ManagerOutcome) {
        let returned = LockedBox(false)
        let outcome: ManagerOutcome = await withCheckedContinuation { continuation in
            let task = start(
                { task, object in
                    let (type, json) = Self.describe(object)
                    continuation.resume(
                        returning: ManagerOutcome(
                            task: task,
                            objectType: type,
                            objectJSON: json,
                            onExpectedQueue: queueName.map { DispatchQueue.getSpecific(key: Self.queueKey) == $0 }
                                ?? true
                        )
                    )
                },
                { task, error in
                    continuation.resume(
                        returning: ManagerOutcome(
                            task: task,
                            error: error,
                            onExpectedQueue: queueName.map { DispatchQueue.getSpecific(key: Self.queueKey) == $0 }
                                ?? true
                        )
                    )
                }
            )
            returned.set(task != nil)
        }
        return (returned.value, outcome)
    }
}

/// A lock-guarded value for tests.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { self.stored = value }

    var value: Value { self.lock.withLock { self.stored } }

    func set(_ value: Value) { self.lock.withLock { self.stored = value } }

    func update(_ body: (inout Value) -> Void) { self.lock.withLock { body(&self.stored) } }
}

@Suite struct HTTPSessionManagerTests {
    /// AFNetworking's documented table for `baseURL` `http://example.com/v1/`.
    @Test(arguments: [
        ("http://example.com/v1", "foo", "http://example.com/v1/foo"),
        ("http://example.com/v1/", "foo?bar=baz", "http://example.com/v1/foo?bar=baz"),
        ("http://example.com/v1", "/foo", "http://example.com/foo"),
        ("http://example.com/v1", "foo/", "http://example.com/v1/foo/"),
        ("http://example.com/v1", "/foo/", "http://example.com/foo/"),
        ("http://example.com/v1", "http://example2.com/", "http://example2.com/"),
        ("http://example.com", "foo", "http://example.com/foo"),
        ("http://example.com/v1/users", "../items", "http://example.com/v1/items"),
        ("http://example.com/v1", "", "http://example.com/v1/"),
    ])
    func relativePathsResolveAsAFNetworkingDocuments(base: String, path: String, expected: String) throws {
        let manager = HTTPSessionManager(baseURL: URL(string: base))
        #expect(manager.url(for: path)?.absoluteString == expected)
    }

    @Test func theBaseURLGetsATrailingSlashOnlyWhenItHasAPath() {
        #expect(HTTPSessionManager(baseURL: URL(string: "http://h/v1")).baseURL?.absoluteString == "http://h/v1/")
        #expect(HTTPSessionManager(baseURL: URL(string: "http://h/v1/")).baseURL?.absoluteString == "http://h/v1/")
        #expect(HTTPSessionManager(baseURL: URL(string: "http://h")).baseURL?.absoluteString == "http://h")
        #expect(HTTPSessionManager().baseURL == nil)
    }

    @Test(arguments: Backend.available)
    func getSendsParametersInTheQueryAndGivesFoundationJSON(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let queue = ManagerProbe.taggedQueue("manager.get")
        manager.completionQueue = queue
        let (returned, outcome) = await ManagerProbe.run(expectingQueue: "manager.get") { success, failure in
            manager.get(
                "get",
                parameters: ["q": "kite", "tags": ["a", "b"]],
                headers: ["X-Case": "get"],
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(returned)
        #expect(outcome.error == nil)
        #expect(outcome.onExpectedQueue)
        #expect(outcome.objectType?.hasPrefix("Dictionary") == true)
        #expect(try outcome.json("args", "q") == .string("kite"))
        #expect(try outcome.json("args", "tags[]") == .array([.string("a"), .string("b")]))
        #expect(try outcome.json("headers", "X-Case") == .string("get"))
        let url = try #require(outcome.task?.request?.url?.absoluteString)
        #expect(url == (try await backend.url("/get?q=kite&tags%5B%5D=a&tags%5B%5D=b")))
    }

    @Test(arguments: Backend.available)
    func headSucceedsWithTheTaskOnly(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let status: Int? = await withCheckedContinuation { continuation in
            manager.head(
                "get",
                parameters: ["a": "1"],
                headers: nil,
                success: { task in continuation.resume(returning: task.response?.status.code) },
                failure: { _, _ in continuation.resume(returning: nil) }
            )
        }
        #expect(status == 200)
    }

    @Test(arguments: Backend.available)
    func bodyVerbsSendAFormBodyAndDeleteUsesTheQuery(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        for verb in ["post", "put", "patch"] {
            let (_, outcome) = await ManagerProbe.run { success, failure in
                switch verb {
                case "post":
                    manager.post(
                        verb,
                        parameters: ["name": "Zoë", "flag": NSNull()],
                        headers: nil,
                        progress: nil,
                        success: success,
                        failure: failure
                    )
                case "put":
                    manager.put(
                        verb,
                        parameters: ["name": "Zoë", "flag": NSNull()],
                        headers: nil,
                        success: success,
                        failure: failure
                    )
                default:
                    manager.patch(
                        verb,
                        parameters: ["name": "Zoë", "flag": NSNull()],
                        headers: nil,
                        success: success,
                        failure: failure
                    )
                }
            }
            #expect(outcome.error == nil, "\(verb)")
            #expect(try outcome.json("form", "name") == .string("Zoë"), "\(verb)")
            // AFNetworking writes NSNull as a bare key: `flag&name=Zo%C3%AB`.
            #expect(try outcome.json("form", "flag") == .string(""), "\(verb)")
            #expect(
                try outcome.json("headers", "Content-Type")
                    == .string("application/x-www-form-urlencoded; charset=utf-8"),
                "\(verb)"
            )
            #expect(try outcome.json("args") == .object([:]), "\(verb)")
        }
        let (_, deleted) = await ManagerProbe.run { success, failure in
            manager.delete("delete", parameters: ["id": 7], headers: nil, success: success, failure: failure)
        }
        #expect(try deleted.json("args", "id") == .string("7"))
        #expect(try deleted.json("form") == .object([:]))
    }

    @Test(arguments: Backend.available)
    func theJSONRequestSerializerWritesJSONBodiesButKeepsGETInTheQuery(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        manager.requestSerializer = JSONRequestSerializer()
        let (_, posted) = await ManagerProbe.run { success, failure in
            manager.post(
                "post",
                parameters: ["n": 3, "list": [1, 2]],
                headers: nil,
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(try posted.json("json") == .object(["n": .int(3), "list": .array([.int(1), .int(2)])]))
        #expect(try posted.json("headers", "Content-Type") == .string("application/json"))
        let (_, got) = await ManagerProbe.run { success, failure in
            manager.get("get", parameters: ["n": 3], headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(try got.json("args", "n") == .string("3"))
    }

    @Test(arguments: Backend.available)
    func theMethodsInTheURIAreConfigurable(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        manager.requestSerializer.httpMethodsEncodingParametersInURI = ["GET", "HEAD"]
        let (_, deleted) = await ManagerProbe.run { success, failure in
            manager.delete("delete", parameters: ["id": 7], headers: nil, success: success, failure: failure)
        }
        #expect(try deleted.json("args") == .object([:]))
        #expect(try deleted.json("form", "id") == .string("7"))
    }

    @Test(arguments: Backend.available)
    func serializerHeadersApplyAndTheRequestsOwnWin(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        manager.requestSerializer.setValue("serializer", forHTTPHeaderField: "X-Client")
        manager.requestSerializer.setValue("kept", forHTTPHeaderField: "X-Kept")
        #expect(manager.requestSerializer.value(forHTTPHeaderField: "x-client") == "serializer")
        let (_, outcome) = await ManagerProbe.run { success, failure in
            manager.get(
                "headers",
                parameters: nil,
                headers: ["x-client": "call"],
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(try outcome.json("headers", "X-Client") == .string("call"))
        #expect(try outcome.json("headers", "X-Kept") == .string("kept"))
    }

    @Test(arguments: Backend.available)
    func basicAuthorizationIsSetAndCleared(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        manager.requestSerializer.setAuthorizationHeaderField(username: "user", password: "pa:ss")
        #expect(manager.requestSerializer.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpwYTpzcw==")
        let (_, accepted) = await ManagerProbe.run { success, failure in
            manager.get(
                "basic-auth/user/pa:ss",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(try accepted.json("authenticated") == .bool(true))
        manager.requestSerializer.clearAuthorizationHeader()
        #expect(manager.requestSerializer.httpRequestHeaders.isEmpty)
        let (_, refused) = await ManagerProbe.run { success, failure in
            manager.get(
                "basic-auth/user/pa:ss",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(refused.error?.code == .responseValidationFailed)
        #expect(refused.error?.responseStatusCode == 401)
        #expect(refused.task != nil)
    }

    @Test(arguments: Backend.available)
    func anUnacceptableStatusFailsWithTheResponseAndBody(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let (_, outcome) = await ManagerProbe.run { success, failure in
            manager.get("status/418", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        let error = try #require(outcome.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.responseStatusCode == 418)
        #expect(error.message.hasPrefix("response status 418 is not acceptable (200..<300)"))
        let teapot = try await Session.suite.request(try await backend.url("/status/418")).serializingData().value
        #expect(error.responseBody == teapot)
        #expect(outcome.task?.response?.status.code == 418)
    }

    @Test(arguments: Backend.available)
    func anUnacceptableContentTypeFailsUntilTheTypeIsAdded(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let html = try await Session.suite.request(try await backend.url("/html")).serializingData().value
        let (_, refused) = await ManagerProbe.run { success, failure in
            manager.get("html", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(refused.error?.code == .responseValidationFailed)
        #expect(
            refused.error?.message
                == "response Content-Type \"text/html; charset=utf-8\" is not one of application/json, text/javascript, text/json"
        )
        #expect(refused.error?.responseBody == html)
        manager.responseSerializer.acceptableContentTypes?.insert("text/html")
        #expect(manager.responseSerializer.acceptableContentTypes?.contains("text/html") == true)
        let (_, parsed) = await ManagerProbe.run { success, failure in
            manager.get("html", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(parsed.error?.code == .responseSerializationFailed)
    }

    @Test(arguments: Backend.available)
    func otherResponseSerializersGiveTheirObjects(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        manager.responseSerializer = HTTPResponseSerializer()
        let bytes = Data("kite".utf8)
        let data: Data? = await withCheckedContinuation { continuation in
            manager.get(
                "base64/a2l0ZQ==",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: { _, object in continuation.resume(returning: object as? Data) },
                failure: { _, _ in continuation.resume(returning: nil) }
            )
        }
        #expect(data == bytes)
        manager.responseSerializer = ImageResponseSerializer()
        let image: ImageInfo? = await withCheckedContinuation { continuation in
            manager.get(
                "image/png",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: { _, object in continuation.resume(returning: object as? ImageInfo) },
                failure: { _, _ in continuation.resume(returning: nil) }
            )
        }
        #expect(image?.format == .png)
        manager.responseSerializer = XMLDocumentResponseSerializer()
        let root: String? = await withCheckedContinuation { continuation in
            manager.get(
                "xml",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: { _, object in
                    continuation.resume(returning: (object as? XMLDocument)?.rootElement()?.name)
                },
                failure: { _, error in continuation.resume(returning: "\(error)") }
            )
        }
        #expect(root == "slideshow")
        manager.responseSerializer = CompoundResponseSerializer([
            JSONResponseSerializer.serializer(), XMLParserResponseSerializer(),
        ])
        let parser: Bool = await withCheckedContinuation { continuation in
            manager.get(
                "xml",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: { _, object in
                    continuation.resume(returning: (object as? XMLParser)?.shouldResolveExternalEntities == false)
                },
                failure: { _, _ in continuation.resume(returning: false) }
            )
        }
        #expect(parser)
    }

    @Test(arguments: Backend.available)
    func multipartPostSendsParametersAsFieldsThenTheParts(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let progress = LockedBox<Int64>(0)
        let (returned, outcome) = await ManagerProbe.run { success, failure in
            manager.post(
                "post",
                parameters: ["user": ["name": "Zoë"], "n": 3],
                headers: nil,
                constructingBodyWith: { formData in
                    formData.append(Data("hello".utf8), withName: "file", fileName: "a.txt", mimeType: "text/plain")
                },
                progress: { step in progress.set(step.completedBytes) },
                success: success,
                failure: failure
            )
        }
        #expect(returned)
        #expect(outcome.error == nil)
        #expect(outcome.task is UploadRequest)
        #expect(try outcome.json("form", "user[name]") == .string("Zoë"))
        #expect(try outcome.json("form", "n") == .string("3"))
        #expect(try outcome.json("files", "file") == .string("hello"))
        let contentType = try outcome.json("headers", "Content-Type").stringValue ?? ""
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        #expect(progress.value > 0)
    }

    @Test func aRequestThatCannotBeMadeFailsWithoutATask() async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:9/v1"))
        let queue = ManagerProbe.taggedQueue("manager.invalid")
        manager.completionQueue = queue
        let (returned, badURL) = await ManagerProbe.run(expectingQueue: "manager.invalid") { success, failure in
            manager.get("http://[::1", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(!returned)
        #expect(badURL.task == nil)
        #expect(badURL.error?.code == .invalidURL)
        #expect(badURL.error?.message == "\"http://[::1\" is not a URL relative to http://127.0.0.1:9/v1/")
        #expect(badURL.onExpectedQueue)
        let (_, badHeader) = await ManagerProbe.run(expectingQueue: "manager.invalid") { success, failure in
            manager.get(
                "get",
                parameters: nil,
                headers: ["X-Evil": "a\r\nInjected: 1"],
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(badHeader.task == nil)
        #expect(badHeader.error?.code == .invalidHeader)
        let (_, badMethod) = await ManagerProbe.run { success, failure in
            manager.dataTask(
                withHTTPMethod: "GE T",
                URLString: "get",
                parameters: nil,
                headers: nil,
                uploadProgress: nil,
                downloadProgress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(badMethod.error?.code == .invalidRequest)
    }

    @Test(arguments: Backend.available)
    func theCompletionGroupHoldsEveryCompletion(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let group = DispatchGroup()
        manager.completionGroup = group
        manager.completionQueue = ManagerProbe.taggedQueue("manager.group")
        let finished = LockedBox<[String]>([])
        for index in 0..<3 {
            manager.get(
                "get",
                parameters: ["i": index],
                headers: nil,
                progress: nil,
                success: { _, _ in finished.update { $0.append("ok \(index)") } },
                failure: { _, error in finished.update { $0.append("failed \(index): \(error)") } }
            )
        }
        let seen: [String] = await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume(returning: finished.value) }
        }
        #expect(seen.sorted() == ["ok 0", "ok 1", "ok 2"])
    }

    @Test(arguments: Backend.available)
    func tasksAreListedUntilTheyFinishAndInvalidationCancelsThem(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let seenInFailure = LockedBox<Int>(-1)
        let error: KiteError? = await withCheckedContinuation { continuation in
            let task = manager.get(
                "delay/10",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: { _, _ in continuation.resume(returning: nil) },
                failure: { _, error in
                    seenInFailure.set(manager.tasks.count)
                    continuation.resume(returning: error)
                }
            )
            #expect(manager.tasks.count == 1)
            #expect(manager.dataTasks.first === task)
            #expect(manager.uploadTasks.isEmpty)
            #expect(manager.downloadTasks.isEmpty)
            manager.invalidateSessionCancelingTasks(true, resetSession: true)
        }
        #expect(error?.code == .cancelled)
        #expect(seenInFailure.value == 0)
        #expect(manager.tasks.isEmpty)
        let (_, afterReset) = await ManagerProbe.run { success, failure in
            manager.get("get", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(afterReset.error == nil)
        manager.invalidateSessionCancelingTasks(false, resetSession: false)
        let (returned, refused) = await ManagerProbe.run { success, failure in
            manager.get("get", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(!returned)
        #expect(refused.error?.code == .sessionShutDown)
    }

    @Test(arguments: Backend.available)
    func theAsyncFormsReturnTheTaskAndObject(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let (task, object) = try await manager.get("get", parameters: ["q": "async"])
        #expect(task.response?.status.code == 200)
        #expect(((object as? [String: Any])?["args"] as? [String: Any])?["q"] as? String == "async")
        let head = try await manager.head("get")
        #expect(head.response?.status.code == 200)
        for verb in ["post", "put", "patch", "delete"] {
            let result: (task: DataRequest, responseObject: Any?)
            switch verb {
            case "post": result = try await manager.post(verb, parameters: ["v": verb])
            case "put": result = try await manager.put(verb, parameters: ["v": verb])
            case "patch": result = try await manager.patch(verb, parameters: ["v": verb])
            default: result = try await manager.delete(verb, parameters: ["v": verb])
            }
            let echo = result.responseObject as? [String: Any]
            let where_ = verb == "delete" ? "args" : "form"
            #expect((echo?[where_] as? [String: Any])?["v"] as? String == verb, "\(verb)")
            #expect(result.task.request?.method.rawValue == verb.uppercased())
        }
        let (upload, uploaded) = try await manager.post("post", parameters: ["a": "1"]) { formData in
            formData.append(Data("x".utf8), withName: "f", fileName: "f.txt", mimeType: "text/plain")
        }
        #expect(upload.response?.status.code == 200)
        #expect(((uploaded as? [String: Any])?["files"] as? [String: Any])?["f"] as? String == "x")
        await #expect(throws: KiteError.self) { try await manager.get("status/500") }
        do {
            _ = try await manager.get("status/503")
            Issue.record("a 503 succeeded")
        } catch {
            #expect(error.code == .responseValidationFailed)
            #expect(error.responseStatusCode == 503)
        }
    }

    @Test(arguments: Backend.available)
    func cancellingTheAwaitingTaskCancelsTheRequest(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        let waiting = Task { try await manager.get("delay/10").task.response?.status.code }
        while manager.tasks.isEmpty { await Task.yield() }
        waiting.cancel()
        let result = await waiting.result
        #expect((result.error as? KiteError)?.code == .cancelled)
        #expect(manager.tasks.isEmpty)
    }

    @Test(arguments: Backend.available)
    func theRequestSerializerTimeoutApplies(backend: Backend) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await backend.baseURL()))
        manager.requestSerializer.timeoutInterval = 0.5
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try await manager.get("delay/10")
            Issue.record("a 10 s delay succeeded with a 0.5 s timeout")
        } catch {
            #expect(error.code == .timedOut)
        }
        // Far under the 10 s delay, with room for a loaded machine.
        #expect(start.duration(to: clock.now) < .seconds(8))
    }
}

extension Result {
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
