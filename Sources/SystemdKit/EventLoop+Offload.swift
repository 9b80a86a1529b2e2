import Dispatch

extension EventLoop {
    /// Runs `work` on `queue`, off the loop, then `completion` with its result back on the loop
    /// thread: for slow pure work (a password hash) that must not stall the other callbacks.
    ///
    /// `completion`, and whatever it captures (a `MethodCall` kept to reply later, an object of
    /// the loop), never leaves the loop thread: it is boxed here and released on the loop after it
    /// ran, so no sd-bus reference count is touched on `queue`'s thread. Only `work` and its
    /// `Sendable` result cross threads. Call on the loop thread. If the loop stops first,
    /// `completion` never runs.
    public func offload<T: Sendable>(
        to queue: DispatchQueue, _ work: @escaping @Sendable () -> T,
        then completion: @escaping (T) -> Void
    ) {
        let box = UnsafeSendable(Unmanaged.passRetained(CompletionBox(completion)).toOpaque())
        queue.async {
            let result = work()
            self.execute {
                Unmanaged<CompletionBox<T>>.fromOpaque(box.value).takeRetainedValue().completion(result)
            }
        }
    }
}

private final class CompletionBox<T> {
    let completion: (T) -> Void
    init(_ completion: @escaping (T) -> Void) { self.completion = completion }
}
