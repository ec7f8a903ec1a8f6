import Testing

@Test func serverPlaceholder() { #expect(Bool(true)) }
