import Foundation
import Glibc
import KioskInput
import KioskTestSupport
import Logging
import SystemdKit

@testable import LinuxInput

/// An `InputBroker` on its own `EventLoop` thread, as kioskd runs it, with what it logs and
/// reports recorded for the test thread.
final class BrokerHarness: @unchecked Sendable {
    let loop: EventLoop
    let log = LogRecorder()
    private let lock = NSLock()
    private var broker: InputBroker?
    private var brokeredAt: [(device: InputBroker.BrokeredDevice, at: ContinuousClock.Instant)] = []
    private var exits = 0
    private var early: [InputBroker.EarlyGrab] = []

    /// `uinputPath` other than /dev/uinput makes every clone fail (a test of that failure); a
    /// tiny `monitorBufferSize` makes the udev monitor overflow. `grabEarly: false` waits for
    /// udev's record before grabbing (the broker before it listened to the kernel's uevents).
    init(
        policy: FilterPolicy = .passThrough, uinputPath: String = "/dev/uinput", monitorBufferSize: Int = 8 << 20,
        grabEarly: Bool = true, udevWait: Duration = .seconds(5)
    ) throws {
        loop = try EventLoop()
        try loop.startThread()
        let log = self.log
        try onLoop { [self] in
            let broker = InputBroker(
                loop: loop, logger: Logger(label: "broker") { _ in log.handler }, policy: policy,
                uinputPath: uinputPath, monitorBufferSize: monitorBufferSize, grabEarly: grabEarly,
                udevWait: udevWait)
            broker.onExitRequested = { [self] in lock.withLock { exits += 1 } }
            broker.onDeviceBrokered = { [self] device in
                let now = ContinuousClock.now
                lock.withLock { brokeredAt.append((device, now)) }
            }
            broker.onGrabbedEarly = { [self] grab in lock.withLock { early.append(grab) } }
            broker.start()
            self.broker = broker
        }
    }

    /// Runs `body` on the loop thread and waits for it.
    func onLoop<T>(_ body: @escaping () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        let work = UncheckedSendable(body)
        loop.execute {
            box.result = Result { try work.value() }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// Keeps the loop thread busy for `duration` (the broker reads nothing meanwhile).
    func block(for duration: Duration) {
        let micros = UInt32(
            duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        loop.execute { usleep(micros) }
    }

    func setPolicy(_ policy: FilterPolicy) throws {
        try onLoop { [self] in broker!.setPolicy(policy) }
    }

    /// Carries out a udev `change` of the brokered node at `syspath` as the broker does (drain
    /// it, then re-read and judge it), on the loop, with `window` run between the two steps:
    /// what `window` writes to the node is queued on its fd when the broker re-reads it.
    func change(_ syspath: String, window: @escaping () -> Void) throws {
        try onLoop { [self] in
            let broker = broker!
            guard var device = broker.record(ofNode: syspath) else { throw HarnessError("\(syspath) is not open") }
            device.action = .change
            guard broker.drainForChange(syspath) else { throw HarnessError("\(syspath) could not be drained") }
            window()
            broker.rereadForChange(device)
        }
    }

    var devices: [InputBroker.BrokeredDevice] {
        get throws { try onLoop { [self] in broker!.devices } }
    }

    var exitRequests: Int { lock.withLock { exits } }

    /// The nodes grabbed on the kernel's uevent so far, in order.
    var earlyGrabs: [InputBroker.EarlyGrab] { lock.withLock { early } }

    /// When the broker reported the node named `name` brokered.
    func brokeredTime(ofNodeNamed name: String) -> ContinuousClock.Instant? {
        lock.withLock { brokeredAt.last { $0.device.name == name }?.at }
    }

    /// Waits until the node at `path` is brokered (or not, with `brokered: false`).
    func waitUntil(_ path: String, brokered: Bool = true, timeout: Duration = .seconds(30)) throws {
        guard try eventually(timeout: timeout, every: .milliseconds(10), { try devices.contains { $0.path == path } == brokered })
        else {
            throw HarnessError(
                "\(path) was \(brokered ? "not " : "")brokered within \(timeout); log: \(log.lines.suffix(8))")
        }
    }

    private var stopped = false

    /// Stops the broker (releasing every node) and the loop; once (a test that stops it to check
    /// the release also defers a stop, so that a failure before that still releases the nodes
    /// for the tests after it).
    func stop() throws {
        guard !stopped else { return }
        stopped = true
        try onLoop { [self] in
            broker?.stop()
            broker = nil
        }
        loop.exit()
    }

    deinit {
        if broker != nil { try? stop() }
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

private struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A swift-log handler that keeps every entry (and echoes it to stderr for the VM's output).
final class LogRecorder: @unchecked Sendable {
    struct Entry: CustomStringConvertible {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
        var description: String {
            "\(level): \(message) \(metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
        }
    }

    private let lock = NSLock()
    private var entries: [Entry] = []

    var handler: any LogHandler { Handler(recorder: self) }

    var all: [Entry] { lock.withLock { entries } }
    var lines: [String] { all.map(\.description) }

    /// Entries whose message contains `text`.
    func entries(containing text: String) -> [Entry] { all.filter { $0.message.contains(text) } }

    fileprivate func append(_ entry: Entry) {
        lock.withLock { entries.append(entry) }
        FileHandle.standardError.write(Data("broker log: \(entry)\n".utf8))
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var all = metadata
            if let extra = event.metadata { all.merge(extra) { $1 } }
            recorder.append(Entry(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
        }
    }
}
