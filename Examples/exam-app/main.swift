// exam-app: an exam app that locks the kiosk to itself while the exam runs (docs/client.md,
// as iOS's UIAccessibilityRequestGuidedAccessSession). It registers, requests a session of the
// profile made for it (`app = "org.example.Exam"`, `[session] app-may-request = true`), runs
// the exam (here: until SIGTERM or `EXAM_SECONDS`), then releases the session. If it crashed,
// the session would stay: an exam app that crashes must not unlock the exam (staff end it with
// the passcode).
import Dispatch
import Foundation
import Glibc
import KioskClient

let appID = "org.example.Exam"
let profile = ProcessInfo.processInfo.environment["EXAM_PROFILE"] ?? "exam"
let seconds = Int(ProcessInfo.processInfo.environment["EXAM_SECONDS"] ?? "") ?? 3600

func say(_ text: String) {
    FileHandle.standardOutput.write(Data("exam: \(text)\n".utf8))
}

/// SIGTERM or SIGINT (the exam stopped early), or the exam's time, whichever comes first.
func examOver(after seconds: Int) -> AsyncStream<Void> {
    AsyncStream { continuation in
        // Dispatch sources are not Sendable; these are only ever cancelled, when the stream ends.
        nonisolated(unsafe) let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)  // Dispatch takes it instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { @Sendable in continuation.yield() }
            source.resume()
            return source
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { continuation.yield() }
        continuation.onTermination = { _ in sources.forEach { $0.cancel() } }
    }
}

let over = examOver(after: seconds)

let target: BusTarget = .system
let client = try await GuidedAccessClient.connect(to: target)
try await client.register(appID: appID, restrictions: [])
let manager = try KioskManager.connect(to: target)
do {
    try await manager.requestSession(appID: appID, profile: profile)
} catch {
    say("could not lock the kiosk for the exam: \(error)")
    exit(1)
}
// The client hears the session start with the signal that follows the reply.
for await state in client.sessionStates() where state == .active { break }
say("the kiosk is locked to the exam (session for this app: \(client.sessionIsForThisApp))")
for await _ in over { break }
try await manager.releaseSession(appID: appID)
say("the exam is over; the kiosk is released")
manager.close()
await client.close()
