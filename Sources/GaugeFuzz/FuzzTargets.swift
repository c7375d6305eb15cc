/// Every parser under fuzzing.
package enum FuzzTargets {
    package static let all: [FuzzTarget] = [
        .lines, .encodings, .connection, .plymouth, .psplash, .dialogGauge, .swupdate, .themeFile, .screen, .png,
        .statusJSON, .bootc, .aptStatus,
    ]

    package static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}
