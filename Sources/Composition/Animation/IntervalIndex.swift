import MoonreelMedia

/// Half-open stretches `[start, end)` of time with a payload, indexed so that the ones
/// containing a time are found in O(log n + k) (a centred interval tree, flattened into
/// arrays so that it is a plain Sendable value).
struct IntervalIndex: Sendable {
    struct Entry: Sendable {
        var start: TimelineBound
        var end: TimelineBound
        var payload: Int
    }

    private struct Node: Sendable {
        var center: TimelineBound
        /// Entries containing `center`, by ascending start and by descending end.
        var byStart: [Entry]
        var byEnd: [Entry]
        var left: Int?
        var right: Int?
    }

    private var nodes: [Node] = []
    private var rootNode: Int?

    init(_ entries: [Entry]) {
        rootNode = build(entries.filter { $0.start < $0.end })
    }

    private mutating func build(_ entries: [Entry]) -> Int? {
        guard !entries.isEmpty else { return nil }
        let endpoints = entries.flatMap { [$0.start, $0.end] }.sorted()
        let center = endpoints[(endpoints.count - 1) / 2]
        var here: [Entry] = [], before: [Entry] = [], after: [Entry] = []
        for entry in entries {
            if entry.end <= center { before.append(entry) } else if entry.start > center { after.append(entry) } else { here.append(entry) }
        }
        // Cannot happen with the lower median, but a node must never recurse on all its entries.
        if before.count == entries.count || after.count == entries.count { (here, before, after) = (entries, [], []) }
        let index = nodes.count
        nodes.append(Node(center: center, byStart: here.sorted { $0.start < $1.start },
                          byEnd: here.sorted { $0.end > $1.end }, left: nil, right: nil))
        let left = build(before), right = build(after)
        nodes[index].left = left
        nodes[index].right = right
        return index
    }

    /// Payloads of the entries that contain `time`.
    func payloads(containing time: MediaTime) -> [Int] {
        let t = TimelineBound.at(time)
        var found: [Int] = []
        var next = rootNode
        while let index = next {
            let node = nodes[index]
            if t < node.center {
                for entry in node.byStart {
                    guard entry.start <= t else { break }
                    if entry.end > t { found.append(entry.payload) }
                }
                next = node.left
            } else {
                for entry in node.byEnd {
                    guard entry.end > t else { break }
                    if entry.start <= t { found.append(entry.payload) }
                }
                next = node.right
            }
        }
        return found
    }
}
