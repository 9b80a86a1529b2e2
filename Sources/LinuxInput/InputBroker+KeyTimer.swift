import KioskInput
import Logging
import SystemdKit

import struct SystemPackage.Errno

// Slow keys' deadline (docs/profiles.md#keyboard-access-features): a key held down counts when
// its delay ends, though no event comes then. The filter says when (`InputFilter.keyDeadline`,
// on the events' clock: CLOCK_MONOTONIC, which the broker asks each node for); one timer of the
// loop fires then and lets the filter's time run on (`InputFilter.advance(to:into:)`).

extension InputBroker {
    /// Arms the timer for the filter's next key deadline, or turns it off when none waits.
    /// Out of line: only profiles with slow keys come here.
    @inline(never)
    func armKeyTimer() {
        let due = timesKeys ? filter.keyDeadline : nil
        guard due != keyTimerDue else { return }
        keyTimerDue = due
        // From the input's direct source, sd-event is already armed with its timers: its turn
        // comes before the loop waits again, so that it arms this one (EventLoop.requestCycle).
        loop.requestCycle()
        guard let due else {
            try? keyTimer?.setEnabled(.off)
            return
        }
        let delay = Duration.microseconds(max(0, due - Int64(loop.now(.monotonic))))
        do {
            if let keyTimer {
                try keyTimer.rearm(after: delay)
            } else {
                keyTimer = try loop.addTimer(after: delay, accuracy: .milliseconds(1)) { [unowned self] in
                    keyTimerFired()
                }
            }
        } catch {
            keyTimerDue = nil
            logger.error(
                "Could not arm the slow keys timer; a key held down counts at the next key event instead",
                metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }

    /// The deadline came: the presses whose wait ended go to their clones; the timer is armed
    /// for the next one.
    private func keyTimerFired() {
        keyTimerDue = nil
        filter.advance(to: Int64(loop.now(.monotonic)), into: &output)
        flush()
        armKeyTimer()
    }
}
