@testable import GaugeDisplay
import GaugeRender
import Testing

private let screen = Rect(x: 0, y: 0, width: 100, height: 50)
private let a = Rect(x: 10, y: 10, width: 5, height: 5)
private let b = Rect(x: 40, y: 20, width: 10, height: 4)

@Test func newBuffersAreStaleWhole() {
    let damage = BufferDamage(count: 2, screen: screen)
    #expect(damage.back == 0)
    #expect(damage.backStale == screen)
}

@Test func backBufferLacksThePreviousFrameOnly() {
    var damage = BufferDamage(count: 2, screen: screen)
    damage.presented(changed: screen)     // frame 1 into buffer 0
    #expect(damage.back == 1)
    #expect(damage.backStale == screen) // buffer 1 never drawn
    damage.presented(changed: screen)     // frame 2 into buffer 1
    #expect(damage.back == 0)
    #expect(damage.backStale == screen) // buffer 0 lacks frame 2, the whole screen
    damage.presented(changed: a)          // frame 3 into buffer 0, damage a
    #expect(damage.back == 1)
    #expect(damage.backStale == a)      // buffer 1 holds frame 2: lacks frame 3's damage
    damage.presented(changed: b)        // frame 4 into buffer 1: redraws the stale a, changes b
    #expect(damage.backStale == b)      // buffer 0 holds frame 3 (a included): lacks b only
    damage.presented(changed: .zero)      // an empty frame still swaps
    #expect(damage.backStale == .zero)
}

@Test func damageOutsideTheScreenIsClipped() {
    var damage = BufferDamage(count: 2, screen: screen)
    damage.presented(changed: screen)
    damage.presented(changed: screen)
    damage.presented(changed: Rect(x: 90, y: 40, width: 50, height: 50))
    #expect(damage.backStale == Rect(x: 90, y: 40, width: 10, height: 10))
}

@Test func invalidateAllMakesEveryBufferWhole() {
    var damage = BufferDamage(count: 2, screen: screen)
    damage.presented(changed: screen)
    damage.presented(changed: screen)
    damage.presented(changed: a)
    damage.invalidateAll()
    #expect(damage.backStale == screen)
    damage.presented(changed: screen)
    #expect(damage.backStale == screen)
    damage.presented(changed: b)
    #expect(damage.backStale == b)
}

@Test func singleBufferIsNeverStaleAfterTheFirstFrame() {
    var damage = BufferDamage(count: 1, screen: screen)
    #expect(damage.backStale == screen)
    damage.presented(changed: a)
    #expect(damage.back == 0)
    #expect(damage.backStale == .zero)
    damage.presented(changed: b)
    #expect(damage.backStale == .zero)
}

/// Drawing each frame's damage plus the stale region into the back buffer keeps every
/// buffer identical to the frame it shows: a model of the display over random frames.
@Test func staleBookkeepingReproducesEveryFrame() {
    let width = 16, height = 4
    let screen = Rect(x: 0, y: 0, width: width, height: height)
    var buffers = [[Int]](repeating: [Int](repeating: -1, count: width * height), count: 2)
    var truth = [Int](repeating: 0, count: width * height)
    var damage = BufferDamage(count: 2, screen: screen)
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next(_ n: Int) -> Int {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return Int((seed >> 33) % UInt64(n))
    }
    for frame in 1...200 {
        let x = next(width), y = next(height)
        let changed = Rect(x: x, y: y, width: 1 + next(width - x), height: 1 + next(height - y))
        for py in changed.y..<changed.maxY { for px in changed.x..<changed.maxX { truth[py * width + px] = frame } }
        let clip = changed.union(damage.backStale)
        let back = damage.back
        for py in clip.y..<clip.maxY { for px in clip.x..<clip.maxX { buffers[back][py * width + px] = truth[py * width + px] } }
        #expect(buffers[back] == truth, "frame \(frame)")
        damage.presented(changed: changed)
    }
}
