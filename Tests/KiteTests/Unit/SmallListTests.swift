import Testing

@testable import Kite

struct SmallListTests {
    @Test(arguments: 0...4)
    func keepsOrderCountAndSuffixes(size: Int) {
        var list = SmallList<Int>()
        for value in 0..<size { list.append(value * 10) }
        #expect(list.count == size)
        #expect(list.isEmpty == (size == 0))
        #expect(Array(list) == (0..<size).map { $0 * 10 })
        for start in 0...size {
            #expect(Array(list.suffix(from: start)) == (start..<size).map { $0 * 10 }, "from \(start)")
        }
    }

    @Test func literalsAndEquality() {
        let list: SmallList = ["a", "b", "c"]
        #expect(list == ["a", "b", "c"])
        #expect(list != ["a", "b"])
        #expect(list != ["b", "a", "c"])
        #expect(SmallList<String>() == [])
    }
}
