/// A list that keeps its first element inline and allocates only from the second on.
///
/// A request usually has one handler and one validator (`validate()`), so their lists cost no
/// allocation. Checked against swift-collections 1.6.0, which has no small-buffer array.
struct SmallList<Element>: Sequence {
    private var first: Element?
    private var rest: [Element] = []

    init() {}

    var count: Int { self.first == nil ? 0 : 1 + self.rest.count }

    var isEmpty: Bool { self.first == nil }

    mutating func append(_ element: Element) {
        if self.first == nil {
            self.first = element
        } else {
            self.rest.append(element)
        }
    }

    /// The elements from `start` on (`start` may be `count`).
    func suffix(from start: Int) -> SmallList {
        var result = SmallList()
        for (index, element) in self.enumerated() where index >= start {
            result.append(element)
        }
        return result
    }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var rest: IndexingIterator<[Element]>

        mutating func next() -> Element? {
            if let first = self.first {
                self.first = nil
                return first
            }
            return self.rest.next()
        }
    }

    func makeIterator() -> Iterator {
        Iterator(first: self.first, rest: self.rest.makeIterator())
    }
}

extension SmallList: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: Element...) {
        for element in elements { self.append(element) }
    }
}

extension SmallList: Equatable where Element: Equatable {
    static func == (lhs: SmallList, rhs: SmallList) -> Bool {
        lhs.elementsEqual(rhs)
    }
}

extension SmallList: Sendable where Element: Sendable {}
