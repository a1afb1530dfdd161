import AuthloadCore
import Foundation

/// Turns SIGINT and SIGTERM into calls of a handler with the count so far (1 = first signal).
///
/// While one lives, the default action (terminate) is off, so the run can drain and write its report. Relays may
/// overlap (`simulate --threads` runs a shard per thread, each with its own): the default action comes back when the
/// last one is cancelled, so a shard that ends first does not leave the others to be killed by the next signal.
/// `@unchecked Sendable`: `sources` is set once in `init` and only cancelled afterwards, which
/// Dispatch allows from any thread.
final class SignalRelay: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let cancelled = Locked(false)
    /// Relays alive in the process; the signals' dispositions change under this lock.
    private static let live = Locked(0)

    /// Relays SIGINT and SIGTERM to `handler` from the moment it returns.
    ///
    /// Async, so that no thread blocks while the sources arm: they arm on Dispatch's global queues, the threads Swift's
    /// global executor runs on, and two shards that each blocked one of the two (on a 2-core machine) waited a second
    /// for Dispatch to add a thread before either source could arm.
    static func armed(handler: @escaping @Sendable (Int) -> Void) async -> SignalRelay {
        let armed = AsyncFlag()
        let relay = SignalRelay(handler: handler, armed: armed)
        // A source is armed asynchronously; until then the signal meets SIG_IGN and is lost.
        await armed.wait()
        return relay
    }

    /// Sets `armed` once every source is armed.
    private init(handler: @escaping @Sendable (Int) -> Void, armed: AsyncFlag) {
        let count = Locked(0)
        let numbers = [SIGINT, SIGTERM]
        let unarmed = Locked(numbers.count)
        Self.live.withLock { live in
            live += 1
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
        }
        sources = numbers.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                handler(
                    count.withLock { value in
                        value += 1
                        return value
                    })
            }
            source.setRegistrationHandler {
                if unarmed.withLock({ unarmed in
                    unarmed -= 1
                    return unarmed == 0
                }) {
                    armed.set()
                }
            }
            source.resume()
            return source
        }
    }

    /// Stops relaying; the last relay alive gives the signals their default action back. Once is enough.
    func cancel() {
        let first = cancelled.withLock { wasCancelled in
            defer { wasCancelled = true }
            return !wasCancelled
        }
        guard first else { return }
        for source in sources { source.cancel() }
        Self.live.withLock { live in
            live -= 1
            guard live == 0 else { return }
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }

    /// Relays alive now, for tests.
    static var liveCount: Int { live.withLock { $0 } }
}
