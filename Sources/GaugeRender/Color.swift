import CGaugeLinux
import CPixman
import GaugeProtocol

/// A straight-alpha sRGB colour with components in 0...1.
package struct Color: Equatable, Hashable, Sendable, CustomStringConvertible {
    package var red: Double
    package var green: Double
    package var blue: Double
    package var alpha: Double

    package init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red.clamped01
        self.green = green.clamped01
        self.blue = blue.clamped01
        self.alpha = alpha.clamped01
    }

    package static let black = Color(red: 0, green: 0, blue: 0)
    package static let white = Color(red: 1, green: 1, blue: 1)

    package func withAlpha(_ alpha: Double) -> Color {
        Color(red: red, green: green, blue: blue, alpha: alpha)
    }

    /// Perceived brightness (ITU-R BT.601 weights), 0...1.
    package var luma: Double { 0.299 * red + 0.587 * green + 0.114 * blue }

    /// True when dark text reads better on this colour than light text.
    package var isLight: Bool { luma > 0.5 }

    /// WCAG 2 relative luminance (sRGB channels linearised), 0...1.
    var relativeLuminance: Double {
        func linear(_ c: Double) -> Double {
            c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    }

    /// WCAG 2 contrast ratio between two opaque colours, 1...21.
    package static func contrast(_ a: Color, _ b: Color) -> Double {
        let (x, y) = (a.relativeLuminance, b.relativeLuminance)
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    /// The contrast ratio bold label text needs against what is under it: WCAG AA's for
    /// large or bold text.
    package static let labelContrast = 3.0

    /// The colour of bold text on this (opaque) colour: black or white, whichever
    /// contrasts more, at `alpha` or more opaque where needed for `labelContrast`, or
    /// fully opaque where even that falls short.
    package func textColor(alpha: Double) -> Color {
        let ink = Color.contrast(.black, self) >= Color.contrast(.white, self) ? Color.black : Color.white
        var opacity = min(max(alpha, 0), 1)
        while opacity < 1, Color.contrast(mix(with: ink, amount: opacity), self) < Self.labelContrast {
            opacity = min(1, opacity + 0.05)
        }
        return ink.withAlpha(opacity)
    }

    /// The same hue, brighter: each channel moved a quarter of the way to white.
    var lighter: Color { mix(with: .white, amount: 0.25) }

    /// The same hue, darker: each channel scaled by 0.75.
    var darker: Color {
        Color(red: red * 0.75, green: green * 0.75, blue: blue * 0.75, alpha: alpha)
    }

    /// This colour composited over `below` (opaque when `below` is).
    package func over(_ below: Color) -> Color {
        let a = alpha + below.alpha * (1 - alpha)
        guard a > 0 else { return Color(red: 0, green: 0, blue: 0, alpha: 0) }
        func channel(_ top: Double, _ bottom: Double) -> Double { (top * alpha + bottom * below.alpha * (1 - alpha)) / a }
        return Color(red: channel(red, below.red), green: channel(green, below.green), blue: channel(blue, below.blue), alpha: a)
    }

    package func mix(with other: Color, amount t: Double) -> Color {
        Color(
            red: red + (other.red - red) * t,
            green: green + (other.green - green) * t,
            blue: blue + (other.blue - blue) * t,
            alpha: alpha + (other.alpha - alpha) * t)
    }

    /// Premultiplied 16-bit colour, as pixman's solid fills and gradient stops take it.
    package var pixman: pixman_color_t {
        func channel(_ v: Double) -> UInt16 { UInt16((v * alpha * 65535).rounded()) }
        return pixman_color_t(
            red: channel(red), green: channel(green), blue: channel(blue),
            alpha: UInt16((alpha * 65535).rounded()))
    }

    /// Parses `#rgb`, `#rrggbb`, `#rrggbbaa`, or `r,g,b[,a]` with components in 0...1.
    package init?(parsing text: String) {
        let s = text.trimmingSpaces
        if s.hasPrefix("#") {
            let hex = Array(s.utf8.dropFirst())
            var digits: [Double] = []
            for c in hex {
                guard let v = Self.hexValue(c) else { return nil }
                digits.append(Double(v))
            }
            switch digits.count {
            case 3:
                self.init(red: digits[0] / 15, green: digits[1] / 15, blue: digits[2] / 15)
            case 6, 8:
                var comps: [Double] = []
                for i in stride(from: 0, to: digits.count, by: 2) {
                    comps.append((digits[i] * 16 + digits[i + 1]) / 255)
                }
                self.init(red: comps[0], green: comps[1], blue: comps[2], alpha: comps.count == 4 ? comps[3] : 1)
            default:
                return nil
            }
        } else {
            let parts = s.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 3 || parts.count == 4 else { return nil }
            var comps: [Double] = []
            for p in parts {
                guard let v = PlainDecimal.parse(String(p).trimmingSpaces), v >= 0, v <= 1 else { return nil }
                comps.append(v)
            }
            self.init(red: comps[0], green: comps[1], blue: comps[2], alpha: comps.count == 4 ? comps[3] : 1)
        }
    }

    private static func hexValue(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(c - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(c - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    /// `#rrggbb` or `#rrggbbaa` when not opaque.
    package var description: String {
        func hex(_ v: Double) -> String {
            let n = Int((v * 255).rounded())
            let digits = Array("0123456789abcdef")
            return String([digits[n >> 4], digits[n & 15]])
        }
        return "#" + hex(red) + hex(green) + hex(blue) + (alpha < 1 ? hex(alpha) : "")
    }
}

extension Double {
    var clamped01: Double { self.isNaN ? 0 : Swift.min(Swift.max(self, 0), 1) }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    /// Linear in the blanks: walks in from each end (`dropLast()` on a string counts it
    /// whole each time).
    var trimmingSpaces: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
