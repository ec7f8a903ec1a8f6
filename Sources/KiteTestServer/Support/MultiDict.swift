/// An ordered list of name/value pairs where a name may repeat, like Werkzeug's `MultiDict`.
///
/// Used for query parameters, urlencoded and multipart form fields and uploaded files.
struct MultiDict: Sendable, Equatable {
    private(set) var pairs: [(name: String, value: String)] = []

    init() {}

    init(pairs: [(name: String, value: String)]) {
        self.pairs = pairs
    }

    /// Parses `application/x-www-form-urlencoded` text (a query string or a form body).
    ///
    /// Empty segments are skipped, a segment without `=` has an empty value, `+` means a space and
    /// malformed percent escapes are kept as they are.
    init(urlEncoded text: Substring) {
        for segment in text.split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = segment.firstIndex(of: "=") {
                let name = UTF8Text.percentDecode(segment[..<equals], plusAsSpace: true)
                let value = UTF8Text.percentDecode(segment[segment.index(after: equals)...], plusAsSpace: true)
                self.pairs.append((name, value))
            } else {
                self.pairs.append((UTF8Text.percentDecode(segment, plusAsSpace: true), ""))
            }
        }
    }

    static func == (lhs: MultiDict, rhs: MultiDict) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }

    var isEmpty: Bool { self.pairs.isEmpty }

    mutating func append(_ name: String, _ value: String) {
        self.pairs.append((name, value))
    }

    /// The first value for `name`, compared exactly.
    func first(_ name: String) -> String? {
        self.pairs.first { $0.name == name }?.value
    }

    /// The first value for `name`, compared case-insensitively (httpbin reads its options this way).
    func option(_ name: String) -> String? {
        let lowered = name.lowercased()
        return self.pairs.first { $0.name.lowercased() == lowered }?.value
    }

    /// Whether any pair is named `name`.
    func contains(_ name: String) -> Bool {
        self.pairs.contains { $0.name == name }
    }

    /// The first value of each distinct name, in order of first appearance (Python's
    /// `dict(multidict.items())`).
    var firstValues: [(name: String, value: String)] {
        var seen: Set<String> = []
        return self.pairs.filter { seen.insert($0.name).inserted }
    }

    /// The JSON object httpbin shows: a single value as a string, repeated names as arrays.
    var json: JSONValue {
        var grouped: [String: [String]] = [:]
        for (name, value) in self.pairs {
            grouped[name, default: []].append(value)
        }
        return .object(
            grouped.mapValues { values in
                values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
            }
        )
    }
}
