import GaugeRender

/// Theme files as `gauged --theme` reads them.
extension FuzzTarget {
    static let themeFile = FuzzTarget(
        name: "theme-file",
        summary: "theme files: problems name lines of the file in order, applying the file again changes "
            + "nothing, every number of the resulting theme finite and every colour in range and "
            + "written back as itself",
        maxLength: 8000, dictionary: ThemeSamples.keys.map { $0 + " = " } + ["[bar]\n", "# c\n", "; c\n", "\n", "=", "\"", "bar.", "#", ","],
        seeds: { [Array(ThemeSamples.sampleFile.utf8), Array("[bar]\nbar.fill_color = \"#ff0000\"\nbogus\nflat = maybe\n".utf8)] }
    ) { input, probe throws(FuzzFailure) in
        let text = String(decoding: input, as: UTF8.self)
        var theme = Theme()
        let problems = ThemeFile.apply(text, to: &theme, path: "fuzz.theme")
        let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
        var previous = 0
        for problem in problems {
            probe.hit("problem", String(problem.message.prefix(while: { $0 != "'" })))
            try check((1...lineCount).contains(problem.line) && problem.line > previous, "a problem on line \(problem.line) of \(lineCount), after \(previous)")
            previous = problem.line
        }
        probe.hit("problems", bucket(problems.count))
        var again = theme
        let problemsAgain = ThemeFile.apply(text, to: &again, path: "fuzz.theme")
        try check(again == theme, "applying the file twice changes the theme")
        try check(problemsAgain == problems, "applying the file twice reports other problems")
        try ThemeSamples.checkValues(of: theme)
    }
}

enum ThemeSamples {
    static let keys = Theme.keys

    /// Keys that name files: the fuzzers give them only values from `files`.
    static let fileKeys: Set<String> = ["logo", "font", "bold_font", "fallback_fonts"]

    static let sampleFile = """
        # A sample
        [screen]
        background = #102030
        style = box
        box_color = 0.2,0.2,0.2,0.9
        [bar]
        bar.fill_color = #3080ff
        bar_width = 0.6
        bar_height = 30
        corner_radius = 12
        stripe_width = 40
        label_format = "Step {value} of {max}"
        label_position = above
        indeterminate_style = ring
        ring_drops = 12
        circle_colors = #fff #000 #f00
        easing = linear
        rotation = 90

        """

    /// Every number finite, every colour's components in 0...1 and its text form read
    /// back as the same text.
    static func checkValues(of theme: Theme) throws(FuzzFailure) {
        for child in Mirror(reflecting: theme).children {
            let name = child.label ?? "?"
            switch child.value {
            case let number as Double:
                try check(number.isFinite, "theme.\(name) is \(number)")
            case let color as Color:
                try checkColor(color, name)
            default:
                break
            }
        }
        try check(!theme.circleColors.isEmpty, "theme.circleColors is empty")
        for color in theme.circleColors { try checkColor(color, "circleColors") }
        try check((2...64).contains(theme.ringDrops), "theme.ringDrops is \(theme.ringDrops)")
    }

    private static func checkColor(_ color: Color, _ name: String) throws(FuzzFailure) {
        for component in [color.red, color.green, color.blue, color.alpha] {
            try check((0...1).contains(component), "theme.\(name) has a component \(component)")
        }
        let text = color.description
        let back = Color(parsing: text)
        try check(back?.description == text, "theme.\(name) is written \(text), which reads back as \(String(describing: back))")
    }
}
