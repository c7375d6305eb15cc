import GaugeProtocol

/// Every value of the look, at scale 1, with the defaults of the README's theme table.
package struct Theme: Equatable, Sendable {
    package var background = Color.black

    package var trackColor = Color(red: 0.51, green: 0.51, blue: 0.51)
    package var cornerRadius = 10.0
    /// The soft inner shadow along the track's top edge.
    var trackShadow = true

    package var fillColor = Color(red: 0.87, green: 0.55, blue: 0.09)
    /// A flat fill instead of a lighter-to-darker vertical gradient.
    package var flat = false
    /// The thin darker outline around the fill.
    package var outline = true

    /// The fill before anything was reported (the `begin` state).
    package var beginColor = Color(red: 0.95, green: 0.78, blue: 0.45)
    /// The fill once the work has succeeded / failed, and the colour of its check / cross.
    package var successColor = Color(red: 0.30, green: 0.69, blue: 0.31)
    package var failureColor = Color(red: 0.86, green: 0.24, blue: 0.20)
    /// Draw a check or cross beside the bar on success or failure.
    var showMark = true

    var stripeColor = Color.white.withAlpha(0.2)
    /// Width of one stripe period (stripe plus gap), in pixels.
    package var stripeWidth = 28.0
    /// Seconds the stripes take to move one period.
    package var stripeDuration = 0.8
    /// Scroll the stripes while the bar is shown.
    package var animate = true

    /// Bar width as a fraction of the screen width, clamped to `barMinWidth...barMaxWidth`.
    package var barWidth = 0.5
    var barMinWidth = 200.0
    package var barMaxWidth = 1200.0
    package var barHeight = 24.0
    /// Vertical centre of the bar as a fraction of the screen height (the lower third).
    var barCenter = 5.0 / 6.0

    /// The label's text; `{percent}`, `{value}` and `{max}` are replaced.
    package var labelFormat = "{percent}%"
    var labelSize = 16.0
    var labelInset = 6.0
    /// The label's opacity (its colour is black or white, whichever contrasts).
    package var labelAlpha = 0.6
    package var showLabel = true
    /// Inside the fill (right-aligned at its head), or above, below, left or right of the bar.
    package var labelPosition = LabelPosition.inside

    package var titleSize = 22.0
    var titleColor = Color.white
    package var messageSize = 16.0
    package var messageColor = Color(red: 0.8, green: 0.8, blue: 0.8)
    /// Gap between the bar and the title above it / the message below it.
    package var textGap = 16.0

    /// A PNG drawn centred above the bar (none when empty), scaled with the screen; or
    /// `firmware` (`firmwareLogo`): the logo the firmware showed, where it showed it.
    package var logo = ""
    /// The PNG shown instead when `logo` is `firmware` and the firmware published no
    /// usable logo (none when empty).
    package var logoFallback = ""
    /// Vertical centre of the logo as a fraction of the screen height.
    var logoCenter = 0.4

    package var font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    package var boldFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    /// Fonts tried in order for characters the main font lacks: CJK, then Devanagari and
    /// Thai (DejaVu Sans has Arabic and Hebrew).
    package var fallbackFonts = [
        "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
        "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
        "/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf",
        "/usr/share/fonts/truetype/tlwg/Garuda.ttf",
    ]

    /// Part of the screen's width and height kept free at each edge, for televisions that
    /// crop the picture (0.05: 5 % each side); the layout keeps at least 8 pixels anyway.
    package var overscan = 0.0

    /// The scale every measure is drawn at: 1 or 2, or nil for `auto` (each head's from its
    /// pixel density, `DeviceScale`); `gauged --scale` wins.
    package var scale: Double?

    /// The whole screen turned clockwise, for panels mounted on their side (`--rotate` wins).
    package var rotation = Rotation.none

    /// `plain`: the bar on the background; `box`: a centred panel holding the title, the
    /// bar with a value badge riding its head, and the message.
    package var style = ScreenStyle.plain
    /// The box style's panel colour, corner radius and inner padding.
    package var boxColor = Color(red: 0.16, green: 0.16, blue: 0.17)
    var boxRadius = 14.0
    var boxPadding = 24.0
    /// Dims the whole screen behind the panel (box style); transparent for none.
    package var coverColor = Color.black.withAlpha(0)

    /// What shows in indeterminate mode.
    package var indeterminateStyle = IndeterminateStyle.barberPole
    /// Side of the circles / ring indicator in pixels at scale 1.
    package var indicatorSize = 48.0
    /// Seconds for one turn of the ring, or for one circle to grow.
    package var indicatorPeriod = 1.2
    /// The timing function of the ring's turn and of each circle's growth.
    var indicatorTiming = Easing.easeInOut
    package var circleColors = [
        Color(red: 0.87, green: 0.55, blue: 0.09), Color(red: 0.95, green: 0.95, blue: 0.95),
        Color(red: 0.25, green: 0.65, blue: 0.84), Color(red: 0.35, green: 0.80, blue: 0.56),
    ]
    package var ringDrops = 10
    var ringDirection = Direction.clockwise

    /// Seconds a new value takes to ease in.
    package var transitionDuration = 0.4
    package var easing = Easing.easeInOut

    /// Seconds without progress after which the commands that follow an update tool
    /// (`gaugectl swupdate`, `rauc`, ...) switch the bar to the indeterminate style; 0:
    /// never. The daemon reports it in `status`; the commands read it when they start.
    package var stallTime = 20.0

    /// Seconds a boot's start job may run before the screen says what it waits for
    /// ("Waiting for /dev/disk/by-uuid/… (1 min 5 s of 1 min 30 s)", `gaugectl systemd
    /// --waits`); 0: never. Reported in `status`.
    package var waitNotice = 60.0

    /// Seconds a failure screen's way out (`wait-key`) waits for Enter or R before the
    /// daemon answers as `failureTimeoutAction` says, for a machine with nobody at a
    /// keyboard (a board, a kiosk); 0: it waits for a key.
    package var failureTimeout = 0.0
    package var failureTimeoutAction = FailureTimeoutAction.restart

    package init() {}

    /// The fill colour for a state.
    package func fillColor(for state: RunState) -> Color {
        switch state {
        case .begin: beginColor
        case .running: fillColor
        case .success: successColor
        case .failure: failureColor
        }
    }

    /// Sets one key as written in a theme file or a `theme key=value` request.
    package mutating func set(_ key: String, _ value: String) throws(ThemeError) {
        guard let setter = Self.setters[key] else { throw .unknownKey(key) }
        do {
            try setter(&self, value.trimmingSpaces)
        } catch .badValue(_, let value, let expected) {
            throw .badValue(key: key, value: value, expected: expected)
        } catch {
            throw error
        }
    }

    /// Every key this theme understands, sorted.
    package static var keys: [String] { setters.keys.sorted() }

    private typealias Setter = @Sendable (inout Theme, String) throws(ThemeError) -> Void

    private static let setters: [String: Setter] = [
        "background": color { $0.background = $1 },
        "track_color": color { $0.trackColor = $1 },
        "corner_radius": number(0...200) { $0.cornerRadius = $1 },
        "track_shadow": bool { $0.trackShadow = $1 },
        "fill_color": color { $0.fillColor = $1 },
        "flat": bool { $0.flat = $1 },
        "outline": bool { $0.outline = $1 },
        "begin_color": color { $0.beginColor = $1 },
        "success_color": color { $0.successColor = $1 },
        "failure_color": color { $0.failureColor = $1 },
        "show_mark": bool { $0.showMark = $1 },
        "stripe_color": color { $0.stripeColor = $1 },
        "stripe_width": number(4...400) { $0.stripeWidth = $1 },
        "stripe_duration": number(0.05...60) { $0.stripeDuration = $1 },
        "animate": bool { $0.animate = $1 },
        "bar_width": number(0.05...1) { $0.barWidth = $1 },
        "bar_min_width": number(10...8000) { $0.barMinWidth = $1 },
        "bar_max_width": number(10...8000) { $0.barMaxWidth = $1 },
        "bar_height": number(4...400) { $0.barHeight = $1 },
        "bar_center": number(0...1) { $0.barCenter = $1 },
        "label_format": { (theme: inout Theme, v: String) throws(ThemeError) in theme.labelFormat = v },
        "label_size": number(4...400) { $0.labelSize = $1 },
        "label_inset": number(0...400) { $0.labelInset = $1 },
        "label_alpha": number(0...1) { $0.labelAlpha = $1 },
        "show_label": bool { $0.showLabel = $1 },
        "label_position": choice { $0.labelPosition = $1 },
        "title_size": number(4...400) { $0.titleSize = $1 },
        "title_color": color { $0.titleColor = $1 },
        "message_size": number(4...400) { $0.messageSize = $1 },
        "message_color": color { $0.messageColor = $1 },
        "text_gap": number(0...2000) { $0.textGap = $1 },
        "logo": { (theme: inout Theme, v: String) throws(ThemeError) in theme.logo = v },
        "logo_center": number(0...1) { $0.logoCenter = $1 },
        "logo_fallback": { (theme: inout Theme, v: String) throws(ThemeError) in theme.logoFallback = v },
        "font": { (theme: inout Theme, v: String) throws(ThemeError) in theme.font = v },
        "bold_font": { (theme: inout Theme, v: String) throws(ThemeError) in theme.boldFont = v },
        "fallback_fonts": { (theme: inout Theme, v: String) throws(ThemeError) in
            theme.fallbackFonts = v.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
        },
        "overscan": number(0...0.25) { $0.overscan = $1 },
        "scale": { (theme: inout Theme, v: String) throws(ThemeError) in
            switch v {
            case "auto": theme.scale = nil
            case "1": theme.scale = 1
            case "2": theme.scale = 2
            default: throw .badValue(key: "scale", value: v, expected: "auto, 1 or 2")
            }
        },
        "rotation": { (theme: inout Theme, v: String) throws(ThemeError) in
            guard let degrees = Int(v), let r = Rotation(degrees: degrees) else {
                throw .badValue(key: "rotation", value: v, expected: "0, 90, 180 or 270")
            }
            theme.rotation = r
        },
        "style": choice { $0.style = $1 },
        "box_color": color { $0.boxColor = $1 },
        "box_radius": number(0...200) { $0.boxRadius = $1 },
        "box_padding": number(0...400) { $0.boxPadding = $1 },
        "cover_color": color { $0.coverColor = $1 },
        "indeterminate_style": choice { $0.indeterminateStyle = $1 },
        "indicator_size": number(8...1000) { $0.indicatorSize = $1 },
        "indicator_period": number(0.1...60) { $0.indicatorPeriod = $1 },
        "indicator_timing": choice { $0.indicatorTiming = $1 },
        "circle_colors": { (theme: inout Theme, v: String) throws(ThemeError) in
            var colors: [Color] = []
            for part in v.split(separator: " ", omittingEmptySubsequences: true) {
                guard let c = Color(parsing: String(part)) else { throw .badValue(key: "circle_colors", value: v, expected: "colours separated by spaces") }
                colors.append(c)
            }
            guard !colors.isEmpty else { throw .badValue(key: "circle_colors", value: v, expected: "at least one colour") }
            theme.circleColors = colors
        },
        "ring_drops": { (theme: inout Theme, v: String) throws(ThemeError) in
            guard let n = Int(v), (2...64).contains(n) else { throw .badValue(key: "ring_drops", value: v, expected: "a whole number from 2 to 64") }
            theme.ringDrops = n
        },
        "ring_direction": choice { $0.ringDirection = $1 },
        "transition_duration": number(0...60) { $0.transitionDuration = $1 },
        "stall_time": number(0...86400) { $0.stallTime = $1 },
        "wait_notice": number(0...86400) { $0.waitNotice = $1 },
        "failure_timeout": number(0...86400) { $0.failureTimeout = $1 },
        "failure_timeout_action": choice { $0.failureTimeoutAction = $1 },
        "easing": choice { $0.easing = $1 },
    ]

    /// A key whose value is one of an enumeration's names.
    private static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ assign: @escaping @Sendable (inout Theme, E) -> Void
    ) -> Setter where E.RawValue == String {
        { (theme: inout Theme, v: String) throws(ThemeError) in
            guard let value = E(rawValue: v) else {
                throw .badValue(key: "", value: v, expected: E.allCases.map { $0.rawValue }.joined(separator: ", "))
            }
            assign(&theme, value)
        }
    }

    private static func color(_ assign: @escaping @Sendable (inout Theme, Color) -> Void) -> Setter {
        { (theme: inout Theme, v: String) throws(ThemeError) in
            guard let c = Color(parsing: v) else { throw .badValue(key: "", value: v, expected: "a colour (#rrggbb, #rrggbbaa or r,g,b in 0..1)") }
            assign(&theme, c)
        }
    }

    private static func number(_ range: ClosedRange<Double>, _ assign: @escaping @Sendable (inout Theme, Double) -> Void) -> Setter {
        { (theme: inout Theme, v: String) throws(ThemeError) in
            guard let n = PlainDecimal.parse(v), range.contains(n) else {
                throw .badValue(key: "", value: v, expected: "a number in \(range.lowerBound.shortText)...\(range.upperBound.shortText)")
            }
            assign(&theme, n)
        }
    }

    private static func bool(_ assign: @escaping @Sendable (inout Theme, Bool) -> Void) -> Setter {
        { (theme: inout Theme, v: String) throws(ThemeError) in
            switch v {
            case "true", "yes", "on", "1": assign(&theme, true)
            case "false", "no", "off", "0": assign(&theme, false)
            default: throw .badValue(key: "", value: v, expected: "true or false")
            }
        }
    }
}

/// The screen's arrangement.
package enum ScreenStyle: String, CaseIterable, Sendable {
    case plain, box
}

/// What a failure screen's way out does when nobody pressed a key (`failure_timeout`):
/// restart the machine (as R), or give the console to the shell (as Enter).
package enum FailureTimeoutAction: String, CaseIterable, Sendable {
    case restart, console
}

/// Where the percentage label sits.
package enum LabelPosition: String, CaseIterable, Sendable {
    case inside, above, below, left, right
}

/// How far the picture is turned, clockwise, to suit a panel mounted on its side or upside down.
package enum Rotation: Int, CaseIterable, Sendable {
    case none = 0, quarter = 90, half = 180, threeQuarters = 270

    package init?(degrees: Int) { self.init(rawValue: degrees) }
}

/// Why a theme key was not taken. The key and value are quoted cut short: a request's
/// 4 KiB value must not come back as a 4 KiB reply.
package enum ThemeError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownKey(String)
    case badValue(key: String, value: String, expected: String)

    package var description: String {
        switch self {
        case .unknownKey(let key): "unknown theme key '\(Abbreviated(key))'\(Nearest.hint(for: key, in: Theme.keys))"
        case .badValue(let key, let value, let expected):
            key.isEmpty
                ? "bad value '\(Abbreviated(value))': expected \(expected)"
                : "bad value '\(Abbreviated(value))' for \(key): expected \(expected)"
        }
    }
}

extension Double {
    /// `42` for whole numbers, `0.5` otherwise.
    package var shortText: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
