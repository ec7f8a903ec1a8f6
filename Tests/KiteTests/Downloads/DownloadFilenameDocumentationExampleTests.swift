import Foundation
import Kite
import Testing

/// The examples in the downloads DocC comments, checked against what the comments say they give.
@Suite struct DownloadFilenameDocumentationExampleTests {
    @Test func contentDisposition() throws {
        let header = "attachment; filename=\"EUR rates.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt"
        let disposition = ContentDisposition(header)
        #expect(disposition?.type == .attachment)
        #expect(disposition?.filename == "€ rates.txt")

        let sloppy = ContentDisposition("Attachment; filename=report.pdf")
        #expect(sloppy?.filename == "report.pdf")
        #expect(ContentDisposition("\"quoted\"") == nil)

        let name = ContentDisposition("attachment; filename=\"../x\"")?.filename
        #expect(name == "../x")
        #expect(DownloadFilename.sanitized(name ?? "") == "_x")

        let built = ContentDisposition(type: .attachment, parameters: ["filename": "report.pdf"])
        #expect(built.filename == "report.pdf")
    }

    @Test func downloadFilename() throws {
        #expect(DownloadFilename.sanitized("../../etc/passwd") == "_.._etc_passwd")
        #expect(
            DownloadFilename.suggested(
                contentDisposition: "attachment; filename*=UTF-8''%E2%82%AC%20rates.txt",
                url: URL(string: "https://example.com/download?id=7")
            ) == "€ rates.txt"
        )
        #expect(DownloadFilename.sanitized(".bashrc") == "bashrc")
        #expect(DownloadFilename.sanitized("CON.txt") == "_CON.txt")
        #expect(DownloadFilename.sanitized(" ... ") == "download")
        #expect(
            DownloadFilename.suggested(
                contentDisposition: nil,
                url: URL(string: "https://example.com/a/report%20final.pdf?x=1")
            ) == "report final.pdf"
        )
        #expect(DownloadFilename.fallback == "download")
        #expect(DownloadFilename.maximumLength == 255)
    }
}
