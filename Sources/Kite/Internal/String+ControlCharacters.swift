extension String {
    /// Whether the string holds a control character (C0, DEL or C1). ASCII text is checked byte by
    /// byte without Unicode lookups; only strings with non-ASCII bytes look at each scalar.
    var containsControlCharacter: Bool {
        var hasNonASCII = false
        for byte in self.utf8 {
            if byte < 0x20 || byte == 0x7F { return true }
            if byte >= 0x80 { hasNonASCII = true }
        }
        return hasNonASCII && self.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
