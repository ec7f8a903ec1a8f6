extension String {
    /// Whether the string holds a control character (C0, DEL or C1). ASCII text is checked byte by
    /// byte without Unicode lookups, over the string's contiguous UTF-8 when it has it (a native string
    /// always does); only strings with non-ASCII bytes look at each scalar.
    var containsControlCharacter: Bool {
        let scan = self.utf8.withContiguousStorageIfAvailable(Self.scanASCII) ?? Self.scanASCII(self.utf8)
        switch scan {
        case .control: return true
        case .ascii: return false
        case .nonASCII: return self.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
    }

    private enum ASCIIScan { case control, ascii, nonASCII }

    private static func scanASCII(_ bytes: some Sequence<UInt8>) -> ASCIIScan {
        var hasNonASCII = false
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F { return .control }
            if byte >= 0x80 { hasNonASCII = true }
        }
        return hasNonASCII ? .nonASCII : .ascii
    }
}
