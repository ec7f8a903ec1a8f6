import Foundation
import HTTPTypes

/// The version of Kite, as sent in `User-Agent`.
public let kiteVersion = "0.1.0"

extension HTTPFields {
    /// The header fields every request carries unless it sets its own: `Accept-Language` from the
    /// process's preferred languages and Kite's `User-Agent`.
    ///
    /// ```swift
    /// print(HTTPFields.kiteDefaults[.userAgent] ?? "")  // e.g. "myapp/1.0 (Linux 6.1.0) Kite/0.1.0"
    /// ```
    public static var kiteDefaults: HTTPFields {
        var fields = HTTPFields()
        let languages = DefaultHeaders.acceptLanguage(Locale.preferredLanguages)
        if !languages.isEmpty {
            fields[.acceptLanguage] = languages
        }
        fields[.userAgent] = DefaultHeaders.userAgent
        return fields
    }
}

enum DefaultHeaders {
    /// What the engine decodes, in order of preference.
    static let acceptEncoding = "gzip;q=1.0, deflate;q=0.9"

    /// At most six languages with falling q-values: `en-US;q=1.0, fr;q=0.9`.
    static func acceptLanguage(_ languages: [String]) -> String {
        languages.prefix(6).enumerated()
            .map { index, language in
                let quality = 10 - index
                return "\(language);q=\(quality == 10 ? "1.0" : "0.\(quality)")"
            }
            .joined(separator: ", ")
    }

    /// `<executable>/<version> (<OS name> <OS version>) Kite/<version>`.
    static let userAgent: String = {
        let info = Bundle.main.infoDictionary ?? [:]
        let executable =
            (info["CFBundleExecutable"] as? String)
            ?? CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent }
            ?? ProcessInfo.processInfo.processName
        let version = (info["CFBundleShortVersionString"] as? String) ?? "Unknown"
        let os = ProcessInfo.processInfo.operatingSystemVersion
        let osVersion = "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)"
        return "\(token(executable))/\(token(version)) (\(osName) \(osVersion)) Kite/\(kiteVersion)"
    }()

    private static var osName: String {
        #if os(Linux)
        "Linux"
        #elseif os(macOS)
        "macOS"
        #elseif os(iOS)
        "iOS"
        #elseif os(tvOS)
        "tvOS"
        #elseif os(watchOS)
        "watchOS"
        #elseif os(visionOS)
        "visionOS"
        #elseif os(Windows)
        "Windows"
        #elseif os(Android)
        "Android"
        #else
        "Unknown"
        #endif
    }

    /// Keeps a product token to printable ASCII without spaces or slashes.
    private static func token(_ text: String) -> String {
        let cleaned = String(
            text.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && scalar.value > 0x20 && scalar.value < 0x7F && scalar != "/" ? Character(scalar) : "-"
            }
        )
        return cleaned.isEmpty ? "Unknown" : cleaned
    }
}
