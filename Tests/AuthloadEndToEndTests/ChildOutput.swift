import AuthloadCore
import Foundation

/// Reads `handle` (a child's pipe) to its end on a thread of its own, a blocking read at a time, handing each piece to
/// `received`, then sets `ended`.
///
/// Not through `readabilityHandler`: libdispatch's sources on pipes that open and close in quick succession (ten
/// processes in "serve on a port that is taken") crashed the test process now and then, SIGSEGV in libdispatch's own
/// `_dispatch_event_loop_drain` (2 runs in about 52 of that test alone, under load), and a pipe's end that never
/// reached its handler would hang a test until its time limit, as that test and "run writes every report file" did a
/// few times in full runs. A thread that reads to the end leaves libdispatch out of it.
func readToEnd(_ handle: FileHandle, ended: AsyncFlag? = nil, _ received: @escaping @Sendable (String) -> Void) {
    let reader = Thread {
        while true {
            let data = handle.availableData
            if data.isEmpty { break }
            received(String(decoding: data, as: UTF8.self))
        }
        ended?.set()
    }
    reader.name = "authload-test-pipe"
    reader.start()
}
