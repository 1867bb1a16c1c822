/// "did you mean outputURL?": the known name nearest to a mistyped one, if one is near
/// enough (the same letters in another case, or a few edits away for longer names).
package enum NameSuggestion {
    package static func closest(to name: String, among known: some Sequence<String>) -> String? {
        let typed = Array(name.lowercased().utf8.prefix(64))
        guard !typed.isEmpty else { return nil }
        let allowed = max(1, min(3, typed.count / 4))
        var best: (name: String, distance: Int)?
        for candidate in known {
            let distance = editDistance(typed, Array(candidate.lowercased().utf8.prefix(64)))
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance, with a swap of neighbours counting as one edit.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], previous2[j - 2] + 1) }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }

    /// "; did you mean NAME?" or "".
    package static func hint(for name: String, among known: some Sequence<String>, prefix: String = "") -> String {
        closest(to: name, among: known).map { "; did you mean \(prefix)\($0)?" } ?? ""
    }
}
