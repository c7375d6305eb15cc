import GaugeRender

/// `gaugectl copy-font SOURCE DEST`: the initramfs's copy of a font the theme names
/// (`UnhintedFont`), for the initramfs-tools hook and the dracut module.
enum CopyFont {
    static func run(source: String, destination: String) -> Never {
        do throws(AssetError) {
            switch try UnhintedFont.write(source, to: destination) {
            case .unhinted(let from, let to):
                print("\(destination): \(source) without its hinting and glyph names, \(from) -> \(to) bytes, every glyph drawn the same")
            case .whole(let why):
                print("\(destination): \(source), \(why)")
            }
            finish(.ok)
        } catch {
            printError("gaugectl: \(error)")
            finish(.daemonError)
        }
    }
}

extension CommandSpec {
    static let copyFont = CommandSpec(
        name: "copy-font", argumentsSynopsis: "SOURCE DEST",
        summary: "Copy a font for the initramfs, without what gauged never reads of it",
        details: """
            Writes DEST as the font file SOURCE without its TrueType instructions and glyph
            names: gauged hints every glyph lightly, with FreeType's auto-hinter, which reads
            neither (a fifth of DejaVu Sans). HarfBuzz's subsetter makes the copy
            (libharfbuzz-subset.so.0, loaded when needed), every glyph kept at its index and
            every other table kept; it is kept only if FreeType draws every glyph of it the same
            as the original's at 11, 16, 24 and 37 pixels. Otherwise, and for fonts of other
            outlines (CFF, whose hints light hinting uses), collections and tricky fonts,
            DEST is SOURCE byte for byte. The initramfs-tools hook and the dracut module copy
            the theme's fonts with it. Talks to no daemon; exit 1 when SOURCE cannot be read
            or DEST written.
            """,
        positionals: 2...2,
        makeAction: { arguments throws(UsageError) in
            let (source, destination) = (arguments.positionals[0], arguments.positionals[1])
            guard !source.isEmpty, !destination.isEmpty else { throw UsageError("copy-font needs two paths") }
            return .run { _ in CopyFont.run(source: source, destination: destination) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("copy-font is not a request") })
}
