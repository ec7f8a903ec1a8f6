import Foundation
import Testing

@testable import Kite

/// Boundaries (random, validated, quoted), the MIME type table, and the examples in the documentation.
@Suite("Multipart boundaries and MIME types")
struct MultipartBoundaryTests {
    @Test func defaultBoundaryIsRandomAndWellFormed() throws {
        let boundaries = (0..<20).map { _ in MultipartFormData().boundary }
        #expect(Set(boundaries).count == boundaries.count)
        for boundary in boundaries {
            #expect(boundary.hasPrefix("kite.boundary."))
            let hex = boundary.dropFirst("kite.boundary.".count)
            #expect(hex.count == 16)
            #expect(hex.allSatisfy { "0123456789abcdef".contains($0) }, "\(boundary)")
            #expect(MultipartFormData.boundaryProblem(boundary) == nil)
            #expect(MultipartFormData().contentType.hasPrefix("multipart/form-data; boundary=kite.boundary."))
        }
    }

    static let validBoundaries: [(boundary: String, contentType: String)] = [
        ("B", "multipart/form-data; boundary=B"),
        ("0", "multipart/form-data; boundary=0"),
        ("----WebKitFormBoundary7MA4", "multipart/form-data; boundary=----WebKitFormBoundary7MA4"),
        ("kite.boundary.0123456789abcdef", "multipart/form-data; boundary=kite.boundary.0123456789abcdef"),
        ("a'b+c_d-e.f", "multipart/form-data; boundary=a'b+c_d-e.f"),
        ("simple boundary", "multipart/form-data; boundary=\"simple boundary\""),
        ("'()+_,-./:=?", "multipart/form-data; boundary=\"'()+_,-./:=?\""),
        (" leading", "multipart/form-data; boundary=\" leading\""),
        (String(repeating: "x", count: 70), "multipart/form-data; boundary=" + String(repeating: "x", count: 70)),
    ]

    @Test(arguments: validBoundaries)
    func validBoundaryIsAcceptedAndQuotedWhenNeeded(boundary: String, contentType: String) throws {
        let form = try MultipartFormData(boundary: boundary)
        #expect(form.boundary == boundary)
        #expect(form.contentType == contentType)
    }

    static let invalidBoundaries: [(boundary: String, problem: String)] = [
        ("", "it is empty"),
        (String(repeating: "x", count: 71), "it has 71 bytes"),
        ("trailing ", "it ends with a space"),
        ("quote\"", "it holds \"\"\""),
        ("semi;colon", "it holds \";\""),
        ("back\\slash", "it holds \"\\\""),
        ("tab\there", "it holds \"U+9\""),
        ("line\r\nbreak", "it holds \"U+D\""),
        ("at@sign", "it holds \"@\""),
        ("brace{", "it holds \"{\""),
        ("café", "it holds \"é\""),
    ]

    @Test(arguments: invalidBoundaries)
    func invalidBoundaryIsRejected(boundary: String, problem: String) async throws {
        let error = await MultipartTestSupport.kiteError { try MultipartFormData(boundary: boundary) }
        #expect(error?.code == .multipartEncodingFailed)
        #expect(error?.multipartFailure?.reason == .boundaryInvalid)
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
    }

    static let mimeTypes: [(pathExtension: String, mimeType: String)] = [
        ("png", "image/png"), ("jpg", "image/jpeg"), ("JPEG", "image/jpeg"), ("gif", "image/gif"),
        ("webp", "image/webp"), ("svg", "image/svg+xml"), ("bmp", "image/bmp"), ("tiff", "image/tiff"),
        ("ico", "image/vnd.microsoft.icon"), ("heic", "image/heic"), ("avif", "image/avif"),
        ("mp3", "audio/mpeg"), ("wav", "audio/wav"), ("ogg", "audio/ogg"), ("flac", "audio/flac"),
        ("aac", "audio/aac"), ("m4a", "audio/mp4"), ("opus", "audio/ogg"),
        ("mp4", "video/mp4"), ("mov", "video/quicktime"), ("webm", "video/webm"), ("mkv", "video/x-matroska"),
        ("avi", "video/x-msvideo"),
        ("pdf", "application/pdf"), ("doc", "application/msword"),
        ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("xls", "application/vnd.ms-excel"),
        ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("ppt", "application/vnd.ms-powerpoint"),
        ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
        ("odt", "application/vnd.oasis.opendocument.text"), ("ods", "application/vnd.oasis.opendocument.spreadsheet"),
        ("rtf", "application/rtf"), ("epub", "application/epub+zip"),
        ("zip", "application/zip"), ("gz", "application/gzip"), ("tgz", "application/gzip"),
        ("tar", "application/x-tar"), ("bz2", "application/x-bzip2"), ("xz", "application/x-xz"),
        ("7z", "application/x-7z-compressed"), ("rar", "application/vnd.rar"), ("zst", "application/zstd"),
        ("txt", "text/plain"), ("html", "text/html"), ("HTM", "text/html"), ("css", "text/css"),
        ("csv", "text/csv"), ("md", "text/markdown"),
        ("json", "application/json"), ("xml", "application/xml"), ("yaml", "application/yaml"),
        ("yml", "application/yaml"), ("js", "text/javascript"), ("mjs", "text/javascript"),
        ("wasm", "application/wasm"),
        ("woff", "font/woff"), ("woff2", "font/woff2"), ("ttf", "font/ttf"), ("otf", "font/otf"),
        (".Png", "image/png"),
        ("unknown", "application/octet-stream"), ("", "application/octet-stream"),
        ("tar.gz", "application/octet-stream"),
    ]

    @Test(arguments: mimeTypes)
    func mimeTypeForPathExtension(pathExtension: String, mimeType: String) {
        #expect(MultipartFormData.mimeType(forPathExtension: pathExtension) == mimeType)
    }

    @Test(
        arguments: [
            ("photo.png", "png"), ("archive.tar.gz", "gz"), ("README", nil), (".profile", nil), ("trailing.", nil),
            ("dir.d/file", nil), ("a/.b.txt", "txt"), ("ünï.PDF", "PDF"),
        ] as [(String, String?)]
    )
    func pathExtensionOfAFileName(fileName: String, pathExtension: String?) {
        #expect(MultipartFormData.pathExtension(of: fileName) == pathExtension)
    }
}

/// The examples in the multipart DocC comments, checked against what the comments say they give.
@Suite("Multipart documentation examples")
struct MultipartDocumentationExampleTests {
    @Test func contentLengthExample() throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(Data("value".utf8), withName: "a")
        #expect(form.contentLength == 63)
        let expected = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue\r\n--B--\r\n"
        #expect(try form.encode() == Data(expected.utf8))
    }

    @Test func contentTypeExample() throws {
        #expect(try MultipartFormData(boundary: "a b").contentType == "multipart/form-data; boundary=\"a b\"")
        #expect(try MultipartFormData(boundary: "my-boundary").boundary == "my-boundary")
    }

    @Test func helperExamples() {
        #expect(
            MultipartFormData.contentDisposition(name: "file", fileName: "a\"b.txt")
                == "form-data; name=\"file\"; filename=\"a%22b.txt\""
        )
        #expect(MultipartFormData.mimeType(forPathExtension: "JPG") == "image/jpeg")
        #expect(MultipartFormData.mimeType(forPathExtension: "unknown") == "application/octet-stream")
    }

    @Test func failureExamples() throws {
        var missing = MultipartFormData()
        missing.append(URL(fileURLWithPath: "/no/such/file.txt"), withName: "file")
        #expect(missing.appendError?.multipartFailure?.reason == .fileUnreachable)

        let directory = FileManager.default.temporaryDirectory
        var folder = MultipartFormData()
        folder.append(directory, withName: "upload")
        let failure = try #require(folder.appendError?.multipartFailure)
        #expect(failure.reason.description == "fileIsDirectory")
        #expect(failure.fileURL == directory)
        #expect(failure.description == "fileIsDirectory: \(directory.path)")
    }
}
