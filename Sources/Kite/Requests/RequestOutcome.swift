import Foundation
import HTTPTypes

/// What the pipeline produced for a request, before serialization: shared by every kind of request.
struct RequestOutcome: Sendable {
    /// The head as sent, when the request got that far.
    var request: HTTPRequest?
    var response: HTTPResponse?
    /// The URL that answered, after redirects.
    var url: URL?
    /// The body of data requests.
    var data: Data?
    /// Where a download's file is: temporary until validation passed, then its destination.
    var fileURL: URL?
    /// A failed or cancelled download's token for `download(resumingWith:)`.
    var resumeData: Data?
    /// Why the request failed, including validation.
    var error: KiteError?
    /// The timeline, without serialization.
    var metrics: ResponseMetrics?
}
