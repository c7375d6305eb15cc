/// The version both executables print for `--version`.
package enum GaugeVersion {
    package static let current = "0.1.0"
}
