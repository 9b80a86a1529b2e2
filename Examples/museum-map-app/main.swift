// museum-map-app — a kiosk app using KioskClient, as documentation.
//
// It declares the restrictions that policies/museum-map.toml presets, then prints a line
// whenever kioskd tells it something: a restriction changed, the session changed, the exit
// gesture was seen, the time limit is near. SIGTERM or SIGINT ends it.
//
//   DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/bus .build/debug/museum-map-app

import Dispatch
import Foundation
import KioskClient

/// The map's restrictions, declared the way an iOS app declares its Guided Access ones.
final class MuseumMap: GuidedAccessRestrictionDelegate {
    let guidedAccessRestrictionIdentifiers: [String]? = [
        "org.example.MuseumMap.controls",
        "org.example.MuseumMap.zoom",
    ]

    func textForGuidedAccessRestriction(withIdentifier id: String) -> String? {
        id.hasSuffix(".controls") ? "Admin controls" : "Zoom"
    }

    func detailTextForGuidedAccessRestriction(withIdentifier id: String) -> String? {
        id.hasSuffix(".controls")
            ? "The settings gear and the layer picker, for museum staff."
            : "Pinch, or use the + and - buttons, to zoom the floor map."
    }

    func guidedAccessRestriction(withIdentifier id: String, didChange state: RestrictionState) {
        say("told that \(id) is now \(state.rawValue)")  // a real app would show or hide the control
    }
}

/// Prints a line at once (stdout may be a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("museum-map: \(line)\n".utf8))
}

/// The signals that end the app, as a stream.
func terminationSignals() -> AsyncStream<Int32> {
    AsyncStream { continuation in
        // Dispatch sources are not Sendable; these are only ever cancelled, when the stream ends.
        nonisolated(unsafe) let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)  // Dispatch takes it instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in continuation.yield(number) }
            source.resume()
            return source
        }
        continuation.onTermination = { _ in sources.forEach { $0.cancel() } }
    }
}

let signals = terminationSignals()
let client = try await GuidedAccessClient.connect()
let map = MuseumMap()
do {
    try await client.register(appID: "org.example.MuseumMap", delegate: map)
    for id in map.guidedAccessRestrictionIdentifiers ?? [] {
        say("\(id) is \(client.state(for: id)?.rawValue ?? "unknown")")
    }
} catch let error as KioskClientError where error.code == .notRunning {
    say("kioskd is not running; registering as soon as it starts")
}

let listening = Task {
    await withDiscardingTaskGroup { group in
        group.addTask {
            for await state in client.sessionStates() { say("the session is \(state.rawValue)") }
        }
        group.addTask {
            for await event in client.events() {
                switch event {
                case .exitRequested:
                    // kioskd reads the passcode itself now (its prompt is open: PromptState) and
                    // kioskd-prompt draws it; an app that draws its own prompt reads PromptLength
                    // and PromptPad and hears PromptClosed. It never sees a key of the passcode.
                    say("exit requested: kioskd's passcode prompt is open; staff type the PIN at the kiosk")
                case .timeLimitWarning(let seconds): say("time limit warning: \(seconds) s left")
                case .daemonStopped: say("kioskd stopped; keeping the last states")
                case .daemonStarted: say("kioskd is back")
                default: break  // restriction changes reach the delegate; session states the loop above
                }
            }
        }
    }
}

for await signal in signals {
    say("got signal \(signal), exiting")
    break
}
await client.close()  // ends the streams
await listening.value
