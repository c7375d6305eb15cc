import CGaugeLinux
import GaugeRender
import GaugeSystem

// Render benchmark: prints what a frame costs against a memcpy of the same damage.
// Run with: swift run -c release GaugeBench

func now() -> Double { MonotonicClock.now() }

/// Median of `rounds` timings of `body` run `reps` times, per call, in microseconds.
func measure(rounds: Int = 15, reps: Int, _ body: () -> Void) -> Double {
    var samples: [Double] = []
    for _ in 0..<rounds {
        let t0 = now()
        for _ in 0..<reps { body() }
        samples.append((now() - t0) / Double(reps) * 1e6)
    }
    samples.sort()
    return samples[samples.count / 2]
}

final class Buffer {
    let fb: Framebuffer
    init(width: Int, height: Int, format: PixelFormat) {
        let stride = width * format.bytesPerPixel
        let mem = UnsafeMutableRawPointer.allocate(byteCount: stride * height, alignment: 64)
        mem.initializeMemory(as: UInt8.self, repeating: 0, count: stride * height)
        fb = Framebuffer(base: mem, width: width, height: height, stride: stride, format: format)
    }
    deinit { fb.base.deallocate() }

    /// Copies `rect` row by row from `other`: the work a display does to present that damage.
    func copy(_ rect: Rect, from other: Buffer) {
        let bpp = fb.format.bytesPerPixel
        for y in rect.y..<rect.maxY {
            let offset = y * fb.stride + rect.x * bpp
            memcpy(fb.base + offset, other.fb.base + offset, rect.width * bpp)
        }
    }
}

func fmt(_ v: Double) -> String {
    let r = (v * 100).rounded() / 100
    return String(r)
}

nonisolated(unsafe) var failures = 0
func padded(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func report(_ name: String, _ value: Double, unit: String, target: String? = nil, ok: Bool? = nil) {
    var line = "  " + padded(name, 34) + fmt(value) + " " + unit
    if let target { line += "   (target \(target): \(ok == true ? "met" : "MISSED"))" }
    if ok == false { failures += 1 }
    print(line)
}

for (width, height, format) in [(1920, 1080, PixelFormat.xrgb8888), (800, 480, PixelFormat.rgb565)] {
    print("\(width)x\(height) \(format.rawValue)")
    let theme = Theme()
    let target = Buffer(width: width, height: height, format: format)
    let copy = Buffer(width: width, height: height, format: format)
    var model = ScreenModel()
    model.title = "Installing system"
    model.message = "Unpacking packages"
    model.setTarget(42)

    let setup = measure(rounds: 7, reps: 3) { _ = Scene(theme: theme, width: width, height: height) }
    report("scene set-up (layers, fonts)", setup, unit: "µs")
    let scene = Scene(theme: theme, width: width, height: height)
    let first = measure(rounds: 9, reps: 5) {
        scene.invalidate()
        scene.render(model, at: 0, into: target.fb)
    }
    let fullLimit = 5000.0
    report("first full frame", first, unit: "µs", target: width == 1920 ? "≤ 5 ms" : nil,
           ok: width == 1920 ? first <= fullLimit : nil)

    // Animated: the stripes move one pixel a frame, the value stays.
    let step = theme.stripeDuration / (theme.stripeWidth)
    var t = 0.0
    var animatedDamage = Rect.zero
    let animated = measure(reps: 2000) {
        t += step
        animatedDamage = scene.render(model, at: t, into: target.fb)
    }
    let memcpyAnimated = measure(reps: 2000) { copy.copy(animatedDamage, from: target) }
    report("animated frame", animated, unit: "µs")
    report("  damage", Double(animatedDamage.area * format.bytesPerPixel) / 1024, unit: "KiB (\(animatedDamage))")
    report("  memcpy of that damage", memcpyAnimated, unit: "µs")
    report("  ratio", animated / memcpyAnimated, unit: "×", target: "≤ 3×", ok: animated / memcpyAnimated <= 3)
    report("  frame caches after it", Double(scene.frameCacheBytes) / 1024, unit: "KiB")

    // Value change: every frame a new value (no easing, so each frame differs).
    var value = 10.0
    var valueDamage = Rect.zero
    let changing = measure(reps: 1000) {
        value = value >= 90 ? 10 : value + 0.37
        model.setTarget(value)
        t += 0.0001
        valueDamage = scene.render(model, at: t, into: target.fb)
    }
    let memcpyValue = measure(reps: 1000) { copy.copy(valueDamage, from: target) }
    report("value-change frame", changing, unit: "µs")
    report("  damage", Double(valueDamage.area * format.bytesPerPixel) / 1024, unit: "KiB (\(valueDamage))")
    report("  memcpy of that damage", memcpyValue, unit: "µs")
    report("  ratio", changing / memcpyValue, unit: "×")
}
// Indeterminate animations: each frame of a period composed once, then blitted.
for (width, height, format) in [(1920, 1080, PixelFormat.xrgb8888), (800, 480, PixelFormat.rgb565)] {
    for style in IndeterminateStyle.allCases {
        var theme = Theme()
        theme.indeterminateStyle = style
        let scene = Scene(theme: theme, width: width, height: height)
        let target = Buffer(width: width, height: height, format: format)
        let copy = Buffer(width: width, height: height, format: format)
        var model = ScreenModel()
        model.mode = .indeterminate
        model.message = "Waiting"
        let step = style == .barberPole ? theme.stripeDuration / theme.stripeWidth : 1.0 / 50
        var t = 0.0
        // One whole period first, so every frame is in the cache as in a running daemon.
        for _ in 0..<200 { t += step; scene.render(model, at: t, into: target.fb) }
        var damage = Rect.zero
        var damageArea = 0
        var frames = 0
        let cost = measure(reps: 1000) {
            t += step
            let d = scene.render(model, at: t, into: target.fb)
            if !d.isEmpty { damage = d; damageArea += d.area; frames += 1 }
        }
        let memcpyCost = measure(reps: 1000) { copy.copy(damage, from: target) }
        print("\(width)x\(height) \(format.rawValue) indeterminate \(style.rawValue)")
        report("  animated frame", cost, unit: "µs")
        report("    damage", Double(damage.area * format.bytesPerPixel) / 1024, unit: "KiB (\(damage))")
        report("    memcpy of that damage", memcpyCost, unit: "µs")
        report("    ratio", cost / memcpyCost, unit: "×", target: "≤ 3×", ok: cost / memcpyCost <= 3)
    }
}
// A line of text as a changed message costs it (the scene caches it until it changes),
// glyphs cached: Latin a glyph per character, the others shaped (HarfBuzz, FriBidi).
print("a message line at 16 px, rendered again")
let text = TextRenderer(theme: Theme())
let lines = [
    ("Latin", "Installing linux-image-6.12 (3 of 12)"), ("Arabic", "جارٍ تثبيت النظام ٣ من ١٢"),
    ("Hebrew and English", "מתקין linux-image 6.12 (3 מתוך 12)"), ("Devanagari", "सिस्टम इंस्टॉल हो रहा है"),
]
let firstShaped = now()
_ = text.render(lines[1].1, size: 16)
report("first shaped line (loads the libraries)", (now() - firstShaped) * 1e6, unit: "µs")
for (name, line) in lines {
    _ = text.render(line, size: 16)
    report("  " + name, measure(reps: 50) { _ = text.render(line, size: 16) }, unit: "µs")
}
print(failures == 0 ? "all targets met" : "\(failures) target(s) missed")
