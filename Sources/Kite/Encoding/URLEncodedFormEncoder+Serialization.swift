import Foundation

/// Turns an encoded tree into `key=value&…` text with an encoder's key, array, space and escaping rules.
struct FormSerializer {
    let alphabetizeKeyValuePairs: Bool
    let arrayEncoding: URLEncodedFormEncoder.ArrayEncoding
    let keyEncoding: URLEncodedFormEncoder.KeyEncoding
    let keyPathEncoding: URLEncodedFormEncoder.KeyPathEncoding
    let spaceEncoding: URLEncodedFormEncoder.SpaceEncoding
    let allowedCharacters: CharacterSet

    init(encoder: URLEncodedFormEncoder) {
        self.alphabetizeKeyValuePairs = encoder.alphabetizeKeyValuePairs
        self.arrayEncoding = encoder.arrayEncoding
        self.keyEncoding = encoder.keyEncoding
        self.keyPathEncoding = encoder.keyPathEncoding
        self.spaceEncoding = encoder.spaceEncoding
        self.allowedCharacters = encoder.allowedCharacters
    }

    /// The pairs of the root object joined with `&`.
    func serialize(_ root: FormObject) -> String {
        var pairs: [String] = []
        for (key, slot) in self.entries(of: root) {
            self.append(slot.node, key: key, to: &pairs)
        }
        return pairs.joined(separator: "&")
    }

    /// The object's entries with key-encoded keys, sorted by those keys when alphabetizing.
    ///
    /// Ties (two keys that encode alike) keep their encoding order.
    private func entries(of object: FormObject) -> [(key: String, slot: FormSlot)] {
        let encoded = object.entries.map { (key: self.keyEncoding.encode($0.key), slot: $0.slot) }
        guard self.alphabetizeKeyValuePairs else { return encoded }
        return encoded.enumerated()
            .sorted { lhs, rhs in
                lhs.element.key == rhs.element.key ? lhs.offset < rhs.offset : lhs.element.key < rhs.element.key
            }
            .map(\.element)
    }

    /// Appends the escaped pairs of `node` at `key`; empty arrays, empty objects and empty slots add none.
    private func append(_ node: FormNode?, key: String, to pairs: inout [String]) {
        switch node {
        case nil:
            return
        case .string(let value):
            pairs.append("\(self.escape(key))=\(self.escape(value))")
        case .array(let array):
            let elements = array.slots.compactMap(\.node)
            let ordered = array.isUnordered ? self.sortedByText(elements) : elements
            for (index, element) in ordered.enumerated() {
                self.append(element, key: self.arrayEncoding.encode(key: key, atIndex: index), to: &pairs)
            }
        case .object(let object):
            for (subkey, slot) in self.entries(of: object) {
                self.append(slot.node, key: key + self.keyPathEncoding.encodeKeyPath(subkey), to: &pairs)
            }
        }
    }

    /// A `Set`'s elements in a deterministic order: single values by their text (`"10"` before `"9"`),
    /// nested values by their encoded pairs under an empty key.
    ///
    /// Elements that tie encode alike, so their relative order cannot show in the output.
    private func sortedByText(_ elements: [FormNode]) -> [FormNode] {
        let keyed = elements.map { element -> (element: FormNode, text: String) in
            if case .string(let text) = element {
                return (element, text)
            }
            var pairs: [String] = []
            self.append(element, key: "", to: &pairs)
            return (element, pairs.joined(separator: "&"))
        }
        return keyed.sorted { $0.text < $1.text }.map(\.element)
    }

    /// Percent-escapes every character outside the allowed set (non-ASCII always), with spaces per `spaceEncoding`.
    func escape(_ string: String) -> String {
        var result = ""
        result.reserveCapacity(string.utf8.count)
        for scalar in string.unicodeScalars {
            if scalar == " " {
                result += self.spaceEncoding.replacement
            } else if scalar.isASCII && self.allowedCharacters.contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                result += EncodingSupport.percentEscape(String(scalar), isAllowed: { _ in false })
            }
        }
        return result
    }
}
