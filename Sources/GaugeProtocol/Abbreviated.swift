/// A piece of client input quoted in an error message, cut short so that a 4 KiB word
/// does not come back as a 4 KiB reply.
package struct Abbreviated: CustomStringConvertible {
    package static let limit = 40
    let text: String

    package init<S: StringProtocol>(_ text: S) {
        self.text = String(text)
    }

    package var description: String {
        let scalars = text.unicodeScalars
        guard scalars.count > Self.limit else { return text }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: scalars.prefix(Self.limit))
        return String(cut) + "…"
    }
}
