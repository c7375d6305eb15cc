/// The known word a mistyped one most likely meant, for "did you mean" hints.
package enum Nearest {
    /// The word of `candidates` within a small edit distance of `word` (a typo, not a
    /// different word: at most 2 edits, and fewer than half its length), the closest first;
    /// nil when none is.
    package static func word(to word: String, in candidates: some Sequence<String>) -> String? {
        let typed = Array(word.utf8)
        guard !typed.isEmpty, typed.count <= 64 else { return nil }
        var best: (word: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(typed, Array(candidate.utf8))
            guard distance <= 2, distance * 2 < max(typed.count, 2) else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.word
    }

    /// Levenshtein distance, with a swap of two neighbours counting as one edit.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }

    /// " (did you mean 'X'?)" for `word` among `candidates`, or "".
    package static func hint(for word: String, in candidates: some Sequence<String>) -> String {
        self.word(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }
}
