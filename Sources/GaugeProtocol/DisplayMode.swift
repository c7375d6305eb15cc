/// Whether the bar shows a known fraction or animates work of unknown length.
package enum DisplayMode: String, Equatable, Sendable, CaseIterable {
    case determinate
    case indeterminate
}
