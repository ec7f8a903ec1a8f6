import Foundation
import HTTPTypes

@testable import KiteUnderFuzz

#if canImport(FoundationXML)
import FoundationXML
#endif

extension FuzzTarget {
    /// Text bodies (`StringResponseSerializer`): the input's first line is the `Content-Type`, the rest the body.
    /// A string or a `responseSerializationFailed` error; a UTF-8 body the charset says is UTF-8 reads as
    /// itself; the charset's name for messages reads back as the same encoding.
    static func fuzzCharset(_ input: [UInt8]) {
        let split = input.firstIndex(of: UInt8(ascii: "\n")) ?? input.endIndex
        let contentType = String(decoding: input[..<split], as: UTF8.self)
        let body = Data(input[split...].dropFirst())
        _ = Charset.encoding(forContentType: contentType)
        var fields = HTTPFields()
        if let field = try? HTTPField(validatingName: "Content-Type", value: contentType) {
            fields.append(field)
        }
        // The field as the response holds it: swift-http-types turns control characters but tab into spaces.
        let encoding = Charset.encoding(forContentType: fields[.contentType])
        require(
            Charset.encoding(named: Charset.name(of: encoding)) == encoding,
            "\(encoding) is named \(Charset.name(of: encoding)), which reads as another encoding"
        )
        let response = HTTPResponse(status: .ok, headerFields: fields)
        do {
            let text = try StringResponseSerializer().serialize(
                request: nil,
                response: response,
                data: body,
                error: nil
            )
            if fields[.contentType] != nil, encoding == .utf8, let utf8 = String(validating: body, as: UTF8.self) {
                require(text == utf8, "a UTF-8 body read as \(String(reflecting: text))")
            }
        } catch let error as KiteError {
            require(error.code == .responseSerializationFailed, "failed with \(error.code): \(error.message)")
        } catch {
            require(false, "failed with \(error), not a KiteError")
        }
    }

    /// Property lists (XML, binary, OpenStep) through `PropertyListResponseSerializer`: a value or a
    /// `responseSerializationFailed` error; a value written as a binary property list reads back as itself.
    static func fuzzPropertyList(_ input: [UInt8]) {
        let response = HTTPResponse(status: .ok, headerFields: [.contentType: "application/x-plist"])
        let value: PropertyListValue
        do {
            value = try PropertyListResponseSerializer().serialize(
                request: nil,
                response: response,
                data: Data(input),
                error: nil
            )
        } catch let error as KiteError {
            require(error.code == .responseSerializationFailed, "failed with \(error.code): \(error.message)")
            return
        } catch {
            require(false, "failed with \(error), not a KiteError")
            return
        }
        // NaN is not equal to itself; such a value cannot be compared.
        guard !Self.holdsNaN(value),
            let data = try? PropertyListSerialization.data(
                fromPropertyList: value.foundationObject,
                format: .binary,
                options: 0
            ),
            let object = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        else { return }
        let again = PropertyListValue(foundationObject: object)
        require(again == value, "\(value) written and read is \(String(describing: again))")
    }

    /// Whether `value` holds NaN, as a number or a date.
    private static func holdsNaN(_ value: PropertyListValue) -> Bool {
        switch value {
        case .double(let number): number.isNaN
        // A NaN date is not equal to itself either, and Foundation's `Date.description` traps on one.
        case .date(let date): !date.timeIntervalSinceReferenceDate.isFinite
        case .array(let elements): elements.contains(where: Self.holdsNaN)
        case .dictionary(let members): members.values.contains(where: Self.holdsNaN)
        default: false
        }
    }

    #if canImport(FoundationXML)
    /// A file whose contents must never appear in what Kite reads from XML (an external entity names it).
    static let secretFile: (path: String, contents: String) = {
        let path = "/tmp/kite-fuzz-xml-secret"
        let contents = "KITE-FUZZ-SECRET-5c1e"
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        return (path, contents)
    }()

    /// XML documents (`XMLDocumentResponseSerializer`'s `XMLSafety.document`): a document or a
    /// `responseSerializationFailed` error, never holding the contents of a file an external entity names
    /// (`file:///tmp/kite-fuzz-xml-secret` in the seeds).
    static func fuzzXMLDocument(_ input: [UInt8]) {
        let secret = Self.secretFile.contents
        do {
            let document = try XMLSafety.document(from: Data(input), options: [])
            require(!document.xmlString.contains(secret), "the document holds the file an entity names")
        } catch {
            require(error.code == .responseSerializationFailed, "failed with \(error.code): \(error.message)")
        }
    }

    /// XML events (`XMLParserResponseSerializer`'s `XMLSafety.run`): the parse ends or fails with
    /// `responseSerializationFailed`, and no text, attribute or name the delegate sees holds the contents of a
    /// file an external entity names.
    static func fuzzXMLParser(_ input: [UInt8]) {
        let secret = Self.secretFile.contents
        let recorder = XMLTextRecorder()
        do {
            try XMLSafety.run(Data(input), checker: XMLCheckingDelegate(forwardingTo: recorder))
        } catch {
            require(error.code == .responseSerializationFailed, "failed with \(error.code): \(error.message)")
        }
        require(!recorder.text.contains(secret), "the parser delivered the file an entity names")
    }
    #endif
}

#if canImport(FoundationXML)
/// Keeps everything an `XMLParser` delivers as text.
final class XMLTextRecorder: NSObject, XMLParserDelegate {
    var text = ""

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        self.text += elementName
        for (name, value) in attributes { self.text += name + value }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        self.text += string
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        self.text += String(decoding: CDATABlock, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, foundIgnorableWhitespace whitespaceString: String) {
        self.text += whitespaceString
    }

    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        nil
    }
}
#endif
