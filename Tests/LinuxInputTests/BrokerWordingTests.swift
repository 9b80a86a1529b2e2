import Logging
import SystemdKit
import Testing

@testable import LinuxInput

/// What the broker says for each of the lifecycle's notices, worded for the step that failed:
/// the journal lines operators and the VM tests look for. Pure, runs anywhere.
@Suite struct BrokerWordingTests {
    typealias Notice = NodeLifecycle<Device>.Notice
    static let node: Logger.Metadata = ["device.path": "/dev/input/event3"]

    @Test(
        "each notice at each step: level and words",
        arguments: [
            (
                Notice.escapingLocks(.failed), InputBroker.Step.open, Logger.Level.error,
                "Could not open an input device; its events escape the session's locks until kioskd can take it"
            ),
            (
                .notBrokered(.failed), .open, .warning,
                "Could not open an input device; it is not brokered, and tried again later"
            ),
            (
                .escapingLocks(.busy), .busy, .error,
                "Another process holds the grab of an input device; its events escape the session's locks until kioskd can take it"
            ),
            (
                .notBrokered(.busy), .busy, .warning,
                "Another process holds the grab of an input device; kioskd takes it once it is released"
            ),
            (
                .escapingLocks(.failed), .grab, .error,
                "Could not grab an input device; its events escape the session's locks until kioskd can take it"
            ),
            (
                .notBrokered(.failed), .grab, .warning,
                "Could not grab an input device; it is not brokered, and tried again later"
            ),
            (
                .escapingLocks(.failed), .clone, .error,
                "Could not create the clone of an input device; it is not brokered, and tried again later"
            ),
            (
                .notBrokered(.failed), .clone, .warning,
                "Could not create the clone of an input device; it is not brokered, and tried again later"
            ),
            (.stillNotBrokered(.busy), .busy, .debug, "Tried an input device again; it is still not brokered"),
            (
                .heldSilent, .clone, .error,
                "Could not create the clone of an input device; it is held silent until the session ends"
            ),
            (.heldSilent, .watch, .error, "Could not watch an input device; it is held silent until the session ends"),
            (.releasedToRetry, .watch, .error, "Could not watch an input device; it is released and tried again later"),
            (.heldSilent, .read, .error, "Could not read an input device; it is held silent until the session ends"),
            (.releasedToRetry, .read, .error, "Could not read an input device; it is released and tried again later"),
            (
                .heldSilent, .reload, .error,
                "Could not read an input device again after a change; it is held silent until the session ends"
            ),
            (
                .releasedToRetry, .reload, .error,
                "Could not read an input device again after a change; it is released and tried again later"
            ),
            (
                .heldSilent, .reclone, .error,
                "Could not clone an input device again after a change; it is held silent until the session ends"
            ),
            (
                .releasedToRetry, .reclone, .error,
                "Could not clone an input device again after a change; it is released and tried again later"
            ),
            (
                .heldSilent, .pointerReclone, .error,
                "Could not clone an input device again to hide or show its pointer; it is held silent until the session ends"
            ),
            (
                .releasedToRetry, .pointerReclone, .error,
                "Could not clone an input device again to hide or show its pointer; it is released and tried again later"
            ),
            (.tookGrab, .grab, .info, "Took the grab of an input device another process had held"),
            (.removed, .node, .info, "Input device removed"),
            (.releasedNothingToLock, .change, .info, "Input device changed and has nothing a profile locks; released"),
        ])
    func words(notice: Notice, step: InputBroker.Step, level: Logger.Level, message: String) {
        let line = step.line(notice, Self.node)
        #expect(line.level == level)
        #expect(line.message.description == message)
        #expect(line.metadata["device.path"] == "/dev/input/event3")
    }

    @Test("retries name their reason; the held nodes let go are counted")
    func metadata() {
        #expect(InputBroker.Step.busy.line(.notBrokered(.busy), Self.node).metadata["device.retry"] == "busy")
        #expect(InputBroker.Step.open.line(.stillNotBrokered(.failed), Self.node).metadata["device.retry"] == "failed")
        #expect(InputBroker.Step.watch.line(.heldSilent, Self.node).metadata["device.retry"] == nil)
        let retried = InputBroker.Step.node.line(.releasedHeld(count: 2, retried: true), [:])
        #expect(retried.level == .warning)
        #expect(
            retried.message.description
                == "Released the input devices held silent during the session; they are tried again")
        #expect(retried.metadata == ["device.count": "2"])
        let stopped = InputBroker.Step.node.line(.releasedHeld(count: 1, retried: false), [:])
        #expect(stopped.message.description == "Released the input devices held silent during the session")
    }
}
