import Foundation
import KioskTestSupport
import Synchronization

/// Collects what an `AsyncSequence` yields, on a task of its own, so a test can wait for
/// elements with a deadline instead of blocking on `next()`.
final class Recorder<Element: Sendable>: Sendable {
    private final class Items: Sendable {
        let list = Mutex<[Element]>([])
    }
    private let items = Items()
    private let task: Task<Void, Never>

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        let items = items
        task = Task {
            do {
                for try await item in sequence { items.list.withLock { $0.append(item) } }
            } catch {}
        }
    }

    deinit { task.cancel() }

    var all: [Element] { items.list.withLock { $0 } }

    /// Waits until `condition` holds for what was recorded (or the timeout passes) and returns it.
    @discardableResult
    func wait(timeout: Duration = .seconds(20), until condition: ([Element]) -> Bool) async -> [Element] {
        await eventually(timeout: timeout) { all } until: { condition($0) }
    }

    /// Waits until at least `count` elements came.
    @discardableResult
    func wait(count: Int, timeout: Duration = .seconds(20)) async -> [Element] {
        await wait(timeout: timeout) { $0.count >= count }
    }
}
