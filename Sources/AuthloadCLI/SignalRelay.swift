import AuthloadCore
import Foundation

/// Turns SIGINT and SIGTERM into calls of a handler with the count so far (1 = first signal).
///
/// While it lives, the default action (terminate) is off, so the run can drain and write its report.
/// `@unchecked Sendable`: `sources` is set once in `init` and only cancelled afterwards, which
/// Dispatch allows from any thread.
final class SignalRelay: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(handler: @escaping @Sendable (Int) -> Void) {
        let count = Locked(0)
        let armed = DispatchSemaphore(value: 0)
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                handler(
                    count.withLock { value in
                        value += 1
                        return value
                    })
            }
            source.setRegistrationHandler { armed.signal() }
            source.resume()
            return source
        }
        // A source is armed asynchronously; until then the signal meets SIG_IGN and is lost.
        for _ in sources { _ = armed.wait(timeout: .now() + .seconds(2)) }
    }

    func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
