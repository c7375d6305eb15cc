/// Timing functions for transitions, mapping progress 0...1 to eased 0...1.
package enum Easing: String, CaseIterable, Sendable {
    case linear
    case easeIn = "ease-in"
    case easeOut = "ease-out"
    case easeInOut = "ease-in-out"

    /// Cubic curves: smooth at the ends that ease, exact at 0 and 1.
    package func callAsFunction(_ t: Double) -> Double {
        let x = t.clamped01
        switch self {
        case .linear: return x
        case .easeIn: return x * x * x
        case .easeOut:
            let u = 1 - x
            return 1 - u * u * u
        case .easeInOut:
            if x < 0.5 { return 4 * x * x * x }
            let u = -2 * x + 2
            return 1 - u * u * u / 2
        }
    }
}
