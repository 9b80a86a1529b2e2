import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// No uid can block an admin or the passcode, nor make anyone else wait.
@Suite(.serialized) struct KioskdFloodTests {
    /// What nobody runs: `count` RegisterApplication calls sent at once without waiting for a
    /// reply, "fired" once they are all sent, then "done N" when every reply is in.
    static func flood(count: Int) -> String {
        Python.preamble + """
            count = \(count)
            replies = []
            def answered(*args):
                replies.append(1)
                if len(replies) == count:
                    print("done", len(replies), flush=True)
                    loop.quit()
            loop = GLib.MainLoop()
            for n in range(count):
                m.RegisterApplication("org.example.Flood%d" % (n % 8),
                                      [("org.example.Flood%d.r" % (n % 8), "title %d" % n, "")],
                                      reply_handler=answered, error_handler=answered, timeout=120)
            print("fired", flush=True)
            loop.run()
            """
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to flood as nobody through setpriv"))))
    func underAFloodFromNobodyTheAdminAndThePasscodeGetThroughAndEveryWrongPasscodeCounts_needsRoot() throws {
        try withKioskd(profiles: ["museum": KioskdSessionTests.museum]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])

            let flood = try BackgroundTool(
                "/usr/bin/setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                    Self.flood(count: 1000),
                    bus.address,
                ], directory: bus.directory)
            defer { flood.stop() }
            #expect(flood.waitUntil(timeout: .seconds(30)) { $0.contains("fired") }, "\(flood.output)")

            // 1,000 calls from nobody are in flight: root's calls come behind them on the bus.
            var start = ContinuousClock.now
            try client.call("ForceEndSession")
            let forceEnd = ContinuousClock.now - start
            try client.call("StartSession", [.string("museum")])
            let wrong = 3
            for _ in 0..<wrong {
                #expect(client.errorName("EndSession", [.string("0000")]) == KioskError.Code.wrongPasscode.dbusName)
            }
            start = ContinuousClock.now
            try client.call("EndSession", [.string("1234")])
            let endWithPasscode = ContinuousClock.now - start
            #expect(forceEnd < .seconds(1), "ForceEndSession took \(forceEnd)")
            #expect(endWithPasscode < .seconds(1), "EndSession took \(endWithPasscode)")
            print("flood of 1,000 from nobody: ForceEndSession \(forceEnd), EndSession \(endWithPasscode)")

            #expect(flood.waitUntil(timeout: .seconds(120)) { $0.contains("done") }, "\(flood.output)")
            // Every wrong passcode counted: 3, and root's right passcode then reset root's count.
            let log = kioskd.log
            #expect(log.components(separatedBy: "Wrong passcode").count - 1 == wrong, "\(log.suffix(2000))")
            #expect(try client.property("SessionState") == .string("inactive"))
            // And the journal was not flooded: of nobody's registrations, at most a minute's burst.
            let nobodys = log.split(separator: "\n").filter {
                $0.contains("Application registered") && $0.contains("65534")
            }
            #expect(nobodys.count > 0 && nobodys.count <= RepeatLimiter().burst, "\(nobodys.count) lines")
        }
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to guess as nobody through setpriv"))))
    func nobodysWrongPasscodesThrottleNobodyButNotTheAdmin_needsRoot() throws {
        try withKioskd(profiles: ["museum": KioskdSessionTests.museum]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            let guesses = try Python.run(
                "print(' '.join(error_name(m.EndSession, '%04d' % n).split('.')[-1] for n in range(7)))",
                bus: bus, as: 65534)
            #expect(
                guesses.stdout
                    == "WrongPasscode WrongPasscode WrongPasscode WrongPasscode WrongPasscode WrongPasscode Throttled\n",
                "\(guesses)")
            // Root's count is its own: the right passcode ends the session at once.
            try client.call("EndSession", [.string("1234")])
            #expect(try client.property("SessionState") == .string("inactive"))
            // And nobody is still throttled.
            try client.call("StartSession", [.string("museum")])
            let again = try Python.run("print(error_name(m.EndSession, '1234'))", bus: bus, as: 65534)
            #expect(again.stdout == "\(KioskError.Code.throttled.dbusName)\n", "\(again)")
            #expect(kioskd.stateBytes.map { String(decoding: $0, as: UTF8.self).contains("\"uid 65534\"") } == true)
        }
    }
}
