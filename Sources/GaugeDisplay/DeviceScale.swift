/// The scale a head is drawn at when nothing forces one (`scale = auto`, the theme's
/// default): from the head's pixel density and size, by the rule Plymouth and GNOME share.
/// A screen is meant to show about 135 pixels per inch at scale 1 when it is small (a
/// laptop, a tablet: held or sat close to) and about 110 when it is large (20 inches
/// across and more: a monitor, seen from farther); scale 2 is for heads denser than 1.625
/// times that. Unknown or implausible sizes (none, or the aspect ratio some EDIDs carry in
/// place of the size: 16x9 or 16x10 cm) give scale 1.
package enum DeviceScale {
    static let smallScreenDPI = 135.0
    static let largeScreenDPI = 110.0
    /// Diagonal, in inches, from which a screen counts as large.
    static let largeScreenInches = 20.0
    /// Density, as a multiple of the target, above which a head is drawn at scale 2.
    static let doubleAbove = 1.625

    /// The scale for a head of `width`x`height` pixels and `millimetres` in size.
    package static func auto(width: Int, height: Int, millimetres: (width: Int, height: Int)?) -> Double {
        guard let mm = millimetres, mm.width > 0, mm.height > 0, width > 0, height > 0 else { return 1 }
        if [(160, 90), (160, 100), (16, 9), (16, 10)].contains(where: { $0 == mm.width && $1 == mm.height }) { return 1 }
        let inches = (Double(mm.width * mm.width + mm.height * mm.height)).squareRoot() / 25.4
        let dpi = (Double(width * width + height * height)).squareRoot() / inches
        let target = inches >= largeScreenInches ? largeScreenDPI : smallScreenDPI
        return dpi / target > doubleAbove ? 2 : 1
    }

    /// The scale for `display`, from its mode and physical size.
    package static func auto(_ display: any Display) -> Double {
        auto(width: display.width, height: display.height, millimetres: display.physicalSize)
    }
}
