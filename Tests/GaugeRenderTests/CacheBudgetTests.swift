import Foundation
import GaugeDisplay
import GaugeRender
import Testing

/// Whatever the theme says, the frame caches stay within their byte budgets, and a frame
/// drawn past the budget is the same as one drawn from the cache.
@Suite("Cache budgets")
struct CacheBudgetTests {
    /// Bar phases (four states at most keep theirs, only the shown one full) plus indicator frames.
    static let sceneBudget = 8 << 20 + 8 << 20

    @Test("a large, slow circles indicator keeps at most its budget of frames")
    func largeSlowIndicator() throws {
        var theme = Theme()
        theme.indeterminateStyle = .circles
        theme.indicatorSize = 400
        theme.indicatorPeriod = 60
        var m = model(30)
        m.mode = .indeterminate
        let screen = try Screen(width: 1280, height: 1000, theme: theme)
        screen.render(m, at: 0)
        for step in 1...40 { screen.render(m, at: 1 + Double(step) * 0.5) }
        // Frames of 400x400 are 640 KB each; 40 of them kept would be 26 MB.
        #expect(screen.scene.frameCacheBytes <= Self.sceneBudget, "\(screen.scene.frameCacheBytes) bytes cached")

        // A frame past the budget equals the same frame from a fresh scene's cache.
        let late = 1 + 39 * 0.5
        screen.scene.invalidate()
        screen.render(m, at: late)
        let fresh = try Screen(width: 1280, height: 1000, theme: theme)
        fresh.render(m, at: 0)
        fresh.scene.invalidate()
        fresh.render(m, at: late)
        #expect(difference(screen.image, fresh.image, tolerance: 0).count == 0)
    }

    @Test("a tall bar with wide stripes keeps its per-phase caches within budget")
    func tallBarWideStripes() throws {
        var theme = Theme()
        theme.barHeight = 400
        theme.cornerRadius = 200
        theme.stripeWidth = 400
        theme.barMaxWidth = 1800
        theme.barWidth = 0.95
        let screen = try Screen(width: 1920, height: 1080, theme: theme)
        let m = model(60)
        screen.render(m, at: 0)
        for step in 1...60 { screen.render(m, at: Double(step) * 0.01) }
        #expect(screen.scene.frameCacheBytes <= Self.sceneBudget, "\(screen.scene.frameCacheBytes) bytes cached")

        let fresh = try Screen(width: 1920, height: 1080, theme: theme)
        fresh.render(m, at: 0)
        fresh.render(m, at: 1.2)
        screen.scene.invalidate()
        screen.render(m, at: 1.2)
        #expect(difference(screen.image, fresh.image, tolerance: 0).count == 0)
    }

    @Test("text in thousands of different characters keeps at most the glyph budget per font")
    func glyphCache() {
        let text = TextRenderer(theme: Theme())
        // 3000 CJK ideographs at 64 px are about 3000 * 64 * 64 = 12 MB of coverage.
        var scalars = (0x4E00..<0x4E00 + 3000).compactMap(Unicode.Scalar.init).map(Character.init)
        while !scalars.isEmpty {
            _ = text.render(String(scalars.prefix(100)), size: 64)
            scalars.removeFirst(min(100, scalars.count))
        }
        #expect(text.glyphCacheBytes > 0)
        #expect(text.glyphCacheBytes <= text.openFaceCount * TextRenderer.glyphCacheBudget, "\(text.glyphCacheBytes) bytes of glyphs")
    }
}
