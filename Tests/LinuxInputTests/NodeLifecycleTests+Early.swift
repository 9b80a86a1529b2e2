import Foundation
import Testing

@testable import LinuxInput

/// The window before the grab: nodes grabbed on the kernel's uevent, held until udev's record.
@Suite("Early grabs on the kernel's uevent: lifecycle and datagrams (pure, runs anywhere)")
struct EarlyGrabLifecycleTests {
    static func uevent(_ syspath: String, action: String = "add") -> KernelUevent {
        KernelUevent(
            action: action, devpath: String(syspath.dropFirst("/sys".count)), subsystem: "input",
            devname: "input/event9", major: 13, minor: 73)
    }

    @Test("the kernel's add grabs a new node at once; udev's add then attempts it as ever, on that grab")
    func kernelAddThenUdevAdd() {
        var driver = Driver()
        let actions = driver.run(driver.lifecycle.kernelAdded(Self.uevent(a)))
        #expect(actions == [.grabEarly(Self.uevent(a))])
        #expect(driver.lifecycle.awaitingUdev == [a])
        #expect(driver.grabbed == [a])
        // A second kernel add of the same node (a replay) grabs nothing more.
        #expect(driver.lifecycle.kernelAdded(Self.uevent(a)) == [])
        // udev's record completes the decision.
        driver.add(a)
        #expect(driver.lifecycle.awaitingUdev.isEmpty)
        #expect(driver.state(a) == .brokered)
    }

    @Test("a node removed before udev's record is let go; the broker stopping lets go of every waiting node")
    func removedOrStoppedWhileWaiting() {
        var driver = Driver()
        driver.run(driver.lifecycle.kernelAdded(Self.uevent(a)))
        driver.run(driver.lifecycle.kernelAdded(Self.uevent(b)))
        #expect(driver.run(driver.lifecycle.removed(a)) == [.release(a)])
        #expect(driver.lifecycle.awaitingUdev == [b])
        #expect(driver.lifecycle.removed(a) == [])  // udev's remove after the kernel's
        let stop = driver.run(driver.lifecycle.stop())
        #expect(stop.contains(.release(b)))
        #expect(driver.grabbed.isEmpty && driver.lifecycle.awaitingUdev.isEmpty)
    }

    @Test("an early grab that fails is forgotten: udev's add tries the node as ever; known nodes are not grabbed early")
    func failedOrKnown() {
        var driver = Driver()
        driver.earlyGrabFails = true
        driver.run(driver.lifecycle.kernelAdded(Self.uevent(a)))
        #expect(driver.lifecycle.awaitingUdev.isEmpty && driver.grabbed.isEmpty)
        driver.add(a)
        #expect(driver.state(a) == .brokered)
        // Brokered (or in any other state): a kernel add is no news.
        #expect(driver.lifecycle.kernelAdded(Self.uevent(a)) == [])
    }

    @Test("a kernel uevent datagram: the evdev node, its syspath and devnum; udev's messages and other nodes are not")
    func datagrams() throws {
        let text =
            "add@/devices/virtual/input/input7/event3\0ACTION=add\0DEVPATH=/devices/virtual/input/input7/event3\0SUBSYSTEM=input\0MAJOR=13\0MINOR=67\0DEVNAME=input/event3\0SEQNUM=2371\0"
        let uevent = try #require(KernelUevent(datagram: Array(text.utf8)))
        #expect(uevent.action == "add")
        #expect(uevent.syspath == "/sys/devices/virtual/input/input7/event3")
        #expect(uevent.eventNode == "/dev/input/event3")
        // Unwrapped first: Swift 6.2.3 crashes compiling this comparison with the optional.
        let devnum = try #require(uevent.devnum)
        #expect(devnum == 13 << 8 | 67)
        let parent =
            "add@/devices/virtual/input/input7\0ACTION=add\0DEVPATH=/devices/virtual/input/input7\0SUBSYSTEM=input\0"
        #expect(KernelUevent(datagram: Array(parent.utf8))?.eventNode == nil)
        let mouse = text.replacingOccurrences(of: "input/event3", with: "input/mouse0")
        #expect(KernelUevent(datagram: Array(mouse.utf8))?.eventNode == nil)
        #expect(KernelUevent(datagram: Array("libudev\0\u{1}garbage".utf8)) == nil)
        let escape = text.replacingOccurrences(of: "DEVNAME=input/event3", with: "DEVNAME=input/event3/../../sda")
        #expect(KernelUevent(datagram: Array(escape.utf8))?.eventNode == nil)
        // The one the broker parses at start to warm that code up goes all the way, as a real add.
        let sample = try #require(KernelUevent(datagram: InputBroker.sampleUevent))
        #expect(sample.action == "add")
        #expect(sample.eventNode == "/dev/input/event0")
    }
}
