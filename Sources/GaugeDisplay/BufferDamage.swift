import GaugeRender

/// What each buffer of a flipped set lacks compared with the frame on screen.
///
/// With two buffers the back buffer holds the frame before the one shown (buffer age 2),
/// so it misses the damage of the last presented frame; with one buffer nothing is ever
/// missing. A new buffer, or one whose contents cannot be trusted (the display was
/// released and someone else drew), misses the whole screen.
package struct BufferDamage: Equatable, Sendable {
    package let screen: Rect
    /// Per buffer, the region older than the frame on screen.
    package private(set) var stale: [Rect]
    /// The buffer the next frame is drawn into.
    package private(set) var back: Int

    /// `count` buffers, none of them holding a frame yet; buffer 0 is drawn first.
    package init(count: Int, screen: Rect) {
        precondition(count >= 1, "at least one buffer")
        self.screen = screen
        stale = Array(repeating: screen, count: count)
        back = 0
    }

    package var count: Int { stale.count }

    /// What the back buffer lacks: the next frame must redraw it as well as its damage.
    package var backStale: Rect { stale[back] }

    /// The back buffer, brought up to date (its stale region redrawn with the frame), is
    /// now shown with `changed` differing from the frame before: every other buffer lacks
    /// `changed` too, and the next frame goes into the following buffer. Pass the change
    /// alone, not the redrawn stale region: the buffers that hold the frame before have it.
    package mutating func presented(changed: Rect) {
        let area = changed.intersection(screen)
        for index in stale.indices where index != back {
            stale[index] = stale[index].union(area)
        }
        stale[back] = .zero
        back = (back + 1) % stale.count
    }

    /// Every buffer must be redrawn whole (after a release, a mode set, a lost buffer).
    package mutating func invalidateAll() {
        for index in stale.indices { stale[index] = screen }
    }
}
