import Synchronization

/// A value behind a mutex, in a class so it can be shared.
///
/// The one place authload touches `Mutex`: ThreadSanitizer on Linux reports `Synchronization.Mutex`
/// as a race (a false positive), and keeping it behind this wrapper lets a TSan build swap the backing.
/// Critical sections must stay short and never contain an `await`.
public final class Locked<Value: ~Copyable>: Sendable {
    @usableFromInline
    let mutex: Mutex<Value>

    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock(body)
    }
}
