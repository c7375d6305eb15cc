/// The label's text from a format with `{percent}`, `{value}` and `{max}` placeholders.
package enum LabelFormat {
    /// `value` is shown as a whole number that never reads as complete before it is:
    /// 99.5 shows 99, only 100 shows 100.
    package static func text(_ format: String, value: Double, max: Double) -> String {
        let percent = max > 0 ? value / max * 100 : 0
        func whole(_ v: Double) -> String {
            guard v.isFinite else { return "0" }
            return String(Int(v.rounded(.down)))
        }
        var out = ""
        var rest = Substring(format)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            out += rest[..<open]
            let name = rest[rest.index(after: open)..<close]
            switch name {
            case "percent": out += whole(percent)
            case "value": out += whole(value)
            case "max": out += whole(max)
            default: out += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}
