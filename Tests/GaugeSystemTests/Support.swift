import Foundation

/// A new empty directory under the temporary directory, named `prefix`-UUID.
func makeTemporaryDirectory(_ prefix: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
