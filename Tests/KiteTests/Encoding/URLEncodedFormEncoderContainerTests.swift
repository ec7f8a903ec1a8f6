import Foundation
import Kite
import Testing

/// Uses every kind of container an `Encoder` offers.
private struct EveryContainer: Encodable, Sendable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TestKey.self)
        try container.encode("v", forKey: "plain")
        var nested = container.nestedContainer(keyedBy: TestKey.self, forKey: "nested")
        try nested.encode(1, forKey: "one")
        var deeper = nested.nestedContainer(keyedBy: TestKey.self, forKey: "deeper")
        try deeper.encode(true, forKey: "flag")
        var list = container.nestedUnkeyedContainer(forKey: "list")
        try list.encode(1)
        var element = list.nestedContainer(keyedBy: TestKey.self)
        try element.encode("e", forKey: "k")
        var inner = list.nestedUnkeyedContainer()
        try inner.encode("x")
        var single = list.superEncoder().singleValueContainer()
        try single.encode(2.5)
        try Parent(id: 7).encode(to: container.superEncoder())
        var base = container.superEncoder(forKey: "base").singleValueContainer()
        try base.encode("b")
    }
}

private struct Parent: Encodable, Sendable {
    let id: Int
}

private class Animal: Encodable, @unchecked Sendable {
    let legs: Int

    init(legs: Int) {
        self.legs = legs
    }
}

private final class Dog: Animal, @unchecked Sendable {
    let name: String

    init(name: String) {
        self.name = name
        super.init(legs: 4)
    }

    private enum CodingKeys: String, CodingKey {
        case name
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.name, forKey: .name)
        try super.encode(to: container.superEncoder())
    }
}

/// Encodes the same key twice and mixes encodeNil into an unkeyed container.
private struct Overwrites: Encodable, Sendable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TestKey.self)
        try container.encode("first", forKey: "b")
        try container.encode("x", forKey: "a")
        try container.encode("second", forKey: "b")
        var list = container.nestedUnkeyedContainer(forKey: "list")
        try list.encodeNil()
        try list.encode("kept")
        try container.encodeNil(forKey: "gone")
    }
}

/// Throws from inside a nested value.
private struct Thrower: Encodable, Sendable {
    let error: any Error & Sendable

    func encode(to encoder: any Encoder) throws {
        throw self.error
    }
}

private struct Event: Encodable, Sendable {
    let date: Date
}

private struct Holder<Value: Encodable & Sendable>: Encodable, Sendable {
    let items: [Value]
}

struct FormErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    var encoder = URLEncodedFormEncoder()
    let value: any Encodable & Sendable
    let message: String
    var testDescription: String { self.name }
}

@Suite("URLEncodedFormEncoder containers and errors")
struct URLEncodedFormEncoderContainerTests {
    @Test func everyContainerKind() throws {
        let text: String = try URLEncodedFormEncoder().encode(EveryContainer())
        #expect(
            text == "base=b&list%5B%5D=1&list%5B%5D%5Bk%5D=e&list%5B%5D%5B%5D=x&list%5B%5D=2.5"
                + "&nested%5Bdeeper%5D%5Bflag%5D=1&nested%5Bone%5D=1&plain=v&super%5Bid%5D=7"
        )
    }

    @Test func everyContainerKindWithIndices() throws {
        let encoder = URLEncodedFormEncoder(arrayEncoding: .indexInBrackets, keyPathEncoding: .dots)
        let text: String = try encoder.encode(EveryContainer())
        #expect(
            text == "base=b&list%5B0%5D=1&list%5B1%5D.k=e&list%5B2%5D%5B0%5D=x&list%5B3%5D=2.5"
                + "&nested.deeper.flag=1&nested.one=1&plain=v&super.id=7"
        )
    }

    @Test func classInheritanceThroughSuperEncoder() throws {
        let text: String = try URLEncodedFormEncoder().encode(Dog(name: "Rex"))
        #expect(text == "name=Rex&super%5Blegs%5D=4")
    }

    @Test func repeatedKeysKeepFirstPositionAndLastValue() throws {
        let sorted: String = try URLEncodedFormEncoder().encode(Overwrites())
        #expect(sorted == "a=x&b=second&list%5B%5D=kept")
        let ordered: String = try URLEncodedFormEncoder(alphabetizeKeyValuePairs: false).encode(Overwrites())
        #expect(ordered == "b=second&a=x&list%5B%5D=kept")
        let nulls: String = try URLEncodedFormEncoder(nilEncoding: .null).encode(Overwrites())
        #expect(nulls == "a=x&b=second&gone=null&list%5B%5D=null&list%5B%5D=kept")
    }

    @Test func encoderIsReusableAndSendable() async throws {
        let encoder = URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase)
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                group.addTask { try encoder.encode(["someKey": index]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results) == Set((0..<8).map { "some_key=\($0)" }))
    }

    static let errorCases: [FormErrorCase] = [
        .init(
            name: "top-level Int",
            value: 5,
            message:
                "URLEncodedFormEncoder can only encode a keyed value (a struct, a class or a [String: …] dictionary)"
                + " at the top level, not a value of type Int that encodes as a single value"
        ),
        .init(
            name: "top-level String",
            value: "text",
            message:
                "URLEncodedFormEncoder can only encode a keyed value (a struct, a class or a [String: …] dictionary)"
                + " at the top level, not a value of type String that encodes as a single value"
        ),
        .init(
            name: "top-level array",
            value: [1, 2],
            message:
                "URLEncodedFormEncoder can only encode a keyed value (a struct, a class or a [String: …] dictionary)"
                + " at the top level, not a value of type Array<Int> that encodes as an unkeyed list"
        ),
        .init(
            name: "top-level nil",
            value: Int?.none,
            message:
                "URLEncodedFormEncoder can only encode a keyed value (a struct, a class or a [String: …] dictionary)"
                + " at the top level, not a value of type Optional<Int> that encodes as nothing"
        ),
        .init(
            name: "top-level Date",
            encoder: URLEncodedFormEncoder(dateEncoding: .iso8601),
            value: Date(timeIntervalSince1970: 0),
            message:
                "URLEncodedFormEncoder can only encode a keyed value (a struct, a class or a [String: …] dictionary)"
                + " at the top level, not a value of type Date that encodes as a single value"
        ),
        .init(
            name: "custom date closure throws",
            encoder: URLEncodedFormEncoder(dateEncoding: .custom { _ in throw Boom() }),
            value: ["event": Event(date: Date(timeIntervalSince1970: 0))],
            message: #"could not encode the value at "event.date": the custom encoding closure threw boom"#
        ),
        .init(
            name: "custom data closure throws in an array",
            encoder: URLEncodedFormEncoder(dataEncoding: .custom { _ in throw Boom() }),
            value: ["blobs": [Data(), Data()]],
            message: #"could not encode the value at "blobs[0]": the custom encoding closure threw boom"#
        ),
        .init(
            name: "encode(to:) throws",
            value: Holder(items: [Thrower(error: Boom())]),
            message: #"could not encode the value at "items[0]": encode(to:) of Thrower threw boom"#
        ),
        .init(
            name: "encode(to:) throws EncodingError",
            value: [
                "a": [
                    "b": Thrower(
                        error: EncodingError.invalidValue(3, .init(codingPath: [], debugDescription: "no threes"))
                    )
                ]
            ],
            message: #"could not encode the value at "a.b": value of type Int is invalid: no threes"#
        ),
    ]

    @Test(arguments: Self.errorCases)
    func errors(_ testCase: FormErrorCase) {
        let message = encodingFailureMessage {
            let _: String = try testCase.encoder.encode(testCase.value)
        }
        #expect(message == testCase.message)
    }

    @Test func errorsKeepTheUnderlyingError() throws {
        let encoder = URLEncodedFormEncoder(dateEncoding: .custom { _ in throw Boom() })
        do {
            let _: String = try encoder.encode(Event(date: Date()))
            Issue.record("expected an error")
        } catch let error as KiteError {
            #expect(error.underlyingError is Boom)
        }
    }
}
