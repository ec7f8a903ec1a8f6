import Foundation

extension MultipartFormData {
    /// Appends a text field for every pair that `encoding` makes of `parameters`, as AFNetworking's
    /// multipart requests turn their parameters into fields.
    ///
    /// The pairs are those ``URLEncoding`` puts in a query, in the same order, but not escaped:
    /// top-level and nested keys sorted, nested keys as `user[name]`, array and set elements as
    /// ``URLEncoding/arrayEncoding`` says (`tags[]` by default; sets sorted by their text), Booleans as
    /// ``URLEncoding/boolEncoding`` says (`1`/`0` by default), and `nil`, `Optional.none` and `NSNull`
    /// as ``URLEncoding/nullEncoding`` says: no field with ``URLEncoding/NullEncoding/dropKey``, a field
    /// with an empty value with ``URLEncoding/NullEncoding/bareKey``. The field name is the pair's key
    /// and the field's bytes are its text in UTF-8, both as they are (names are escaped only as
    /// ``contentDisposition(name:fileName:)`` escapes them). The encoding's destination is not used.
    ///
    /// Call it before appending files to send the fields first, as AFNetworking does.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(parameters: ["user": ["name": "Zoë & co"], "tags": ["x", "y"], "ok": true])
    /// // fields ok=1, tags[]=x, tags[]=y, user[name]=Zoë & co
    /// form.append(Data([0x89, 0x50, 0x4E, 0x47]), withName: "avatar", fileName: "avatar.png", mimeType: "image/png")
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: The parameters, as for ``URLEncoding``.
    ///   - encoding: The key, Boolean and null rules; ``URLEncoding/default`` by default.
    public mutating func append(parameters: Parameters, encoding: URLEncoding = .default) {
        for pair in encoding.pairs(parameters) {
            self.append(Data((pair.value ?? "").utf8), withName: pair.key)
        }
    }
}
