import Foundation
import GaugeDisplay
import GaugeRender
import Testing

/// A scene and a memory display of the same size, rendered together.
struct Screen {
    let display: MemoryDisplay
    let scene: Scene

    init(width: Int, height: Int, format: PixelFormat = .xrgb8888, stride: Int? = nil, theme: Theme = Theme()) throws {
        display = try MemoryDisplay(width: width, height: height, format: format, stride: stride)
        scene = Scene(theme: theme, width: width, height: height)
    }

    @discardableResult
    func render(_ model: ScreenModel, at time: Double = 0) -> Rect {
        scene.render(model, at: time, into: display.framebuffer)
    }

    var image: PNG.Image { PNG.image(of: display.framebuffer) }
}

func model(_ value: Double, message: String = "", title: String = "") -> ScreenModel {
    var m = ScreenModel()
    m.setTarget(value)
    m.message = message
    m.title = title
    return m
}

/// Pixels of `a` and `b` whose largest channel difference exceeds `tolerance`, and the largest difference.
func difference(_ a: PNG.Image, _ b: PNG.Image, tolerance: Int, within area: Rect? = nil) -> (count: Int, max: Int, box: Rect) {
    precondition(a.width == b.width && a.height == b.height)
    var count = 0, maxDiff = 0
    var box = Rect.zero
    let region = area ?? Rect(x: 0, y: 0, width: a.width, height: a.height)
    for y in region.y..<region.maxY {
        for x in region.x..<region.maxX {
            let i = (y * a.width + x) * 4
            var d = 0
            for c in 0..<3 { d = max(d, abs(Int(a.rgba[i + c]) - Int(b.rgba[i + c]))) }
            maxDiff = max(maxDiff, d)
            if d > tolerance {
                count += 1
                box = box.union(Rect(x: x, y: y, width: 1, height: 1))
            }
        }
    }
    return (count, maxDiff, box)
}

/// Compares a rendered frame with `Golden/<name>.png`. With GAUGE_UPDATE_GOLDEN=1 the
/// golden is (re)written instead. On a mismatch the actual image and a diff image are
/// written to `.build/golden-failures/` for a person to look at.
func expectGolden(_ image: PNG.Image, _ name: String, tolerance: Int = 6, maxBadPixels: Int = 0,
                  sourceLocation: SourceLocation = #_sourceLocation) throws {
    let sourceDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    let goldenPath = sourceDir.appendingPathComponent("Golden/\(name).png").path
    if ProcessInfo.processInfo.environment["GAUGE_UPDATE_GOLDEN"] == "1" {
        try PNG.write(image, to: goldenPath)
        return
    }
    guard FileManager.default.fileExists(atPath: goldenPath) else {
        Issue.record("no golden image \(goldenPath); run the tests with GAUGE_UPDATE_GOLDEN=1 to create it", sourceLocation: sourceLocation)
        return
    }
    let golden = try PNG.read(goldenPath)
    guard golden.width == image.width, golden.height == image.height else {
        Issue.record("golden \(name) is \(golden.width)x\(golden.height), frame is \(image.width)x\(image.height)", sourceLocation: sourceLocation)
        return
    }
    let diff = difference(image, golden, tolerance: tolerance)
    if diff.count > maxBadPixels {
        let outDir = sourceDir.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/golden-failures")
        try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        try PNG.write(image, to: outDir.appendingPathComponent("\(name)-actual.png").path)
        var marks = [UInt8](repeating: 0, count: image.width * image.height * 4)
        for i in stride(from: 0, to: marks.count, by: 4) {
            var d = 0
            for c in 0..<3 { d = max(d, abs(Int(image.rgba[i + c]) - Int(golden.rgba[i + c]))) }
            let g = UInt8(min(255, Int(image.rgba[i + 1]) / 4))
            marks[i] = d > tolerance ? 255 : g
            marks[i + 1] = d > tolerance ? 0 : g
            marks[i + 2] = d > tolerance ? 0 : g
            marks[i + 3] = 255
        }
        try PNG.write(PNG.Image(width: image.width, height: image.height, rgba: marks),
                      to: outDir.appendingPathComponent("\(name)-diff.png").path)
        Issue.record("\(name): \(diff.count) pixels differ by more than \(tolerance) (max \(diff.max), in \(diff.box)); see \(outDir.path)",
                     sourceLocation: sourceLocation)
    }
}
