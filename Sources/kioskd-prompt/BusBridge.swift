import KioskClient
import Synchronization

/// The bus side: KioskClient's `KioskManager` on the system bus (or `$DBUS_SYSTEM_BUS_ADDRESS`),
/// its events handed to GTK's thread as they come. It connects again after losing the bus, and
/// waits for one while there is none: the display is never needed (staff can type the passcode
/// blind), so it must not give up either.
final class BusBridge: Sendable {
    private let manager = Mutex<KioskManager?>(nil)

    /// Follows kioskd for good; `deliver` runs on GTK's thread, in order.
    func run(deliver: @escaping @MainActor @Sendable (ManagerEvent) -> Void) async {
        var reported = false
        while true {
            guard let connected = try? KioskManager.connect() else {
                if !reported { log("No system bus yet: waiting for it.") }
                reported = true
                try? await Task.sleep(for: .seconds(2))
                continue
            }
            reported = false
            manager.withLock { $0 = connected }
            for await event in await connected.events() {
                GLibMain.post { MainActor.assumeIsolated { deliver(event) } }
            }
            // The stream ended after .disconnected (already delivered: the window is gone).
            manager.withLock { $0 = nil }
            connected.close()
            log("The bus connection was lost: connecting again.")
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Reads `DrawingBar`; `deliver` gets the buttons, or nil when kioskd could not say.
    func readBar(deliver: @escaping @MainActor @Sendable ([KioskDrawing.Button]?) -> Void) {
        read("the drawing's bar (DrawingBar)", { try await $0.drawingBar() }, deliver: deliver)
    }

    /// Reads `PromptPad`; `deliver` gets the keys, or nil when kioskd could not say.
    func readPad(deliver: @escaping @MainActor @Sendable ([KioskPrompt.Key]?) -> Void) {
        read("the PIN pad (PromptPad)", { try await $0.promptPad() }, deliver: deliver)
    }

    /// Reads what `body` reads off the bus task; `deliver` gets it on GTK's thread, or nil (and
    /// the log says why) when kioskd could not say.
    private func read<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (KioskManager) async throws -> T,
        deliver: @escaping @MainActor @Sendable (T?) -> Void
    ) {
        let current = manager.withLock { $0 }
        Task.detached {
            var value: T?
            do {
                if let current { value = try await body(current) }
            } catch {
                log("Could not read \(what): \(error)")
            }
            GLibMain.post { [value] in MainActor.assumeIsolated { deliver(value) } }
        }
    }
}
