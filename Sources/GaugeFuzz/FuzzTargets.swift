/// Every parser under fuzzing.
public enum FuzzTargets {
    public static let all: [FuzzTarget] = [
        .lines, .encodings, .connection, .plymouth, .psplash, .dialogGauge, .swupdate, .themeFile, .screen, .png,
        .statusJSON, .bootc,
    ]

    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}
