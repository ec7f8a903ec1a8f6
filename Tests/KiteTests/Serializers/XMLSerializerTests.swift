#if canImport(FoundationXML)
import Dispatch
import Foundation
import FoundationXML
import Kite
import NIOConcurrencyHelpers
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct XMLSerializerTests {
    private let get = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/")

    private func response(_ code: Int = 200, contentType: String? = "application/xml") -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    /// Made for each use: a `Data` in a global is reported leaked by LeakSanitizer (its storage pointer carries
    /// Swift's enum tag in its spare bits, llvm/llvm-project#56751).
    private static var document: Data { Data(#"<r a="1"><b>x</b><c/></r>"#.utf8) }

    // MARK: Acceptance

    @Test(arguments: ["application/xml", "text/xml", "application/xml; charset=utf-8"])
    func xmlContentTypesAreAcceptedByDefault(contentType: String) throws {
        let response = self.response(contentType: contentType)
        let source = try XMLDocumentResponseSerializer()
            .serialize(request: self.get, response: response, data: Self.document, error: nil)
        #expect(source.data == Self.document)
        #expect(try source.makeDocument().rootElement()?.name == "r")
        let parserSource = try XMLParserResponseSerializer()
            .serialize(request: self.get, response: response, data: Self.document, error: nil)
        #expect(parserSource.data == Self.document)
    }

    @Test func htmlIsRefusedByDefaultAndTheErrorCarriesTheBody() {
        let body = Data("<html><body>oops</body></html>".utf8)
        for serializer in [
            { try XMLDocumentResponseSerializer().serialize(request: self.get, response: $0, data: body, error: nil) },
            { try XMLParserResponseSerializer().serialize(request: self.get, response: $0, data: body, error: nil) },
        ] as [(HTTPResponse) throws -> any Sendable] {
            #expect {
                _ = try serializer(self.response(contentType: "text/html"))
            } throws: { error in
                let error = error as? KiteError
                return error?.code == .responseValidationFailed && error?.responseBody == body
                    && error?.response?.headerFields[.contentType] == "text/html"
            }
        }
    }

    @Test func aServerErrorIsRefusedByDefault() {
        #expect {
            try XMLDocumentResponseSerializer()
                .serialize(request: self.get, response: self.response(500), data: Self.document, error: nil)
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseValidationFailed
                && error?.message == "response status 500 is not acceptable (200..<300)"
                && error?.responseBody == Self.document
        }
    }

    @Test func anyAcceptanceAcceptsEveryStatusAndType() throws {
        let serializer = XMLDocumentResponseSerializer(acceptance: .any)
        for response in [self.response(500), self.response(contentType: "text/html"), self.response(contentType: nil)] {
            let source = try serializer.serialize(
                request: self.get,
                response: response,
                data: Self.document,
                error: nil
            )
            #expect(source.data == Self.document)
        }
    }

    @Test func anEmpty204IsAnEmptySourceAndAnEmpty200IsAnError() throws {
        let source = try XMLDocumentResponseSerializer()
            .serialize(request: self.get, response: self.response(204, contentType: nil), data: nil, error: nil)
        #expect(source.data.isEmpty)
        #expect(try source.makeDocument().rootElement() == nil)
        #expect(try source.responseObject() == nil)
        let parserSource = try XMLParserResponseSerializer()
            .serialize(request: self.get, response: self.response(204, contentType: nil), data: Data(), error: nil)
        #expect(parserSource.responseObject() == nil)
        try parserSource.parse(delegate: EventRecorder())

        #expect {
            try XMLDocumentResponseSerializer()
                .serialize(request: self.get, response: self.response(200), data: Data(), error: nil)
        } throws: { error in
            (error as? KiteError)?.message
                == "the response body is empty (status 200), so it cannot be serialized as XMLDocument"
        }
    }

    @Test func theRequestErrorIsRethrown() {
        let failure = KiteError(code: .connectionFailed, message: "refused")
        #expect {
            try XMLDocumentResponseSerializer().serialize(request: self.get, response: nil, data: nil, error: failure)
        } throws: { error in
            (error as? KiteError)?.code == .connectionFailed
        }
    }

    // MARK: Documents end to end

    @Test(arguments: Backend.available)
    func aWellFormedDocumentIsParsedEndToEnd(backend: Backend) async throws {
        let url = try await backend.url("/xml")
        let document = try await Session.suite.request(url).serializingXMLDocument(acceptance: .xml).value
        let root = try #require(document.rootElement())
        #expect(root.name == "slideshow")
        #expect(root.attribute(forName: "title")?.stringValue == "Sample Slide Show")
        let titles = try document.nodes(forXPath: "//slide/title").map { $0.stringValue ?? "" }
        #expect(titles == ["Wake up to WonderWidgets!", "Overview"])

        let task = Session.suite.request(url).serializingXMLDocument()
        let response = await task.response
        #expect(response.response?.status.code == 200)
        #expect(response.value?.data == response.data)
        let first = try await task.value
        let second = try await task.value
        #expect(first !== second)  // each read parses a new document
    }

    @MainActor
    @Test func aDocumentCanBeAwaitedOnTheMainActor() async throws {
        let url = try await Backend.inProcess.url("/xml")
        let document = try await Session.suite.request(url).serializingXMLDocument().value
        #expect(document.rootElement()?.name == "slideshow")
        let result = await Session.suite.request(url).serializingXMLDocument().result
        #expect((try? result.get())?.rootElement()?.elements(forName: "slide").count == 2)
    }

    @Test func responseXMLDocumentParsesOnTheGivenQueue() async throws {
        let url = try await Backend.inProcess.url("/xml")
        let queue = DispatchQueue(label: "kite.tests.xml-document")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let (rootName, onQueue) = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseXMLDocument(queue: queue, acceptance: .xml) { response in
                continuation.resume(
                    returning: (response.value?.rootElement()?.name, DispatchQueue.getSpecific(key: key) == 7)
                )
            }
        }
        #expect(rootName == "slideshow")
        #expect(onQueue)
    }

    @Test func anHTMLResponseIsRefusedWithXMLAcceptance() async throws {
        let url = try await Backend.inProcess.url("/html")
        let response = await Session.suite.request(url).serializingXMLDocument(acceptance: .xml).response
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.responseBody == response.data)
    }

    // MARK: Malformed XML

    @Test(
        arguments: [
            ("<root>\n  <item a=1/>\n</root>\n", "attribute value not quoted (\" or ' expected) at line 2, column 11"),
            ("<root>\n  <item></itm>\n</root>\n", "opening and ending tag mismatch at line 2, column 15"),
            (
                "<root>\n  <item>&nope;</item>\n</root>\n",
                "reference to an undeclared entity (external entities and DTDs are never loaded) at line 2, column 15"
            ),
            ("    ", "the document has no root element at line 1, column 5"),
            ("<r>\u{FFFF}</r>", "invalid character or byte sequence for the document's encoding at line 1, column 4"),
        ]
    )
    func malformedXMLNamesTheReasonLineAndColumn(body: String, expected: String) {
        let source = XMLDocumentSource(data: Data(body.utf8))
        #expect {
            try source.makeDocument()
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message == "the body is not well-formed XML: \(expected)"
        }
        #expect {
            try XMLParserSource(data: Data(body.utf8)).parse(delegate: EventRecorder())
        } throws: { error in
            (error as? KiteError)?.message == "the body is not well-formed XML: \(expected)"
        }
    }

    @Test func aMalformedResponseNamesTheRequestLineAndColumn() async throws {
        let url = try await Backend.inProcess.url("/base64/\(Self.base64URL("<root>\n  <item a=1/>\n</root>\n"))")
        let result = await Session.suite.request(url).serializingXMLDocument().result
        guard case .failure(let error) = result else {
            Issue.record("a malformed body parsed")
            return
        }
        #expect(
            error.description
                == "GET \(url) failed: the body is not well-formed XML: attribute value not quoted (\" or ' expected)"
                + " at line 2, column 11"
        )
        #expect(error.response?.status.code == 200)
    }

    @Test func bodiesShorterThanFourBytesAreRefused() {
        // corelibs' XMLParser reports success for them without reading them.
        #expect {
            try XMLDocumentSource(data: Data("<r>".utf8)).makeDocument()
        } throws: { error in
            (error as? KiteError)?.message
                == "the body is not well-formed XML: 3 bytes are too few for a root element (the shortest document, <a/>, has 4)"
        }
    }

    @Test func warningsDoNotFailTheParse() throws {
        // libxml2 warns about XML 1.1 and relative namespace URIs; the document is still well-formed.
        let document = try XMLDocumentSource(data: Data(#"<?xml version="1.1"?><r xmlns="relative"/>"#.utf8))
            .makeDocument()
        #expect(document.rootElement()?.localName == "r")
    }

    // MARK: XXE

    @Test func aFileEntityIsNeverRead() throws {
        let secret = try SecretFile()
        defer { secret.remove() }
        let body = Data(#"<!DOCTYPE r [<!ENTITY x SYSTEM "\#(secret.url)">]><r>&x;</r>"#.utf8)

        // The control: corelibs' XMLDocument with its default options reads the file.
        #expect(try XMLDocument(data: body, options: []).rootElement()?.stringValue == secret.contents)

        for options: XMLNode.Options in [
            [], .nodeLoadExternalEntitiesAlways, .nodeLoadExternalEntitiesSameOriginOnly, .nodePreserveAll,
        ] {
            let document = try XMLDocumentSource(data: body, options: options).makeDocument()
            // The reference stays unexpanded: no text, and the serialized document shows `&x;`.
            #expect(document.rootElement()?.stringValue == "")
            #expect(document.rootElement()?.xmlString == "<r>&x;</r>")
            #expect(!document.xmlString.contains(secret.contents))
        }
        let recorder = EventRecorder()
        try XMLParserSource(data: body).parse(delegate: recorder)
        #expect(recorder.events == ["startDocument", "start r", "end r", "endDocument"])

        let parser = XMLParserSource(data: body).makeParser()
        let plain = EventRecorder()
        parser.delegate = plain
        #expect(parser.parse())
        #expect(!plain.events.joined().contains(secret.contents))
    }

    @Test func aFileEntityIsNeverReadThroughARequest() async throws {
        let secret = try SecretFile()
        defer { secret.remove() }
        let body = #"<!DOCTYPE r [<!ENTITY x SYSTEM "\#(secret.url)">]><r>&x;</r>"#
        let url = try await Backend.inProcess.url("/base64/\(Self.base64URL(body))")
        let document = try await Session.suite.request(url).serializingXMLDocument().value
        #expect(document.rootElement()?.stringValue == "")
        #expect(!document.xmlString.contains(secret.contents))

        let events = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseXMLParser(delegate: EventRecorder()) { response in
                continuation.resume(returning: response.delegate.events)
            }
        }
        #expect(events == ["startDocument", "start r", "end r", "endDocument"])
    }

    @Test func anHTTPEntityIsNeverFetched() throws {
        let listener = try ConnectionCounter()
        defer { listener.stop() }
        let body = Data(#"<!DOCTYPE r [<!ENTITY x SYSTEM "http://127.0.0.1:\#(listener.port)/x">]><r>&x;</r>"#.utf8)

        // The control: corelibs' XMLDocument with its default options fetches it. The listener counts a
        // connection before closing it, and the parse returns only after the close, so no wait is needed.
        _ = try? XMLDocument(data: body, options: [])
        #expect(listener.count == 1)

        for options: XMLNode.Options in [[], .nodeLoadExternalEntitiesAlways, .nodeLoadExternalEntitiesSameOriginOnly] {
            let document = try XMLDocumentSource(data: body, options: options).makeDocument()
            #expect(document.rootElement()?.xmlString == "<r>&x;</r>")
        }
        try XMLParserSource(data: body).parse(delegate: EventRecorder())
        #expect(XMLParserSource(data: body).makeParser().parse())
        #expect(listener.count == 1)
    }

    @Test func anExternalDTDIsNeverFetched() throws {
        let listener = try ConnectionCounter()
        defer { listener.stop() }
        let body = Data(#"<!DOCTYPE r SYSTEM "http://127.0.0.1:\#(listener.port)/dtd"><r>a</r>"#.utf8)

        for options: XMLNode.Options in [[], .nodeLoadExternalEntitiesAlways, .nodePreserveAll] {
            let document = try XMLDocumentSource(data: body, options: options).makeDocument()
            #expect(document.rootElement()?.stringValue == "a")
        }
        let recorder = EventRecorder()
        try XMLParserSource(data: body).parse(delegate: recorder)
        #expect(recorder.events == ["startDocument", "start r", "chars a", "end r", "endDocument"])
        #expect(listener.count == 0)
    }

    @Test func anExternalParameterEntityIsNeverFetchedAndFailsTheParse() throws {
        let listener = try ConnectionCounter()
        defer { listener.stop() }
        let declaration = #"<!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:\#(listener.port)/p"> %p;"#
        let body = Data((declaration + "]><r>a</r>").utf8)
        // libxml2 reports the error just after the reference `%p;`.
        let expected =
            "the body is not well-formed XML: reference to an undeclared entity (external entities and DTDs"
            + " are never loaded) at line 1, column \(declaration.utf8.count + 1)"
        for options: XMLNode.Options in [[], .nodeLoadExternalEntitiesAlways] {
            #expect {
                try XMLDocumentSource(data: body, options: options).makeDocument()
            } throws: { error in
                (error as? KiteError)?.message == expected
            }
        }
        #expect(throws: KiteError.self) { try XMLParserSource(data: body).parse(delegate: EventRecorder()) }
        #expect(listener.count == 0)
    }

    @Test func validationIsRefusedBecauseItWouldFetchTheDTD() throws {
        let listener = try ConnectionCounter()
        defer { listener.stop() }
        let body = Data(#"<!DOCTYPE r SYSTEM "http://127.0.0.1:\#(listener.port)/dtd"><r>a</r>"#.utf8)
        let expected =
            "XMLNode.Options.documentValidate is not supported: validating would load the external DTD"
            + " that the body names; parse without it"
        #expect {
            try XMLDocumentSource(data: body, options: .documentValidate).makeDocument()
        } throws: { error in
            (error as? KiteError)?.code == .responseSerializationFailed && (error as? KiteError)?.message == expected
        }
        #expect {
            try XMLDocumentResponseSerializer(options: .documentValidate)
                .serialize(request: self.get, response: self.response(), data: body, error: nil)
        } throws: { error in
            (error as? KiteError)?.message == expected
        }
        #expect(listener.count == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func billionLaughsFailsInsteadOfExpanding() {
        var body = #"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">"#
        body += "<!ENTITY lol1 \"\(String(repeating: "&lol;", count: 10))\">"
        for level in 2...9 {
            body += "<!ENTITY lol\(level) \"\(String(repeating: "&lol\(level - 1);", count: 10))\">"
        }
        body += "]><lolz>&lol9;</lolz>"
        let data = Data(body.utf8)
        let expected = "the body is not well-formed XML: entity reference loop or excessive entity expansion at line 1"
        #expect {
            try XMLDocumentSource(data: data).makeDocument()
        } throws: { error in
            (error as? KiteError)?.message.hasPrefix(expected) == true
        }
        #expect {
            try XMLParserSource(data: data).parse(delegate: EventRecorder())
        } throws: { error in
            (error as? KiteError)?.message.hasPrefix(expected) == true
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func repeatedInternalEntitiesStayReferencesInTheTree() throws {
        // libxml2 2.9 does not limit a large entity referenced many times (quadratic blowup); Kite's tree keeps
        // the references, so parsing stays proportional to the body. Only `stringValue` of an ancestor expands.
        let entity = String(repeating: "x", count: 10_000)
        let body = #"<!DOCTYPE r [<!ENTITY a "\#(entity)">]><r>\#(String(repeating: "&a;", count: 1_000))</r>"#
        let root = try #require(try XMLDocumentSource(data: Data(body.utf8)).makeDocument().rootElement())
        #expect(root.childCount == 1_000)
        #expect(root.children?.first?.xmlString == "&a;")
        #expect(root.children?.first?.stringValue == entity)
    }

    // MARK: Event-driven parsing

    @Test(arguments: Backend.available)
    func responseXMLParserDeliversEventsInOrderOnTheGivenQueue(backend: Backend) async throws {
        let url = try await backend.url("/base64/\(Self.base64URL(#"<r a="1"><b>x</b><!--c--><c/></r>"#))")
        let queue = DispatchQueue(label: "kite.tests.xml-parser")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let (events, offQueue, handlerOnQueue, result) = await withCheckedContinuation { continuation in
            Session.suite.request(url)
                .responseXMLParser(queue: queue, delegate: EventRecorder(key: key)) { response in
                    continuation.resume(
                        returning: (
                            response.delegate.events, response.delegate.offQueue,
                            DispatchQueue.getSpecific(key: key) == 7, response.result
                        )
                    )
                }
        }
        #expect(
            events == [
                "startDocument", "start r a=1", "start b", "chars x", "end b", "comment c", "start c", "end c", "end r",
                "endDocument",
            ]
        )
        #expect(offQueue == 0)
        #expect(handlerOnQueue)
        #expect((try? result.get()) != nil)
    }

    @Test func responseXMLParserStopsAtTheFirstError() async throws {
        let url = try await Backend.inProcess.url("/base64/\(Self.base64URL("<r>\n<a>x</b>\n<c/></r>"))")
        let (events, error) = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseXMLParser(delegate: EventRecorder()) { response in
                continuation.resume(returning: (response.delegate.events, response.error))
            }
        }
        #expect(events == ["startDocument", "start r", "chars \n", "start a", "chars x", "error 76"])
        #expect(error?.code == .responseSerializationFailed)
        #expect(
            error?.description
                == "GET \(url) failed: the body is not well-formed XML: opening and ending tag mismatch at line 2, column 9"
        )
    }

    @Test func responseXMLParserDoesNotParseARefusedResponse() async throws {
        let url = try await Backend.inProcess.url("/html")
        let (events, error) = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseXMLParser(acceptance: .xml, delegate: EventRecorder()) { response in
                continuation.resume(returning: (response.delegate.events, response.error))
            }
        }
        #expect(events.isEmpty)
        #expect(error?.code == .responseValidationFailed)
    }

    @Test func serializingXMLParserGivesASecuredParser() async throws {
        let url = try await Backend.inProcess.url("/xml")
        let parser = try await Session.suite.request(url).serializingXMLParser(acceptance: .xml).value
        #expect(!parser.shouldResolveExternalEntities)
        #expect(parser.externalEntityResolvingPolicy == .never)
        let recorder = EventRecorder()
        parser.delegate = recorder
        #expect(parser.parse())
        #expect(recorder.events.first == "startDocument")
        #expect(
            recorder.events.contains(
                "start slideshow author=Yours Truly date=Date of publication title=Sample Slide Show"
            )
        )
    }

    // MARK: Response objects

    @Test func responseObjectsAreADocumentAndASecuredParser() throws {
        let document = try XMLDocumentSource(data: Self.document).responseObject() as? XMLDocument
        #expect(document?.rootElement()?.attribute(forName: "a")?.stringValue == "1")
        #expect {
            try XMLDocumentSource(data: Data("<r>".utf8) + Data("</s>".utf8)).responseObject()
        } throws: { error in
            (error as? KiteError)?.code == .responseSerializationFailed
        }

        let parser = try #require(XMLParserSource(data: Self.document).responseObject() as? XMLParser)
        #expect(parser.shouldResolveExternalEntities == false)
        #expect(parser.externalEntityResolvingPolicy == .never)
        let recorder = EventRecorder()
        parser.delegate = recorder
        #expect(parser.parse())
        #expect(
            recorder.events == [
                "startDocument", "start r a=1", "start b", "chars x", "end b", "start c", "end c", "end r",
                "endDocument",
            ]
        )
    }

    // MARK: Support

    /// httpbin's `/base64/{value}` takes URL-safe base64 and answers with the decoded text as `text/html`.
    private static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
    }
}

/// Records parser events as short strings, and how many arrived off the queue marked with `key`.
private final class EventRecorder: XMLParserDelegate {
    private(set) var events: [String] = []
    private(set) var offQueue = 0
    private let key: DispatchSpecificKey<Int>?

    init(key: DispatchSpecificKey<Int>? = nil) {
        self.key = key
    }

    private func record(_ event: String) {
        if let key, DispatchQueue.getSpecific(key: key) != 7 { self.offQueue += 1 }
        self.events.append(event)
    }

    func parserDidStartDocument(_ parser: XMLParser) { self.record("startDocument") }
    func parserDidEndDocument(_ parser: XMLParser) { self.record("endDocument") }
    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes attributeDict: [String: String]
    ) {
        let attributes = attributeDict.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        self.record("start \(elementName)\(attributes)")
    }
    func parser(
        _ parser: XMLParser,
        didEndElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        self.record("end \(elementName)")
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) { self.record("chars \(string)") }
    func parser(_ parser: XMLParser, foundComment comment: String) { self.record("comment \(comment)") }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        self.record("error \((parseError as NSError).code)")
    }
}

/// A file holding a random secret, for XXE tests.
private struct SecretFile {
    let url: URL
    let contents = "kite-secret-\(UUID().uuidString)"

    init() throws {
        self.url = URL(fileURLWithPath: "/tmp/kite-xxe-secret-\(UUID().uuidString).txt")
        try Data(self.contents.utf8).write(to: self.url)
    }

    func remove() {
        try? FileManager.default.removeItem(at: self.url)
    }
}

/// A loopback listener that counts connections. Each is accepted, counted, then closed, so a client whose
/// fetch has returned was counted before it returned: no waiting is needed to read ``count``.
private final class ConnectionCounter: Sendable {
    let port: Int
    private let descriptor: Int32
    private let accepted = NIOLockedValueBox(0)

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in self.acceptUntilStopped() }
    }

    /// Connections accepted so far.
    var count: Int { self.accepted.withLockedValue { $0 } }

    /// Wakes the accepting thread, which closes the socket.
    func stop() {
        shutdown(self.descriptor, Int32(SHUT_RDWR))
    }

    private func acceptUntilStopped() {
        while true {
            let connection = accept(self.descriptor, nil, nil)
            guard connection >= 0 else { break }
            self.accepted.withLockedValue { $0 += 1 }
            close(connection)
        }
        close(self.descriptor)
    }
}
#endif
