import KioskCore
import KioskStore
import Logging
import SystemPackage
import SystemdKit

/// Whether the state reaches the disk (docs/state-store.md § When the disk fails): every save's
/// outcome, the changes kept in memory although their save failed and their copy in the runtime
/// directory, the retries, the `StateStorage` property and the journal's two lines.
extension ManagerObject {
    // MARK: StateStorage

    var storageProperties: [BusProperty] {
        [
            BusProperty(Member.stateStorage, "(ts)") { [unowned self] in
                .structure([
                    .uint64(UInt64(max(0, storage.failingSince?.microseconds ?? 0))), .string(storage.description),
                ])
            }
        ]
    }

    /// What `StateStorage` says: "" while saves work.
    public var storageProblem: String { storage.description }

    /// kioskd started with a state directory it could not write (`error`, from the start's
    /// save or probe); `unsaved`: the state in memory holds more than the disk (the runtime
    /// directory's copy, a trial ended by the reboot). Logged once, and retried.
    public func startedWithoutStorage(_ error: StoreError, unsaved: Bool) {
        stateSaveFailed(error)
        if unsaved { keptUnsaved() }
    }

    /// A save succeeded: what memory holds is on disk, its runtime copy is removed, retries stop.
    func stateSaved() {
        let hadUnsaved = storage.hasUnsaved
        let transition = storage.saved()
        if hadUnsaved { pendingStore?.remove() }
        retryTimer?.cancel()
        retryTimer = nil
        if transition == .recovered {
            logger.notice(
                "Saving the state works again",
                metadata: MessageID.stateSaved.metadata.merging(["store.path": "\(store.path)"]) { $1 })
            emitPropertiesChanged([Member.stateStorage])
        }
    }

    /// A save failed with `error`: the first failure is logged (once until saves work again),
    /// `StateStorage` says why, and a retry is armed.
    func stateSaveFailed(_ error: any Error, retry: Bool = false) {
        let text = Self.kioskError(error).message.replacingPrefix("The change was not made: ")
        let before = storage
        if storage.failed(text, at: displayTime(clock.now()), retry: retry) == .broke {
            logger.error(
                "Saving the state fails; changes are refused until it works again",
                metadata: MessageID.stateSaveFailing.metadata.merging([
                    "store.path": "\(store.path)", "error": "\(text)",
                ]) { $1 })
        }
        if storage != before { emitPropertiesChanged([Member.stateStorage]) }
        armSaveRetry()
    }

    /// A change that only tightens was made although its save failed (`state` holds it): a copy
    /// goes to the runtime directory, so that a restart within this boot keeps it.
    func keptUnsaved() {
        var shadowError: String?
        if let pendingStore {
            do {
                try pendingStore.save(state)
            } catch {
                shadowError = Self.kioskError(error).message.replacingPrefix("The change was not made: ")
                if storage.shadowProblem.isEmpty {
                    logger.error(
                        "Could not keep the unsaved state in the runtime directory",
                        metadata: ["store.path": "\(pendingStore.path)", "error": "\(shadowError ?? "")"])
                }
            }
        } else {
            shadowError = "no runtime directory"
        }
        if shadowError == nil, !storage.shadowProblem.isEmpty {
            logger.notice(
                "The runtime directory keeps the unsaved state again",
                metadata: ["store.path": "\(pendingStore?.path ?? "")"])
        }
        let before = storage
        storage.keptUnsaved(shadowError: shadowError)
        if storage != before { emitPropertiesChanged([Member.stateStorage]) }
        armSaveRetry()
    }

    /// Arms the retry (1 s, doubling up to 60 s) unless it is armed: the state in memory is
    /// saved again, in turn with the other changes, until a save works.
    func armSaveRetry() {
        guard retryTimer == nil, !isStopping, let delay = storage.retryDelay else { return }
        retryTimer = try? loop.addTimer(after: delay, accuracy: .milliseconds(50)) { [unowned self] in
            retryTimer = nil
            retrySave()
        }
    }

    private func retrySave() {
        writer.submit(
            .urgent,
            { [unowned self] in
                guard storage.retryDelay != nil else { return nil }  // a change's save worked meanwhile
                return checkpointedWrite(of: machine) { [unowned self] _, error, _ in
                    stateSaveFailed(error, retry: true)
                }
            }, dropped: { _ in })
    }

    /// A save of `machine` with the kiosk clock checkpointed, as the urgent lane's writes make
    /// it (the save retry, the session's time): once durable, it is committed with its browser
    /// files, ``stateSaved()`` runs and then `saved`; a failed save runs `failed` with the
    /// checkpointed machine, the error, and, when the change is `keptIfSaveFails`, what writing
    /// the browsers' files did (off the loop, as after a save).
    func checkpointedWrite(
        of machine: SessionMachine, keptIfSaveFails: Bool = false, saved: @escaping () -> Void = {},
        failed: @escaping (SessionMachine, any Error, (any Sendable)?) -> Void
    ) -> StateWriter<KioskState>.Write {
        var next = machine
        next.state = checkpointed(next.state)
        return StateWriter.Write(
            state: next.state, afterSave: browserWrite(for: next),
            durable: { [unowned self] written in
                commit(next, browserFiles: .written(written))
                stateSaved()
                saved()
            },
            failed: { error, written in failed(next, error, written) }, keptIfSaveFails: keptIfSaveFails)
    }
}

extension String {
    fileprivate func replacingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
